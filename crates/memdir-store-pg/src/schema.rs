//! The crate's tables, created and upgraded on connect.
//!
//! Every migration runs once, in order, inside one transaction that first takes a
//! transaction-scoped advisory lock: two processes connecting to a fresh database at the same
//! moment serialise there, and the second finds the work done. A database whose schema is newer
//! than this build is refused rather than written with assumptions that no longer hold.

use crate::db_err;
use crate::held::Tx;
use memdir_store::StoreError;
use tokio_postgres::Client;

/// The migrations, oldest first; a migration's number is its index plus one. Never edit one that
/// has shipped: add another.
const MIGRATIONS: &[&str] = &[
    // 1: tenants, files and folders as rows, memdir's own files, the version sequence.
    r#"
CREATE TABLE memdir.tenants (
    tenant      text PRIMARY KEY,
    created_ms  bigint NOT NULL
);
-- One row per file or folder. A folder's row makes empty folders real, as on disk; a file's
-- parents always have rows, so "is a parent a file?" is one lookup.
CREATE TABLE memdir.files (
    tenant      text NOT NULL,
    path        text COLLATE "C" NOT NULL,
    parent      text COLLATE "C" NOT NULL,
    is_dir      boolean NOT NULL,
    content     bytea NOT NULL,
    size        bigint GENERATED ALWAYS AS (octet_length(content)) STORED,
    modified_ms bigint NOT NULL,
    -- The content's version (its git blob id) when known; NULL after an append, computed on read.
    version     text,
    PRIMARY KEY (tenant, path)
);
CREATE INDEX files_by_parent ON memdir.files (tenant, parent, path);
CREATE TABLE memdir.meta (
    tenant  text NOT NULL,
    name    text NOT NULL,
    content bytea NOT NULL,
    PRIMARY KEY (tenant, name)
);
-- History. A file's content before its first write since the last recorded change, written in
-- the same statement or transaction as that write; `existed` false for a file that was absent.
CREATE TABLE memdir.pending (
    tenant  text NOT NULL,
    path    text COLLATE "C" NOT NULL,
    existed boolean NOT NULL,
    content bytea NOT NULL,
    PRIMARY KEY (tenant, path)
);
-- One row per recorded change; `id` is 40 hex digits like a git commit id.
CREATE TABLE memdir.changes (
    seq     bigserial PRIMARY KEY,
    tenant  text NOT NULL,
    id      text COLLATE "C" NOT NULL,
    at_s    bigint NOT NULL,
    writer  text NOT NULL,
    source  text,
    summary text NOT NULL,
    reason  text,
    message text NOT NULL,
    UNIQUE (tenant, id)
);
CREATE INDEX changes_by_tenant ON memdir.changes (tenant, seq);
-- The files a change touched: SHA-256 of the content before and after (NULL: absent).
CREATE TABLE memdir.change_files (
    seq    bigint NOT NULL REFERENCES memdir.changes ON DELETE CASCADE,
    tenant text NOT NULL,
    path   text COLLATE "C" NOT NULL,
    before bytea,
    after  bytea,
    PRIMARY KEY (seq, path)
);
CREATE INDEX change_files_by_path ON memdir.change_files (tenant, path, seq);
-- Every content a change recorded, once.
CREATE TABLE memdir.blobs (
    tenant  text NOT NULL,
    hash    bytea NOT NULL,
    content bytea NOT NULL,
    PRIMARY KEY (tenant, hash)
);
CREATE FUNCTION memdir.now_ms() RETURNS bigint LANGUAGE sql VOLATILE
    AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
-- Advisory lock keys: one 64-bit space shared with every other user of the database, so every
-- key memdir takes is namespaced by purpose and tenant before it is hashed.
CREATE FUNCTION memdir.lock_key(purpose text, tenant text, name text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT hashtextextended('memdir/' || purpose || '/' || tenant || '/' || name, 0) $$;
"#,
    // 2: a memory service's credentials: one bearer token (its SHA-256) and principal per tenant.
    r#"
CREATE TABLE memdir.credentials (
    tenant       text PRIMARY KEY REFERENCES memdir.tenants ON DELETE CASCADE,
    principal    text NOT NULL,
    token_sha256 text NOT NULL UNIQUE,
    created_ms   bigint NOT NULL,
    token_set_ms bigint NOT NULL
);
"#,
    // 3: the vector index (semantic search) of memories whose vectors live in the database.
    r#"
CREATE SEQUENCE memdir.vector_builds;
-- The build searches read, and a counter every change to its chunks bumps.
CREATE TABLE memdir.vector_live (
    tenant text PRIMARY KEY,
    build  bigint NOT NULL,
    gen    bigint NOT NULL
);
-- The model, chunking and vector length a build was made with.
CREATE TABLE memdir.vector_meta (
    tenant text NOT NULL,
    build  bigint NOT NULL,
    key    text NOT NULL,
    value  text NOT NULL,
    PRIMARY KEY (tenant, build, key)
);
-- A file as it was embedded; `gen` is the live counter of its last write.
CREATE TABLE memdir.vector_files (
    tenant   text NOT NULL,
    build    bigint NOT NULL,
    path     text COLLATE "C" NOT NULL,
    size     bigint NOT NULL,
    mtime_ns bigint NOT NULL,
    hash     text NOT NULL,
    date     text,
    gen      bigint NOT NULL,
    PRIMARY KEY (tenant, build, path)
);
-- A chunk: its first line, the text a hit shows, the embedding (little-endian f32).
CREATE TABLE memdir.vector_chunks (
    tenant text NOT NULL,
    build  bigint NOT NULL,
    path   text COLLATE "C" NOT NULL,
    line   bigint NOT NULL,
    shown  bytea NOT NULL,
    vec    bytea NOT NULL,
    FOREIGN KEY (tenant, build, path) REFERENCES memdir.vector_files ON DELETE CASCADE
);
CREATE INDEX vector_chunks_by_file ON memdir.vector_chunks (tenant, build, path);
"#,
    // 4: history that costs what changed. One row per change; its files are reverse deltas
    // against the content after it (`delta.rs`), so the newest content is only ever the file
    // itself. `after` (below) carries `changes`, `change_files` and `blobs` over and drops them.
    // A `config.toml` is kept as its delta from the template (settings.rs), not 1.7 KB a tenant.
    r#"
-- A tenant's number: what history rows are keyed by, 4 bytes where a name may take 128.
ALTER TABLE memdir.tenants ADD COLUMN id integer GENERATED BY DEFAULT AS IDENTITY UNIQUE;
CREATE FUNCTION memdir.tenant_id(name text) RETURNS integer LANGUAGE sql STABLE
    AS $$ SELECT id FROM memdir.tenants WHERE tenant = name $$;
CREATE SEQUENCE memdir.history_seq;
SELECT setval('memdir.history_seq', coalesce((SELECT max(seq) FROM memdir.changes), 0) + 1, false);
CREATE TABLE memdir.history (
    seq       bigint NOT NULL,
    at_s      bigint NOT NULL,
    tenant_id integer NOT NULL,
    writer    text NOT NULL,
    source    text,
    -- The summary, or (when it is "OP PATH" for the change's one file) only OP.
    op        text,
    summary   text,
    reason    text,
    -- A change recorded before this table keeps its id; a newer one's is derived from
    -- (tenant, seq), so it costs no bytes.
    id        bytea,
    -- The files it touched: each one's path and content before, as a reverse delta.
    files     bytea NOT NULL,
    PRIMARY KEY (tenant_id, seq)
);
-- Settings as a delta from the template they started as (settings.rs): the templates, once each.
CREATE TABLE memdir.defaults (
    hash    bytea PRIMARY KEY,
    content bytea NOT NULL
);
ALTER TABLE memdir.meta ALTER COLUMN content DROP NOT NULL;
ALTER TABLE memdir.meta ADD COLUMN base bytea, ADD COLUMN delta bytea;
"#,
    // 5: admin at scale: the tenant list read a page at a time in name (byte) order through an
    // index, and token digests as their 32 bytes rather than 64 hex characters.
    r#"
CREATE INDEX credentials_by_name ON memdir.credentials (tenant COLLATE "C");
ALTER TABLE memdir.credentials ADD COLUMN token_digest bytea;
UPDATE memdir.credentials SET token_digest = decode(token_sha256, 'hex');
ALTER TABLE memdir.credentials
    ALTER COLUMN token_digest SET NOT NULL,
    ADD CONSTRAINT credentials_token_digest_key UNIQUE (token_digest),
    DROP COLUMN token_sha256;
"#,
    // 6: the person's page of a service: sign-in codes and sessions (see signins.rs).
    crate::signins::MIGRATION,
    // 7: each tenant's gate secrets, outside its files (see keys.rs).
    crate::keys::MIGRATION,
    // 8: when each registered tenant's sweep is due, and which instance holds it (tenants.rs).
    r#"
CREATE TABLE memdir.sweeps (
    tenant   text PRIMARY KEY REFERENCES memdir.tenants ON DELETE CASCADE,
    due_ms   bigint NOT NULL DEFAULT 0,
    lease_ms bigint NOT NULL DEFAULT 0
);
CREATE INDEX sweeps_due ON memdir.sweeps (due_ms);
INSERT INTO memdir.sweeps (tenant) SELECT tenant FROM memdir.credentials ON CONFLICT DO NOTHING;
"#,
    // 9: a number as postcard's unsigned varint (LEB128), so a change's log append and its
    // history record are one statement: the record's delta is the length the file had, which
    // only the database knows (history.rs, `append_and_record`).
    r#"
CREATE FUNCTION memdir.uvarint(n bigint) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    out bytea := '';
BEGIN
    LOOP
        IF n < 128 THEN
            RETURN out || set_byte('\x00'::bytea, 0, n::int);
        END IF;
        out := out || set_byte('\x00'::bytea, 0, ((n & 127) | 128)::int);
        n := n >> 7;
    END LOOP;
END
$$;
"#,
    // 10: the sweep's schedule generalised to every job the service runs for a tenant (tenants.rs):
    // one row per (tenant, job), `holder` the instance whose lease it is. The sweep rows carry
    // forward as they were; every registered tenant gets a consolidation row, never run.
    r#"
CREATE TABLE memdir.jobs (
    tenant   text NOT NULL REFERENCES memdir.tenants ON DELETE CASCADE,
    job      text NOT NULL,
    due_ms   bigint NOT NULL DEFAULT 0,
    lease_ms bigint NOT NULL DEFAULT 0,
    holder   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, job)
);
CREATE INDEX jobs_due ON memdir.jobs (job, due_ms);
INSERT INTO memdir.jobs (tenant, job, due_ms, lease_ms)
    SELECT tenant, 'sweep', due_ms, lease_ms FROM memdir.sweeps;
INSERT INTO memdir.jobs (tenant, job) SELECT tenant, 'consolidate' FROM memdir.credentials
    ON CONFLICT DO NOTHING;
DROP TABLE memdir.sweeps;
"#,
];

/// The schema version this build writes.
pub(crate) const LATEST: i32 = MIGRATIONS.len() as i32;

/// Brings the database's `memdir` schema up to [`LATEST`].
pub(crate) async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    if current(client).await? == LATEST {
        return Ok(());
    }
    let raw = client.transaction().await.map_err(db_err)?;
    // Unnamed statements (see held.rs), as everywhere: a named one outlives this process on
    // a pooler's server connection when its close is never sent.
    let tx = Tx::Raw(&raw);
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('memdir/migrate', 0))",
        &[],
    )
    .await
    .map_err(db_err)?;
    raw.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS memdir;
         CREATE TABLE IF NOT EXISTS memdir.migrations (
             version    integer PRIMARY KEY,
             applied_ms bigint NOT NULL
         );",
    )
    .await
    .map_err(db_err)?;
    let done: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM memdir.migrations",
            &[],
        )
        .await
        .map_err(db_err)?
        .get(0);
    check_known(done)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(done as usize) {
        raw.batch_execute(sql).await.map_err(db_err)?;
        after(i as i32 + 1, &raw).await?;
        tx.execute(
            "INSERT INTO memdir.migrations (version, applied_ms)
             VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
            &[&(i as i32 + 1)],
        )
        .await
        .map_err(db_err)?;
    }
    drop(tx);
    raw.commit().await.map_err(db_err)
}

/// What a migration does that its SQL cannot, in the same transaction, right after it.
async fn after(version: i32, tx: &tokio_postgres::Transaction<'_>) -> Result<(), StoreError> {
    match version {
        4 => {
            crate::history::carry_forward(tx).await?;
            crate::settings::carry_forward(tx).await
        }
        _ => Ok(()),
    }
}

/// The schema version in the database (0 when there is none), refusing one newer than this build.
async fn current(client: &Client) -> Result<i32, StoreError> {
    // Unnamed statements (see held.rs): this runs outside a transaction, perhaps via a pooler.
    let exists: bool = client
        .query_typed_one("SELECT to_regclass('memdir.migrations') IS NOT NULL", &[])
        .await
        .map_err(db_err)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: i32 = client
        .query_typed_one(
            "SELECT coalesce(max(version), 0) FROM memdir.migrations",
            &[],
        )
        .await
        .map_err(db_err)?
        .get(0);
    check_known(v)?;
    Ok(v)
}

fn check_known(v: i32) -> Result<(), StoreError> {
    if v > LATEST {
        return Err(StoreError::Unavailable(format!(
            "the database's memdir schema is version {v}, newer than this memdir knows ({LATEST}): upgrade memdir"
        )));
    }
    Ok(())
}
