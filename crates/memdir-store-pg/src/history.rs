//! History in tables: the PostgreSQL side of [`History`].
//!
//! Every store write records, in the same statement or transaction as the write, the file's
//! content before the first write since the last record (`memdir.pending`). [`History::commit`]
//! turns those rows into one change (`memdir.changes`) listing each file's content before and
//! after (`memdir.change_files`, contents kept once each in `memdir.blobs`, keyed by SHA-256),
//! all in one transaction. History, blame and revert read those tables and answer in the same
//! shape as the git history of a folder.

use crate::{Db, db_err};
use memdir_core::path::MemPath;
use memdir_store::history::{BlameLine, Changes, HAND_EDIT, HistoryEntry, message, rfc3339};
use memdir_store::{Actor, Source, StoreError};
use std::sync::Arc;

/// A tenant's change history.
pub struct PgHistory {
    pub(crate) db: Arc<Db>,
    pub(crate) bridge: Arc<memdir_store::bridge::Bridge>,
}

/// What `start` records: the memory as `init` left it, authored by memdir itself.
const INIT_MESSAGE: &str = "init memory folder\n";

/// The first line of a message, as git's `summary`.
fn summary(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
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
        let mut c = self.conn().await?;
        let tx = c.transaction().await.map_err(db_err)?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(memdir.lock_key('history', $1, ''))",
            &[&self.tenant],
        )
        .await
        .map_err(db_err)?;
        let rows = tx
            .query(
                "SELECT p.path,
                        CASE WHEN p.existed THEN sha256(p.content) END,
                        sha256(f.content)
                 FROM memdir.pending p
                 LEFT JOIN memdir.files f
                   ON f.tenant = p.tenant AND f.path = p.path AND NOT f.is_dir
                 WHERE p.tenant = $1 ORDER BY p.path",
                &[&self.tenant],
            )
            .await
            .map_err(db_err)?;
        let all: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let mut paths = Vec::new();
        let mut befores: Vec<Option<Vec<u8>>> = Vec::new();
        let mut afters: Vec<Option<Vec<u8>>> = Vec::new();
        for r in &rows {
            let (before, after): (Option<Vec<u8>>, Option<Vec<u8>>) = (r.get(1), r.get(2));
            if before != after {
                paths.push(r.get::<_, String>(0));
                befores.push(before);
                afters.push(after);
            }
        }
        let mut id = None;
        if !paths.is_empty() {
            tx.execute(
                "INSERT INTO memdir.blobs (tenant, hash, content)
                 SELECT $1, sha256(p.content), p.content FROM memdir.pending p
                 WHERE p.tenant = $1 AND p.existed AND p.path = ANY($2)
                 UNION ALL
                 SELECT $1, sha256(f.content), f.content FROM memdir.files f
                 WHERE f.tenant = $1 AND NOT f.is_dir AND f.path = ANY($2)
                 ON CONFLICT DO NOTHING",
                &[&self.tenant, &paths],
            )
            .await
            .map_err(db_err)?;
            let seq: i64 = tx
                .query_one("SELECT nextval('memdir.changes_seq_seq')", &[])
                .await
                .map_err(db_err)?
                .get(0);
            // Ids look like git's (40 hex digits) and are unique: a hash of what makes the
            // change unique, so `memdir undo <prefix>` works the same on every backend.
            let change_id = memdir_store::Version::of(
                format!("{}\n{seq}\n{at_s}\n{writer}\n{message}", self.tenant).as_bytes(),
            )
            .to_string();
            tx.execute(
                "INSERT INTO memdir.changes
                     (seq, tenant, id, at_s, writer, source, summary, reason, message)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &seq,
                    &self.tenant,
                    &change_id,
                    &at_s,
                    &writer,
                    &source,
                    &summary(&message),
                    &reason,
                    &message,
                ],
            )
            .await
            .map_err(db_err)?;
            tx.execute(
                "INSERT INTO memdir.change_files (seq, tenant, path, before, after)
                 SELECT $1, $2, p, b, a FROM unnest($3::text[], $4::bytea[], $5::bytea[]) AS t(p, b, a)",
                &[&seq, &self.tenant, &paths, &befores, &afters],
            )
            .await
            .map_err(db_err)?;
            id = Some(change_id);
        }
        tx.execute(
            "DELETE FROM memdir.pending WHERE tenant = $1 AND path = ANY($2)",
            &[&self.tenant, &all],
        )
        .await
        .map_err(db_err)?;
        tx.commit().await.map_err(db_err)?;
        Ok(id)
    }

    async fn history(
        &self,
        path: Option<String>,
        limit: i64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let c = self.conn().await?;
        let rows = c
            .query(
                "SELECT c.id, c.writer, c.at_s, c.summary, c.reason, c.source
                 FROM memdir.changes c
                 WHERE c.tenant = $1 AND ($2::text IS NULL OR EXISTS (
                     SELECT 1 FROM memdir.change_files cf
                     WHERE cf.seq = c.seq AND (cf.path = $2
                        OR (cf.path >= $2 || '/' AND cf.path < $2 || '0'))))
                 ORDER BY c.seq DESC LIMIT $3",
                &[&self.tenant, &path, &limit],
            )
            .await
            .map_err(db_err)?;
        Ok(rows
            .iter()
            .map(|r| HistoryEntry {
                commit: r.get(0),
                writer: r.get(1),
                date: rfc3339(r.get(2)),
                summary: r.get(3),
                reason: r.get(4),
                source: r.get(5),
            })
            .collect())
    }

    async fn blame(&self, path: MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let c = self.conn().await?;
        let rows = c
            .query(
                "SELECT c.id, c.writer, c.at_s, c.reason, b.content
                 FROM memdir.change_files cf
                 JOIN memdir.changes c ON c.seq = cf.seq
                 LEFT JOIN memdir.blobs b ON b.tenant = cf.tenant AND b.hash = cf.after
                 WHERE cf.tenant = $1 AND cf.path = $2
                 ORDER BY cf.seq",
                &[&self.tenant, &path.as_str()],
            )
            .await
            .map_err(db_err)?;
        struct Who {
            id: String,
            writer: String,
            at_s: i64,
            reason: Option<String>,
        }
        let mut who: Vec<Who> = Vec::new();
        // Each line of the latest version, with the change that last touched it.
        let mut lines: Vec<(String, usize)> = Vec::new();
        let mut exists = false;
        for r in &rows {
            let content: Option<Vec<u8>> = r.get(4);
            who.push(Who {
                id: r.get(0),
                writer: r.get(1),
                at_s: r.get(2),
                reason: r.get(3),
            });
            let me = who.len() - 1;
            let Some(content) = content else {
                lines.clear();
                exists = false;
                continue;
            };
            exists = true;
            lines = memdir_core::diff::carry_lines(&lines, &String::from_utf8_lossy(&content), me);
        }
        if !exists {
            return Err(StoreError::NotFound(format!("{path} has no history yet")));
        }
        Ok(lines
            .into_iter()
            .enumerate()
            .map(|(i, (text, owner))| {
                let w = &who[owner];
                BlameLine {
                    line: i + 1,
                    commit: w.id.clone(),
                    writer: w.writer.clone(),
                    date: rfc3339(w.at_s),
                    reason: w.reason.clone(),
                    text,
                }
            })
            .collect())
    }

    async fn revert(&self, id: Option<String>) -> Result<(String, Changes), StoreError> {
        let c = self.conn().await?;
        let found = match &id {
            Some(prefix) => {
                if prefix.is_empty() || !prefix.chars().all(|ch| ch.is_ascii_hexdigit()) {
                    return Err(StoreError::NotFound(format!(
                        "no commit {prefix:?}: see `memdir history`"
                    )));
                }
                let rows = c
                    .query(
                        "SELECT seq, id FROM memdir.changes
                         WHERE tenant = $1 AND id LIKE $2 || '%' ORDER BY seq DESC LIMIT 2",
                        &[&self.tenant, &prefix.to_ascii_lowercase()],
                    )
                    .await
                    .map_err(db_err)?;
                if rows.len() > 1 {
                    return Err(StoreError::InvalidPath(format!(
                        "commit {prefix:?} is ambiguous: give more of its id"
                    )));
                }
                let Some(r) = rows.first() else {
                    return Err(StoreError::NotFound(format!(
                        "no commit {prefix:?}: see `memdir history`"
                    )));
                };
                (r.get::<_, i64>(0), r.get::<_, String>(1))
            }
            None => {
                let row = c
                    .query_opt(
                        "SELECT seq, id FROM memdir.changes
                         WHERE tenant = $1 AND writer <> $2 ORDER BY seq DESC LIMIT 1",
                        &[&self.tenant, &HAND_EDIT],
                    )
                    .await
                    .map_err(db_err)?;
                let Some(r) = row else {
                    return Err(StoreError::NotFound("nothing to undo".into()));
                };
                (r.get(0), r.get(1))
            }
        };
        let (seq, full) = found;
        let first: i64 = c
            .query_one(
                "SELECT min(seq) FROM memdir.changes WHERE tenant = $1",
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
        let rows = c
            .query(
                "SELECT cf.path, bb.content, ba.content, f.content
                 FROM memdir.change_files cf
                 LEFT JOIN memdir.blobs bb ON bb.tenant = cf.tenant AND bb.hash = cf.before
                 LEFT JOIN memdir.blobs ba ON ba.tenant = cf.tenant AND ba.hash = cf.after
                 LEFT JOIN memdir.files f
                   ON f.tenant = cf.tenant AND f.path = cf.path AND NOT f.is_dir
                 WHERE cf.seq = $1 ORDER BY cf.path",
                &[&seq],
            )
            .await
            .map_err(db_err)?;
        let conflict = || {
            StoreError::Conflict(format!(
                "cannot undo {}: later changes touch the same lines; edit the file instead",
                full.get(..8).unwrap_or(&full)
            ))
        };
        let mut out = Changes::new();
        for r in &rows {
            let path = MemPath::parse_file(r.get(0))
                .map_err(|e| StoreError::Backend(format!("postgresql: stored path: {e}")))?;
            let before: Option<Vec<u8>> = r.get(1);
            let after: Option<Vec<u8>> = r.get(2);
            let now: Option<Vec<u8>> = r.get(3);
            if let Some(want) =
                memdir_core::diff::undo_file(before, after, now).map_err(|_| conflict())?
            {
                out.push((path, want));
            }
        }
        Ok((full, out))
    }
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
                        "SELECT EXISTS (SELECT 1 FROM memdir.changes WHERE tenant = $1)",
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
}
