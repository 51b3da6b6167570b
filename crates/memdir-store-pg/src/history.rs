//! History in tables: the PostgreSQL side of [`History`].
//!
//! Every store write records, in the same statement or transaction as the write, the file's
//! content before the first write since the last record (`memdir.pending`). [`History::commit`]
//! turns those rows into one row of `memdir.history`: who, when, why, and each touched file's
//! content before the change as a reverse delta against its content after (`delta.rs`). The
//! newest content is the file itself, so an append stores no bytes of the day again.
//!
//! Inside a change (`held.rs`) the record runs in the change's transaction, which already holds
//! the history lock; a change that is one log append to an existing file, with nothing else
//! pending, skips `pending` altogether: the append and its history row are one statement
//! ([`Db::append_and_record`]).
//!
//! Reading walks backwards: a file's content after its newest change is the file now (or, while a
//! change is under way, its `pending` copy), and each older version is the one after it with the
//! later change's delta applied. The walk is exact because a record holds the tenant's tree lock
//! and every touched file's row lock, so no write slips between the content a record reads and
//! the content the next one starts from. History, blame and revert answer in the same shape as
//! the git history of a folder.

use crate::delta::{self, Before, Rev};
use crate::held::{Handle, Tx};
use crate::{Db, db_err};
use memdir_core::forget::{Forget, Scrub};
use memdir_core::path::MemPath;
use memdir_store::history::{
    BlameLine, BlameWho, Changes, FileChange, ForgetReport, HAND_EDIT, HistoryEntry, Rewritten,
    message, rfc3339,
};
use memdir_store::{Actor, Source, StoreError};
use std::collections::HashMap;
use std::sync::Arc;

/// A tenant's change history.
pub struct PgHistory {
    pub(crate) db: Arc<Db>,
    pub(crate) bridge: Arc<memdir_store::bridge::Bridge>,
}

/// Who, when and why, for [`Db::append_and_record`].
struct Recorded<'a> {
    writer: &'a str,
    source: Option<&'a str>,
    message: &'a str,
    reason: Option<&'a str>,
    at_s: i64,
}

/// What [`Db::append_and_record`] did.
enum Appended {
    /// The append and its record: the change's sequence number.
    Recorded(i64),
    /// The append only (other writes are pending: the record is the usual one).
    Only,
    /// Nothing: there is no such file (it is made the usual way).
    NoFile,
}

/// What `start` records: the memory as `init` left it, authored by memdir itself.
const INIT_MESSAGE: &str = "init memory folder\n";

/// History rows read at a time when a listing filters by path.
const BATCH: i64 = 512;

/// The first line of a message, as git's `summary`.
fn summary(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
}

/// A summary as stored: `(op, NULL)` when it is `op` and the path of the change's one file (as
/// almost every change's is: `log log/2026-12-04.md`), so the path is not kept twice; else
/// `(NULL, summary)`.
fn split_summary(summary: String, files: &[Rev]) -> (Option<String>, Option<String>) {
    if let [one] = files
        && let Some(op) = summary
            .strip_suffix(one.path.as_str())
            .and_then(|s| s.strip_suffix(' '))
        && !op.is_empty()
    {
        return (Some(op.to_string()), None);
    }
    (None, Some(summary))
}

/// A change's id: the one it was recorded with before ids were derived, else 40 hex digits from
/// the tenant and its sequence number (unique, and the same on every read).
fn change_id(tenant: &str, seq: i64, stored: Option<String>) -> String {
    stored.unwrap_or_else(|| {
        memdir_store::Version::of(format!("{tenant}\n{seq}").as_bytes()).to_string()
    })
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Unavailable(format!(
        "postgresql: {what}: the history rows do not fit the files"
    ))
}

fn decode(bytes: &[u8]) -> Result<Vec<Rev>, StoreError> {
    delta::decode(bytes).map_err(|e| StoreError::Unavailable(format!("postgresql: {e}")))
}

/// `path` is `dir` or lies under it (`dir` empty: everything).
fn under(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Each path's content after its newest recorded change: its `pending` copy while a change is
/// under way (absent if the file did not exist), else the file (absent if there is none).
async fn anchors(
    c: &Tx<'_>,
    tenant: &str,
    paths: &[String],
) -> Result<HashMap<String, Option<Vec<u8>>>, StoreError> {
    let rows = c
        .query(
            "SELECT t.p, CASE WHEN p.path IS NOT NULL
                             THEN CASE WHEN p.existed THEN p.content END
                             ELSE f.content END
             FROM unnest($2::text[]) AS t(p)
             LEFT JOIN memdir.pending p ON p.tenant = $1 AND p.path = t.p
             LEFT JOIN memdir.files f ON f.tenant = $1 AND f.path = t.p AND NOT f.is_dir",
            &[&tenant, &paths],
        )
        .await
        .map_err(db_err)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// A file's content at some point (`None`: absent).
type Content = Option<Vec<u8>>;

/// Walks one file back from `anchor` through `later` (its deltas, newest first): the content
/// after each of those changes, newest first, then the content before the oldest.
fn walk_back<'a>(
    anchor: Content,
    later: impl Iterator<Item = &'a Before>,
) -> Result<(Vec<Content>, Content), StoreError> {
    let mut cur = anchor;
    let mut afters = Vec::new();
    for before in later {
        let prev = before
            .apply(cur.as_deref())
            .ok_or_else(|| corrupt("a delta"))?;
        afters.push(std::mem::replace(&mut cur, prev));
    }
    Ok((afters, cur))
}

/// Carries a database from the schema before `memdir.history` forward (migration 4): every
/// change of `changes`/`change_files`/`blobs` becomes one row with its files' reverse deltas, with
/// the same ids, writers, times and reasons; then the old tables go.
pub(crate) async fn carry_forward(raw: &tokio_postgres::Transaction<'_>) -> Result<(), StoreError> {
    let tx = &Tx::Raw(raw);
    // Every tenant with history has a number (a row of `memdir.tenants`).
    tx.execute(
        "INSERT INTO memdir.tenants (tenant, created_ms)
         SELECT DISTINCT tenant, memdir.now_ms() FROM memdir.changes ON CONFLICT DO NOTHING",
        &[],
    )
    .await
    .map_err(db_err)?;
    let tenants: Vec<String> = tx
        .query("SELECT DISTINCT tenant FROM memdir.changes ORDER BY 1", &[])
        .await
        .map_err(db_err)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for tenant in &tenants {
        let rows = tx
            .query(
                "SELECT c.seq, c.at_s, c.writer, c.source, c.summary, c.reason, decode(c.id, 'hex'),
                        cf.path, cf.before IS NOT NULL, bb.content
                 FROM memdir.changes c
                 LEFT JOIN memdir.change_files cf ON cf.seq = c.seq
                 LEFT JOIN memdir.blobs bb ON bb.tenant = c.tenant AND bb.hash = cf.before
                 WHERE c.tenant = $1 ORDER BY c.seq, cf.path",
                &[tenant],
            )
            .await
            .map_err(db_err)?;
        // Each file's recorded contents before each change that touched it, oldest first.
        type Recorded = (usize, Option<Vec<u8>>);
        let mut files: HashMap<String, Vec<Recorded>> = HashMap::new();
        let mut changes: Vec<tokio_postgres::Row> = Vec::new();
        for r in rows {
            if changes
                .last()
                .is_none_or(|last| last.get::<_, i64>(0) != r.get::<_, i64>(0))
            {
                changes.push(r.clone());
            }
            let Some(path) = r.get::<_, Option<String>>(7) else {
                continue;
            };
            let before = r
                .get::<_, bool>(8)
                .then(|| r.get::<_, Option<Vec<u8>>>(9).unwrap_or_default());
            files
                .entry(path)
                .or_default()
                .push((changes.len() - 1, before));
        }
        let paths: Vec<String> = files.keys().cloned().collect();
        let now = anchors(tx, tenant, &paths).await?;
        let mut revs: Vec<Vec<Rev>> = vec![Vec::new(); changes.len()];
        for (path, recorded) in files {
            // The content after each change is the next one's before as recorded, and after
            // the newest the file as it is now, which is where every read starts.
            let mut after = now.get(&path).cloned().flatten();
            for (i, before) in recorded.into_iter().rev() {
                revs[i].push(Rev {
                    path: path.clone(),
                    before: Before::between(before.as_deref(), after.as_deref()),
                });
                after = before;
            }
        }
        for (r, mut files) in changes.iter().zip(revs) {
            files.sort_by(|a, b| a.path.cmp(&b.path));
            let (op, summary) = split_summary(r.get(4), &files);
            tx.execute(
                "INSERT INTO memdir.history
                     (seq, at_s, tenant_id, writer, source, op, summary, reason, id, files)
                 VALUES ($1, $2, memdir.tenant_id($3), $4, $5, $6, $7, $8, $9, $10)",
                &[
                    &r.get::<_, i64>(0),
                    &r.get::<_, i64>(1),
                    tenant,
                    &r.get::<_, String>(2),
                    &r.get::<_, Option<String>>(3),
                    &op,
                    &summary,
                    &r.get::<_, Option<String>>(5),
                    &r.get::<_, Option<Vec<u8>>>(6),
                    &delta::encode(&files),
                ],
            )
            .await
            .map_err(db_err)?;
        }
    }
    raw.batch_execute(
        "DROP TABLE memdir.change_files; DROP TABLE memdir.blobs; DROP TABLE memdir.changes;",
    )
    .await
    .map_err(db_err)
}

impl Db {
    /// Records what changed since the last record as one change; `None` when nothing did.
    async fn record(
        &self,
        writer: String,
        source: Option<String>,
        message: String,
        reason: Option<String>,
        at_s: i64,
    ) -> Result<Option<String>, StoreError> {
        let Some(h) = memdir_store::bridge::caller().and_then(|t| self.held_by(t)) else {
            let mut c = self.conn().await?;
            let tx = c.tx().await?;
            let id = self
                .record_on(&tx, writer, source, message, reason, at_s)
                .await?;
            tx.commit().await.map_err(db_err)?;
            return Ok(id);
        };
        // In a change: its append, if it kept one, goes with the record in one statement.
        let recorded = async {
            let deferred = h.take_deferred();
            let mut c = Handle::Held(h.conn.clone().lock_owned().await);
            if let Some((path, data)) = deferred {
                let r = Recorded {
                    writer: &writer,
                    source: source.as_deref(),
                    message: &message,
                    reason: reason.as_deref(),
                    at_s,
                };
                match self.append_and_record(&c, &path, &data, r).await? {
                    Appended::Recorded(seq) => return Ok(Some(change_id(&self.tenant, seq, None))),
                    Appended::Only => {}
                    Appended::NoFile => {
                        self.put_on(&mut c, &path, &data, &crate::Put::Append)
                            .await?
                    }
                }
            }
            let tx = c.tx().await?;
            self.record_on(&tx, writer, source, message, reason, at_s)
                .await
        };
        // Whatever failed, the change's transaction must not commit without its record.
        recorded.await.inspect_err(|e| h.fail(e))
    }

    /// Appends `data` to `path` and records the change in one statement, when the append is all
    /// there is to record (nothing else is pending): the change's delta is the length the file
    /// had, encoded by `memdir.uvarint` as postcard encodes it (`delta.rs`).
    async fn append_and_record(
        &self,
        c: &Handle,
        path: &MemPath,
        data: &[u8],
        r: Recorded<'_>,
    ) -> Result<Appended, StoreError> {
        let revs = [Rev {
            path: path.as_str().to_string(),
            before: Before::Edit {
                head: 0,
                data: Vec::new(),
                tail: 0,
            },
        }];
        // The encoding up to the head's varint (0 is one byte), then the empty data and tail.
        let mut prefix = delta::encode(&revs);
        prefix.truncate(prefix.len().saturating_sub(3));
        let (op, summary) = split_summary(summary(r.message), &revs);
        let row = c
            .query_one(
                "WITH old AS MATERIALIZED (
                     SELECT size AS had, content AS before FROM memdir.files
                     WHERE tenant = $1 AND path = $2 AND NOT is_dir FOR UPDATE),
                 busy AS MATERIALIZED (
                     SELECT EXISTS (SELECT 1 FROM memdir.pending WHERE tenant = $1) AS any),
                 rec AS (
                     INSERT INTO memdir.pending (tenant, path, existed, content)
                     SELECT $1, $2, true, old.before FROM old, busy WHERE busy.any
                     ON CONFLICT DO NOTHING),
                 app AS (
                     UPDATE memdir.files SET content = content || $3,
                         modified_ms = memdir.now_ms(), version = NULL
                     FROM old WHERE tenant = $1 AND path = $2 AND NOT is_dir
                     RETURNING old.had),
                 hist AS (
                     INSERT INTO memdir.history
                         (seq, at_s, tenant_id, writer, source, op, summary, reason, files)
                     SELECT nextval('memdir.history_seq'), $4, memdir.tenant_id($1), $5, $6, $7,
                            $8, $9, $10 || memdir.uvarint(app.had) || decode('0000', 'hex')
                     FROM app, busy WHERE NOT busy.any
                     RETURNING seq)
                 SELECT (SELECT count(*) FROM app), (SELECT seq FROM hist)",
                &[
                    &self.tenant,
                    &path.as_str(),
                    &data,
                    &r.at_s,
                    &r.writer,
                    &r.source,
                    &op,
                    &summary,
                    &r.reason,
                    &prefix,
                ],
            )
            .await
            .map_err(db_err)?;
        let (appended, seq): (i64, Option<i64>) = (row.get(0), row.get(1));
        Ok(match (appended, seq) {
            (0, _) => Appended::NoFile,
            (_, Some(seq)) => Appended::Recorded(seq),
            (_, None) => Appended::Only,
        })
    }

    /// [`Db::record`] in `tx`.
    async fn record_on(
        &self,
        tx: &Tx<'_>,
        writer: String,
        source: Option<String>,
        message: String,
        reason: Option<String>,
        at_s: i64,
    ) -> Result<Option<String>, StoreError> {
        // One record at a time, and no tree change (a file made, removed or renamed) while it
        // reads: what it reads as "after" is what the next change's "before" starts from.
        lock_history_and_tree(tx, &self.tenant).await?;
        // The touched files' rows are locked (in path order, as every writer locks them) so an
        // append under way either lands before this read or waits for the record.
        let rows = tx
            .query(
                "WITH now AS (
                     SELECT path, content FROM memdir.files
                     WHERE tenant = $1 AND NOT is_dir
                       AND path IN (SELECT path FROM memdir.pending WHERE tenant = $1)
                     ORDER BY path FOR UPDATE)
                 SELECT p.path, p.existed, p.content, n.content,
                        p.existed AND n.path IS NOT NULL AND p.content = n.content
                 FROM memdir.pending p LEFT JOIN now n ON n.path = p.path
                 WHERE p.tenant = $1 ORDER BY p.path",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?;
        let all: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let mut revs = Vec::new();
        for r in &rows {
            let (existed, same): (bool, bool) = (r.get(1), r.get(4));
            let after: Option<&[u8]> = r.get(3);
            if same || (!existed && after.is_none()) {
                continue;
            }
            let before: Option<&[u8]> = existed.then(|| r.get(2));
            revs.push(Rev {
                path: r.get(0),
                before: Before::between(before, after),
            });
        }
        let id = if revs.is_empty() {
            tx.execute(
                "DELETE FROM memdir.pending WHERE tenant = $1 AND path = ANY($2)",
                &[&self.tenant, &all],
            )
            .await
            .map_err(db_err)?;
            None
        } else {
            let (op, summary) = split_summary(summary(&message), &revs);
            let seq: i64 = tx
                .query_one(
                    "WITH gone AS (
                         DELETE FROM memdir.pending WHERE tenant = $1 AND path = ANY($2))
                     INSERT INTO memdir.history
                         (seq, at_s, tenant_id, writer, source, op, summary, reason, files)
                     VALUES (nextval('memdir.history_seq'), $3, memdir.tenant_id($1),
                             $4, $5, $6, $7, $8, $9)
                     RETURNING seq",
                    &[
                        &self.tenant,
                        &all,
                        &at_s,
                        &writer,
                        &source,
                        &op,
                        &summary,
                        &reason,
                        &delta::encode(&revs),
                    ],
                )
                .await
                .map_err(db_err)?
                .get(0);
            Some(change_id(&self.tenant, seq, None))
        };
        Ok(id)
    }

    async fn history(
        &self,
        path: Option<String>,
        limit: i64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let c = self.conn().await?;
        let entry = |r: &tokio_postgres::Row| -> Result<HistoryEntry, StoreError> {
            let summary = match r.get::<_, Option<String>>(4) {
                Some(s) => s,
                None => {
                    let op: String = r.get::<_, Option<String>>(7).unwrap_or_default();
                    let files = decode(r.get::<_, Option<&[u8]>>(8).unwrap_or_default())?;
                    let path = files.first().map(|f| f.path.as_str()).unwrap_or_default();
                    format!("{op} {path}")
                }
            };
            Ok(HistoryEntry {
                commit: change_id(&self.tenant, r.get(0), r.get(1)),
                writer: r.get(2),
                date: rfc3339(r.get(3)),
                summary,
                reason: r.get(5),
                source: r.get(6),
            })
        };
        // A summary kept as its operation alone is that operation and the one file's path.
        const COLUMNS: &str = "seq, encode(id, 'hex'), writer, at_s, summary, reason, source,
            op, CASE WHEN summary IS NULL THEN files END";
        let Some(path) = path else {
            let rows = c
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM memdir.history WHERE tenant_id = memdir.tenant_id($1)
                         ORDER BY seq DESC LIMIT $2"
                    ),
                    &[&self.tenant, &limit],
                )
                .await
                .map_err(db_err)?;
            return rows.iter().map(entry).collect();
        };
        // Which files a change touched is inside its row: read newest first, a batch at a time,
        // until `limit` changes touched `path`.
        let mut out = Vec::new();
        let mut below = i64::MAX;
        while (out.len() as i64) < limit {
            let rows = c
                .query(
                    &format!(
                        "SELECT {COLUMNS}, files FROM memdir.history
                         WHERE tenant_id = memdir.tenant_id($1) AND seq < $2 ORDER BY seq DESC LIMIT $3"
                    ),
                    &[&self.tenant, &below, &BATCH],
                )
                .await
                .map_err(db_err)?;
            let Some(last) = rows.last() else { break };
            below = last.get(0);
            for r in &rows {
                if decode(r.get(9))?.iter().any(|f| under(&f.path, &path)) {
                    out.push(entry(r)?);
                    if out.len() as i64 >= limit {
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    async fn blame(&self, path: MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let mut c = self.conn().await?;
        // The rows and the file in one snapshot, so the walk starts where the rows end.
        let tx = c.read_tx().await?;
        let rows = tx
            .query(
                "SELECT seq, encode(id, 'hex'), writer, at_s, reason, files FROM memdir.history
                 WHERE tenant_id = memdir.tenant_id($1) ORDER BY seq",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?;
        let anchor = anchors(&tx, &self.tenant, &[path.as_str().to_string()])
            .await?
            .remove(path.as_str())
            .flatten();
        tx.commit().await.map_err(db_err)?;
        struct Who {
            id: String,
            writer: String,
            at_s: i64,
            reason: Option<String>,
        }
        let mut who: Vec<Who> = Vec::new();
        let mut deltas: Vec<Before> = Vec::new();
        for r in &rows {
            let Some(rev) = decode(r.get(5))?
                .into_iter()
                .find(|f| f.path == path.as_str())
            else {
                continue;
            };
            who.push(Who {
                id: change_id(&self.tenant, r.get(0), r.get(1)),
                writer: r.get(2),
                at_s: r.get(3),
                reason: r.get(4),
            });
            deltas.push(rev.before);
        }
        let (mut afters, _) = walk_back(anchor, deltas.iter().rev())?;
        afters.reverse();
        let versions = who.into_iter().zip(afters).map(|(w, content)| {
            let who = BlameWho {
                commit: w.id,
                writer: w.writer,
                date: rfc3339(w.at_s),
                reason: w.reason,
            };
            (
                who,
                content.map(|c| String::from_utf8_lossy(&c).into_owned()),
            )
        });
        memdir_store::history::blame_versions(&path, versions)
    }

    /// The change a revert names: its sequence number and full id.
    async fn find(&self, c: &Tx<'_>, id: Option<String>) -> Result<(i64, String), StoreError> {
        let Some(prefix) = id else {
            let row = c
                .query_opt(
                    "SELECT seq, encode(id, 'hex') FROM memdir.history
                     WHERE tenant_id = memdir.tenant_id($1) AND writer <> $2 ORDER BY seq DESC LIMIT 1",
                    &[&self.tenant, &HAND_EDIT],
                )
                .await
                .map_err(db_err)?;
            let Some(r) = row else {
                return Err(StoreError::NotFound("nothing to undo".into()));
            };
            return Ok((r.get(0), change_id(&self.tenant, r.get(0), r.get(1))));
        };
        let not_found =
            || StoreError::NotFound(format!("no commit {prefix:?}: see `memdir history`"));
        if prefix.is_empty() || !prefix.chars().all(|ch| ch.is_ascii_hexdigit()) {
            return Err(not_found());
        }
        let want = prefix.to_ascii_lowercase();
        // Ids are derived, so a prefix is matched here, over the tenant's changes.
        let rows = c
            .query(
                "SELECT seq, encode(id, 'hex') FROM memdir.history WHERE tenant_id = memdir.tenant_id($1)
                 ORDER BY seq DESC",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?;
        let mut found = rows
            .iter()
            .map(|r| {
                (
                    r.get::<_, i64>(0),
                    change_id(&self.tenant, r.get(0), r.get(1)),
                )
            })
            .filter(|(_, id)| id.starts_with(&want));
        let first = found.next().ok_or_else(not_found)?;
        if found.next().is_some() {
            return Err(StoreError::InvalidPath(format!(
                "commit {prefix:?} is ambiguous: give more of its id"
            )));
        }
        Ok(first)
    }

    /// The files change `seq` touched, each with its content just before and just after it,
    /// walked back from now through the change and every later one.
    async fn touched(
        &self,
        c: &Tx<'_>,
        seq: i64,
    ) -> Result<Vec<(String, Content, Content)>, StoreError> {
        let rows = c
            .query(
                "SELECT seq, files FROM memdir.history WHERE tenant_id = memdir.tenant_id($1) AND seq >= $2
                 ORDER BY seq DESC",
                &[&self.tenant, &seq],
            )
            .await
            .map_err(db_err)?;
        let Some(target) = rows.last() else {
            return Err(StoreError::NotFound(format!("no change {seq}")));
        };
        let mine = decode(target.get(1))?;
        let paths: Vec<String> = mine.iter().map(|f| f.path.clone()).collect();
        let mut later: HashMap<&str, Vec<Before>> = HashMap::new();
        for r in &rows[..rows.len() - 1] {
            for f in decode(r.get(1))? {
                if let Some(p) = paths.iter().find(|p| **p == f.path) {
                    later.entry(p.as_str()).or_default().push(f.before);
                }
            }
        }
        let mut anchored = anchors(c, &self.tenant, &paths).await?;
        let mut out = Vec::with_capacity(mine.len());
        for f in mine {
            let anchor = anchored.remove(&f.path).flatten();
            let (_, after) = walk_back(anchor, later.get(f.path.as_str()).into_iter().flatten())?;
            let before = f
                .before
                .apply(after.as_deref())
                .ok_or_else(|| corrupt("a delta"))?;
            out.push((f.path, before, after));
        }
        Ok(out)
    }

    async fn files_of(&self, id: String) -> Result<(String, Vec<FileChange>), StoreError> {
        let mut c = self.conn().await?;
        let tx = c.read_tx().await?;
        let (seq, full) = self.find(&tx, Some(id)).await?;
        let touched = self.touched(&tx, seq).await?;
        tx.commit().await.map_err(db_err)?;
        let mut out = Vec::with_capacity(touched.len());
        for (p, before, after) in touched {
            let path = MemPath::parse_file(&p)
                .map_err(|e| StoreError::Unavailable(format!("postgresql: stored path: {e}")))?;
            if before != after {
                out.push(FileChange {
                    path,
                    before,
                    after,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((full, out))
    }

    async fn revert(&self, id: Option<String>) -> Result<(String, Changes), StoreError> {
        let mut c = self.conn().await?;
        let tx = c.read_tx().await?;
        let (seq, full) = self.find(&tx, id).await?;
        let first: i64 = tx
            .query_one(
                "SELECT min(seq) FROM memdir.history WHERE tenant_id = memdir.tenant_id($1)",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?
            .get(0);
        if seq == first {
            return Err(StoreError::Conflict(
                "cannot undo the first commit: it created the folder".into(),
            ));
        }
        let touched = self.touched(&tx, seq).await?;
        let paths: Vec<String> = touched.iter().map(|t| t.0.clone()).collect();
        let now_rows = tx
            .query(
                "SELECT path, content FROM memdir.files
                 WHERE tenant = $1 AND NOT is_dir AND path = ANY($2)",
                &[&self.tenant, &paths],
            )
            .await
            .map_err(db_err)?;
        tx.commit().await.map_err(db_err)?;
        let mut now: HashMap<String, Vec<u8>> =
            now_rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        let conflict = || {
            StoreError::Conflict(format!(
                "cannot undo {}: later changes touch the same lines; edit the file instead",
                full.get(..8).unwrap_or(&full)
            ))
        };
        let mut out = Changes::new();
        for (p, before, after) in touched {
            let path = MemPath::parse_file(&p)
                .map_err(|e| StoreError::Unavailable(format!("postgresql: stored path: {e}")))?;
            if let Some(want) = memdir_core::diff::undo_file(before, after, now.remove(&p))
                .map_err(|_| conflict())?
            {
                out.push((path, want));
            }
        }
        Ok((full, out))
    }
}

/// A change recorded without touching a file: a forget's own record, or a refused forget's.
struct ForgetRecord {
    writer: String,
    source: Option<String>,
    message: String,
    reason: Option<String>,
    at_s: i64,
}

impl ForgetRecord {
    fn of(change: &memdir_store::history::Change<'_>) -> ForgetRecord {
        ForgetRecord {
            writer: change.actor.writer.clone(),
            source: Some(change.actor.source.as_str().to_string()),
            message: change.message(),
            reason: change
                .reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(|r| r.replace('\n', " ")),
            at_s: change.at.as_second(),
        }
    }
}

impl Db {
    /// Rewrites every history row, and the pending copies, without what `forget` names, and
    /// records the forget as a change, in one transaction (see [`History::forget`]). Ids are
    /// derived from the tenant and sequence number, so a rewritten change keeps its id.
    ///
    /// [`History::forget`]: memdir_store::history::History::forget
    async fn forget(
        &self,
        forget: Forget,
        record: ForgetRecord,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let mut c = self.conn().await?;
        let tx = c.tx().await?;
        lock_history_and_tree(&tx, &self.tenant).await?;
        let rows = tx
            .query(
                "SELECT seq, encode(id, 'hex'), files, summary, reason FROM memdir.history
                 WHERE tenant_id = memdir.tenant_id($1) ORDER BY seq FOR UPDATE",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?;
        struct Row {
            seq: i64,
            id: String,
            files: Vec<Rev>,
            summary: Option<String>,
            reason: Option<String>,
            changed: bool,
        }
        let mut table: Vec<Row> = Vec::with_capacity(rows.len());
        for r in &rows {
            let summary: Option<String> = r.get(3);
            let reason: Option<String> = r.get(4);
            let new_summary = summary.as_deref().and_then(|t| forget.scrub_message(t));
            let new_reason = reason.as_deref().and_then(|t| forget.scrub_message(t));
            let changed = new_summary.is_some() || new_reason.is_some();
            table.push(Row {
                seq: r.get(0),
                id: change_id(&self.tenant, r.get(0), r.get(1)),
                files: decode(r.get(2))?,
                summary: new_summary.or(summary),
                reason: new_reason.or(reason),
                changed,
            });
        }
        // Each path history knows, walked back from where its newest change left it.
        let mut paths: Vec<String> = table
            .iter()
            .flat_map(|r| r.files.iter().map(|f| f.path.clone()))
            .filter(|p| forget.covers(p))
            .collect();
        paths.sort();
        paths.dedup();
        let mut anchored = anchors(&tx, &self.tenant, &paths).await?;
        let mut versions = 0;
        let mut lines = 0;
        let mut scrub = |p: &str, v: Option<Vec<u8>>| -> Option<Vec<u8>> {
            let b = v?;
            match forget.scrub(p, &b) {
                Scrub::Keep => Some(b),
                Scrub::Drop => {
                    versions += 1;
                    None
                }
                Scrub::Rewrite(out, n) => {
                    versions += 1;
                    lines += n;
                    Some(out)
                }
            }
        };
        let mut new_anchors: Vec<(String, Option<Vec<u8>>)> = Vec::new();
        for p in &paths {
            // (row index, file index) of each change to `p`, oldest first.
            let at: Vec<(usize, usize)> = table
                .iter()
                .enumerate()
                .flat_map(|(i, r)| r.files.iter().position(|f| &f.path == p).map(|j| (i, j)))
                .collect();
            let anchor = anchored.remove(p).flatten();
            let (afters, first_before) = walk_back(
                anchor.clone(),
                at.iter().rev().map(|&(i, j)| &table[i].files[j].before),
            )?;
            // Oldest first: before the first change, then after each change.
            let mut chain: Vec<Option<Vec<u8>>> = vec![first_before];
            chain.extend(afters.into_iter().rev());
            let clean: Vec<Option<Vec<u8>>> = chain.iter().map(|v| scrub(p, v.clone())).collect();
            for (k, &(i, j)) in at.iter().enumerate() {
                if clean[k] == chain[k] && clean[k + 1] == chain[k + 1] {
                    continue;
                }
                let before = Before::between(clean[k].as_deref(), clean[k + 1].as_deref());
                let row = &mut table[i];
                row.files[j].before = before;
                row.changed = true;
            }
            if let Some(last) = clean.last()
                && chain.last() != Some(last)
            {
                new_anchors.push((p.clone(), last.clone()));
            }
        }
        let mut report = ForgetReport {
            versions,
            lines,
            ..ForgetReport::default()
        };
        for r in table.iter().filter(|r| r.changed) {
            report.rewritten.push(Rewritten {
                old: r.id.clone(),
                new: r.id.clone(),
            });
        }
        if dry_run {
            tx.rollback().await.map_err(db_err)?;
            return Ok(report);
        }
        for r in table.iter().filter(|r| r.changed) {
            tx.execute(
                "UPDATE memdir.history SET files = $3, summary = $4, reason = $5
                 WHERE tenant_id = memdir.tenant_id($1) AND seq = $2",
                &[
                    &self.tenant,
                    &r.seq,
                    &delta::encode(&r.files),
                    &r.summary,
                    &r.reason,
                ],
            )
            .await
            .map_err(db_err)?;
        }
        // The newest content history starts from: a change under way keeps it in `pending`;
        // otherwise it is the file, which the engine rewrote already.
        for (p, content) in &new_anchors {
            let n = tx
                .execute(
                    "UPDATE memdir.pending SET existed = $3, content = $4
                     WHERE tenant = $1 AND path = $2",
                    &[
                        &self.tenant,
                        p,
                        &content.is_some(),
                        &content.clone().unwrap_or_default(),
                    ],
                )
                .await
                .map_err(db_err)?;
            if n == 0 {
                return Err(StoreError::Conflict(format!(
                    "{p} still holds what forget removes: forget rewrites the files before history"
                )));
            }
        }
        // Any other pending copy that holds it (a file written since the last change).
        let pending = tx
            .query(
                "SELECT path, existed, content FROM memdir.pending WHERE tenant = $1",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?;
        for r in &pending {
            let p: String = r.get(0);
            let existed: bool = r.get(1);
            if !existed || new_anchors.iter().any(|(a, _)| *a == p) {
                continue;
            }
            let content: Vec<u8> = r.get(2);
            let clean = match forget.scrub(&p, &content) {
                Scrub::Keep => Some(content.clone()),
                Scrub::Drop => None,
                Scrub::Rewrite(out, _) => Some(out),
            };
            if clean.as_ref() != Some(&content) {
                tx.execute(
                    "UPDATE memdir.pending SET existed = $3, content = $4
                     WHERE tenant = $1 AND path = $2",
                    &[
                        &self.tenant,
                        &p,
                        &clean.is_some(),
                        &clean.unwrap_or_default(),
                    ],
                )
                .await
                .map_err(db_err)?;
            }
        }
        report.recorded = Some(insert_empty(&tx, &self.tenant, &record).await?);
        tx.commit().await.map_err(db_err)?;
        Ok(report)
    }

    /// Records a change that changed no file (a refused forget); returns its id.
    async fn record_empty(&self, record: ForgetRecord) -> Result<String, StoreError> {
        let mut c = self.conn().await?;
        let tx = c.tx().await?;
        lock_history_and_tree(&tx, &self.tenant).await?;
        let id = insert_empty(&tx, &self.tenant, &record).await?;
        tx.commit().await.map_err(db_err)?;
        Ok(id)
    }
}

/// Inserts `record` as a history row that touched no file; returns its id.
async fn insert_empty(
    tx: &Tx<'_>,
    tenant: &str,
    record: &ForgetRecord,
) -> Result<String, StoreError> {
    let (op, summary) = (None::<String>, Some(summary(&record.message)));
    let seq: i64 = tx
        .query_one(
            "INSERT INTO memdir.history
                 (seq, at_s, tenant_id, writer, source, op, summary, reason, files)
             VALUES (nextval('memdir.history_seq'), $2, memdir.tenant_id($1),
                     $3, $4, $5, $6, $7, $8)
             RETURNING seq",
            &[
                &tenant,
                &record.at_s,
                &record.writer,
                &record.source,
                &op,
                &summary,
                &record.reason,
                &delta::encode(&[]),
            ],
        )
        .await
        .map_err(db_err)?
        .get(0);
    Ok(change_id(tenant, seq, None))
}

impl PgHistory {
    /// Records what `init` wrote as the first change, as a folder's first commit (idempotent).
    pub fn start(&self, at: jiff::Timestamp) -> Result<(), StoreError> {
        let db = self.db.clone();
        let writer = "memdir".to_string();
        let source = Some(Source::User.as_str().to_string());
        self.bridge
            .run(async move {
                let any: bool = db
                    .conn()
                    .await?
                    .query_one(
                        "SELECT EXISTS (SELECT 1 FROM memdir.history WHERE tenant_id = memdir.tenant_id($1))",
                        &[&db.tenant],
                    )
                    .await
                    .map_err(db_err)?
                    .get(0);
                if any {
                    return Ok(None);
                }
                db.record(writer, source, INIT_MESSAGE.into(), None, at.as_second())
                    .await
            })
            .map(drop)
    }

    /// Records what changed since the last record as one change by `actor`; `None` when
    /// nothing changed.
    pub fn commit(
        &self,
        actor: &Actor,
        op: &str,
        path: &str,
        reason: Option<&str>,
        at: jiff::Timestamp,
    ) -> Result<Option<String>, StoreError> {
        let db = self.db.clone();
        let (writer, source) = (
            actor.writer.clone(),
            Some(actor.source.as_str().to_string()),
        );
        let message = message(op, path, reason, actor.source);
        let reason = reason
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(|r| r.replace('\n', " "));
        let at = at.as_second();
        self.bridge
            .run(async move { db.record(writer, source, message, reason, at).await })
    }

    /// Changes that touched `path` (a file, or anything under a folder; all when `None`),
    /// newest first, at most `limit`.
    pub fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let db = self.db.clone();
        let path = path.map(|p| p.as_str().to_string());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.bridge
            .run(async move { db.history(path, limit).await })
    }

    /// Who last changed each line of a file, and why.
    pub fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let db = self.db.clone();
        let path = path.clone();
        self.bridge.run(async move { db.blame(path).await })
    }

    /// The contents that undo change `id` (a prefix will do; default: the newest change not
    /// made by hand) on top of the current files, with the change's full id.
    pub fn revert(&self, id: Option<&str>) -> Result<(String, Changes), StoreError> {
        let db = self.db.clone();
        let id = id.map(str::to_string);
        self.bridge.run(async move { db.revert(id).await })
    }
}

/// The engine's seam. A database memory is written only through memdir, so there are no hand
/// edits for [`History::prepare`] to record.
impl memdir_store::history::History for PgHistory {
    fn enabled(&self) -> bool {
        true
    }

    fn start(&self, at: jiff::Timestamp) -> Result<(), StoreError> {
        PgHistory::start(self, at)
    }

    fn prepare(&self, _at: jiff::Timestamp) -> Result<(), StoreError> {
        Ok(())
    }

    fn commit(
        &self,
        change: &memdir_store::history::Change<'_>,
    ) -> Result<Option<String>, StoreError> {
        PgHistory::commit(
            self,
            change.actor,
            change.op,
            change.path,
            change.reason,
            change.at,
        )
    }

    fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        PgHistory::history(self, path, limit)
    }

    fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError> {
        PgHistory::blame(self, path)
    }

    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError> {
        PgHistory::revert(self, Some(id))
    }

    fn forget(
        &self,
        forget: &Forget,
        record: &memdir_store::history::Change<'_>,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let db = self.db.clone();
        let forget = forget.clone();
        let record = ForgetRecord::of(record);
        self.bridge
            .run(async move { db.forget(forget, record, dry_run).await })
    }

    fn record_empty(
        &self,
        change: &memdir_store::history::Change<'_>,
    ) -> Result<Option<String>, StoreError> {
        let db = self.db.clone();
        let record = ForgetRecord::of(change);
        self.bridge
            .run(async move { db.record_empty(record).await.map(Some) })
    }

    fn files_of(&self, id: &str) -> Result<(String, Vec<FileChange>), StoreError> {
        let db = self.db.clone();
        let id = id.to_string();
        self.bridge.run(async move { db.files_of(id).await })
    }
}

/// Takes, for the rest of `tx`, the tenant's history lock and its tree lock: one record (or
/// rewrite) of history at a time, and no file made, removed or renamed meanwhile.
async fn lock_history_and_tree(tx: &Tx<'_>, tenant: &str) -> Result<(), StoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(memdir.lock_key('history', $1, '')),
                pg_advisory_xact_lock(memdir.lock_key('tree', $1, ''))",
        &[&tenant],
    )
    .await
    .map_err(db_err)?;
    Ok(())
}
