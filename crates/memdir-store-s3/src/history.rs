//! History in the bucket: one journal object per change, contents kept by version.
//!
//! While a history is attached, every store write notes the file's version before its first
//! change since the last record (keeping that content under `blobs/<version>`) and the bytes
//! after its latest. [`History::commit`] (called by the engine under the `git` lock) turns
//! those notes into one journal object, `journal/<19 digits: 9999999999999999999 - seq>-<id>`,
//! a JSON record of who, when, why and each file's version before and after, and keeps the new
//! contents under `blobs/`. The key's descending number makes a listing newest first, and the
//! id in the key lets `undo <prefix>` find a change from the listing alone. Journal objects
//! never change once written, so this process keeps the ones it has read. After a `forget`
//! the journal in effect is the one the `history-head` object names (`journals/<id>/`, laid
//! out the same); the `forget` module has how it is written and switched in.
//!
//! History, blame and revert read the journal and answer in the shape of a folder's git
//! history. What is recorded is what memdir wrote: objects changed in the bucket by other
//! tools are not noticed until memdir next writes them (then their state at that moment is the
//! "before" of that change).

use crate::Tenant;
use crate::forget::ForgetRecord;
use bytes::Bytes;
use memdir_core::forget::Forget;
use memdir_core::path::MemPath;
use memdir_store::history::FileChange as Touched;
use memdir_store::history::{BlameLine, BlameWho, Changes, ForgetReport, HistoryEntry, rfc3339};
use memdir_store::history::{Change, History};
use memdir_store::store::Version;
use memdir_store::{Source, StoreError};
use object_store::PutMode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What `start` records: the memory as `init` left it, authored by memdir itself.
const INIT_MESSAGE: &str = "init memory folder\n";

/// The largest sequence number; keys count down from it.
pub(crate) const TOP: u64 = 9_999_999_999_999_999_999;

/// The state object naming the journal in effect when it is not `journal` (see
/// [`Tenant::journal_dir`]).
pub(crate) const HEAD: &str = "history-head";

/// The journal of a memory no forget has rewritten.
pub(crate) const FIRST_JOURNAL: &str = "journal";

/// Where the journals a forget writes go: `journals/<random id>`.
pub(crate) const JOURNALS: &str = "journals";

/// A memory's change history.
pub struct S3History {
    pub(crate) t: Arc<Tenant>,
    pub(crate) bridge: Arc<memdir_store::bridge::Bridge>,
}

/// One file of a change: its version before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FileChange {
    pub(crate) path: String,
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
}

/// One change, as its journal object holds it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Record {
    pub(crate) id: String,
    pub(crate) seq: u64,
    pub(crate) at_s: i64,
    pub(crate) writer: String,
    pub(crate) source: Option<String>,
    pub(crate) summary: String,
    pub(crate) reason: Option<String>,
    pub(crate) message: String,
    pub(crate) files: Vec<FileChange>,
}

impl Record {
    fn entry(&self) -> HistoryEntry {
        HistoryEntry {
            commit: self.id.clone(),
            writer: self.writer.clone(),
            date: rfc3339(self.at_s),
            summary: self.summary.clone(),
            reason: self.reason.clone(),
            source: self.source.clone(),
        }
    }

    fn touches(&self, path: &MemPath) -> bool {
        let p = path.as_str();
        self.files.iter().any(|f| {
            f.path == p || (f.path.starts_with(p) && f.path.as_bytes().get(p.len()) == Some(&b'/'))
        })
    }
}

/// Journal objects read by this process, by key: they never change.
type Seen = Mutex<HashMap<String, Arc<Record>>>;

fn seen() -> &'static Seen {
    static SEEN: std::sync::OnceLock<Seen> = std::sync::OnceLock::new();
    SEEN.get_or_init(Seen::default)
}

/// A journal key's sequence number and change id.
fn parse_key(leaf: &str) -> Option<(u64, &str)> {
    let (n, id) = leaf.split_once('-')?;
    Some((TOP.checked_sub(n.parse().ok()?)?, id))
}

/// A change's id: from the memory, its sequence number, time, writer and message.
pub(crate) fn record_id(tenant: &str, seq: u64, at_s: i64, writer: &str, message: &str) -> String {
    Version::of(format!("{tenant}\n{seq}\n{at_s}\n{writer}\n{message}").as_bytes()).to_string()
}

/// A journal's keys, newest first, with their sequence numbers and ids.
pub(crate) type Journal = Vec<(object_store::path::Path, u64, String)>;

impl Tenant {
    /// The journal in effect: `journal`, until a forget wrote a new one under `journals/` and
    /// named it in the [`HEAD`] object (the one switch that makes a rewritten history current).
    pub(crate) async fn journal_dir(&self) -> Result<String, StoreError> {
        let head = self.get(&self.state_key(HEAD)?).await?;
        self.journal_named(head.as_ref().map(|(b, _)| b.as_ref()))
    }

    /// The journal a head object's bytes name (`None`: no head). A head that changed since this
    /// process last saw it means a forget ran elsewhere and deleted contents: the versions this
    /// process knew to be kept are not known any more.
    pub(crate) fn journal_named(&self, head: Option<&[u8]>) -> Result<String, StoreError> {
        let Some(body) = head else {
            return Ok(FIRST_JOURNAL.to_string());
        };
        let dir = String::from_utf8_lossy(body).trim().to_string();
        let valid = dir
            .strip_prefix(JOURNALS)
            .and_then(|r| r.strip_prefix('/'))
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit()));
        if !valid {
            return Err(StoreError::Unavailable(format!(
                "s3: the history head ({HEAD}) is damaged: it names {dir:?}"
            )));
        }
        let mut seen = self.head_seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.as_deref() != Some(dir.as_str()) {
            self.known_blobs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            *seen = Some(dir.clone());
        }
        Ok(dir)
    }

    /// The journal in effect's keys, newest first, with their sequence numbers and ids.
    async fn journal(&self) -> Result<Journal, StoreError> {
        let dir = self.journal_dir().await?;
        self.journal_in(&dir).await
    }

    /// The keys of the journal under `dir`, newest first, with their sequence numbers and ids.
    pub(crate) async fn journal_in(&self, dir: &str) -> Result<Journal, StoreError> {
        let prefix = self.state_key(dir)?;
        let mut out: Vec<_> = self
            .list_all(&prefix)
            .await?
            .into_iter()
            .filter_map(|o| {
                let leaf = o.location.filename()?.to_string();
                let (seq, id) = parse_key(&leaf)?;
                let id = id.to_string();
                Some((o.location, seq, id))
            })
            .collect();
        out.sort_by_key(|k| std::cmp::Reverse(k.1));
        Ok(out)
    }

    /// The newest change's sequence number (0 when there is none), from the listing's first
    /// page only: keys sort newest first.
    async fn newest_seq(&self, dir: &str) -> Result<u64, StoreError> {
        use futures::StreamExt;
        let prefix = self.state_key(dir)?;
        let mut listing = self.os.list(Some(&prefix));
        self.count_list();
        match listing.next().await {
            None => Ok(0),
            Some(Ok(o)) => Ok(o
                .location
                .filename()
                .and_then(parse_key)
                .map_or(0, |(seq, _)| seq)),
            Some(Err(e)) => Err(crate::s3_err("list", e)),
        }
    }

    pub(crate) async fn record_at(
        &self,
        key: &object_store::path::Path,
    ) -> Result<Arc<Record>, StoreError> {
        let id = format!("{}|{}|{key}", self.endpoint, self.url.bucket);
        if let Some(r) = seen().lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return Ok(r.clone());
        }
        let Some((body, _)) = self.get(key).await? else {
            return Err(StoreError::Unavailable(format!(
                "s3: the history entry {key} vanished while it was read"
            )));
        };
        let r: Arc<Record> = Arc::new(serde_json::from_slice(&body).map_err(|e| {
            StoreError::Unavailable(format!("s3: a history entry ({key}) is damaged: {e}"))
        })?);
        seen()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, r.clone());
        Ok(r)
    }

    pub(crate) async fn blob(&self, v: Option<&str>) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(v) = v else { return Ok(None) };
        let key = self.state_key(&format!("blobs/{v}"))?;
        match self.get(&key).await? {
            Some((b, _)) => Ok(Some(b.to_vec())),
            None => Err(StoreError::Unavailable(format!(
                "s3: the content of version {} is missing from the history",
                v.get(..12).unwrap_or(v)
            ))),
        }
    }

    /// Records what changed since the last record as one change; `None` when nothing did.
    async fn record(
        &self,
        writer: String,
        source: Option<String>,
        message: String,
        reason: Option<String>,
        at_s: i64,
        files: Vec<(MemPath, Option<Version>, Option<Bytes>)>,
    ) -> Result<Option<String>, StoreError> {
        // The journal first: it tells whether contents known to be kept still are.
        let dir = self.journal_dir().await?;
        let mut changed = Vec::new();
        for (path, before, after) in files {
            let after_v = after.as_ref().map(|b| Version::of(b));
            if before == after_v {
                continue;
            }
            if let (Some(v), Some(b)) = (&after_v, after) {
                self.keep_blob(v, Some(b), None).await?;
            }
            changed.push(FileChange {
                path: path.as_str().to_string(),
                before: before.map(|v| v.as_str().to_string()),
                after: after_v.map(|v| v.as_str().to_string()),
            });
        }
        if changed.is_empty() {
            return Ok(None);
        }
        self.append_record(&dir, writer, source, message, reason, at_s, changed)
            .await
            .map(Some)
    }

    /// Writes a journal object for a change of `files` (none for a change that changed no
    /// file) as the next number after the newest; returns its id.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn append_record(
        &self,
        dir: &str,
        writer: String,
        source: Option<String>,
        message: String,
        reason: Option<String>,
        at_s: i64,
        files: Vec<FileChange>,
    ) -> Result<String, StoreError> {
        let summary = message.lines().next().unwrap_or_default().to_string();
        // The next number after the newest; a concurrent recorder that took it makes us retry.
        for _ in 0..20 {
            let seq = self.newest_seq(dir).await? + 1;
            let id = record_id(&self.url.tenant, seq, at_s, &writer, &message);
            let record = Record {
                id: id.clone(),
                seq,
                at_s,
                writer: writer.clone(),
                source: source.clone(),
                summary: summary.clone(),
                reason: reason.clone(),
                message: message.clone(),
                files: files.clone(),
            };
            if self.put_record(dir, &record).await? {
                return Ok(id);
            }
        }
        Err(StoreError::Conflict(
            "could not record the change: other writers kept recording at the same time; try again"
                .into(),
        ))
    }

    /// Writes `record` into the journal under `dir` (create-only); false when its number is
    /// taken.
    pub(crate) async fn put_record(&self, dir: &str, record: &Record) -> Result<bool, StoreError> {
        let body = serde_json::to_vec(record)
            .map_err(|e| StoreError::Unavailable(format!("s3: cannot write history: {e}")))?;
        let key = self.state_key(&format!("{dir}/{:019}-{}", TOP - record.seq, record.id))?;
        Ok(matches!(
            self.put(&key, Bytes::from(body), PutMode::Create, None)
                .await?,
            crate::Put::Done(_)
        ))
    }

    /// Takes the notes of what changed since the last record.
    fn drain_pending(&self) -> Vec<(MemPath, Option<Version>, Option<Bytes>)> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
            .into_iter()
            .map(|(p, n)| (p, n.before, n.after))
            .collect()
    }

    async fn start(&self, at_s: i64) -> Result<(), StoreError> {
        if !self.journal().await?.is_empty() {
            return Ok(());
        }
        // Everything there now is the first change, as a folder's first commit.
        self.drain_pending();
        let mut files = Vec::new();
        for (e, _) in self.walk(&MemPath::root()).await? {
            if let Some((b, _)) = self.get(&self.key(&e.path)?).await? {
                files.push((e.path, None, Some(b)));
            }
        }
        self.record(
            "memdir".into(),
            Some(Source::User.as_str().to_string()),
            INIT_MESSAGE.into(),
            None,
            at_s,
            files,
        )
        .await
        .map(drop)
    }

    async fn history(
        &self,
        path: Option<MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let mut out = Vec::new();
        for (key, _, _) in self.journal().await? {
            if out.len() >= limit {
                break;
            }
            let r = self.record_at(&key).await?;
            if path.as_ref().is_none_or(|p| r.touches(p)) {
                out.push(r.entry());
            }
        }
        Ok(out)
    }

    async fn blame(&self, path: MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let mut records = Vec::new();
        for (key, _, _) in self.journal().await?.into_iter().rev() {
            let r = self.record_at(&key).await?;
            if let Some(f) = r.files.iter().find(|f| f.path == path.as_str()) {
                let f = f.clone();
                records.push((r, f));
            }
        }
        let mut versions = Vec::with_capacity(records.len());
        for (r, f) in records {
            let content = self.blob(f.after.as_deref()).await?;
            let who = BlameWho {
                commit: r.id.clone(),
                writer: r.writer.clone(),
                date: rfc3339(r.at_s),
                reason: r.reason.clone(),
            };
            versions.push((
                who,
                content.map(|c| String::from_utf8_lossy(&c).into_owned()),
            ));
        }
        memdir_store::history::blame_versions(&path, versions)
    }

    /// The record of the one change whose id starts with `prefix`, and whether it is the
    /// first change (the one that created the folder).
    async fn find(&self, prefix: &str) -> Result<(Arc<Record>, bool), StoreError> {
        let no_such =
            || StoreError::NotFound(format!("no commit {prefix:?}: see `memdir history`"));
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(no_such());
        }
        let want = prefix.to_ascii_lowercase();
        let journal = self.journal().await?;
        let found: Vec<_> = journal
            .iter()
            .filter(|(_, _, id)| id.starts_with(&want))
            .collect();
        let (key, seq, _) = match found.as_slice() {
            [one] => *one,
            [] => return Err(no_such()),
            _ => {
                return Err(StoreError::InvalidPath(format!(
                    "commit {prefix:?} is ambiguous: give more of its id"
                )));
            }
        };
        let first = journal.last().is_some_and(|(_, first, _)| first == seq);
        Ok((self.record_at(key).await?, first))
    }

    async fn files_of(&self, prefix: String) -> Result<(String, Vec<Touched>), StoreError> {
        let (r, _) = self.find(&prefix).await?;
        let mut out = Vec::new();
        for f in &r.files {
            let path = MemPath::parse_file(&f.path)
                .map_err(|e| StoreError::Unavailable(format!("s3: stored path: {e}")))?;
            let before = self.blob(f.before.as_deref()).await?;
            let after = self.blob(f.after.as_deref()).await?;
            if before != after {
                out.push(Touched {
                    path,
                    before,
                    after,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((r.id.clone(), out))
    }

    async fn revert(&self, prefix: String) -> Result<(String, Changes), StoreError> {
        let (r, first) = self.find(&prefix).await?;
        if first {
            return Err(StoreError::Conflict(
                "cannot undo the first commit: it created the folder".into(),
            ));
        }
        let conflict = || {
            StoreError::Conflict(format!(
                "cannot undo {}: later changes touch the same lines; edit the file instead",
                r.id.get(..8).unwrap_or(&r.id)
            ))
        };
        let mut out = Changes::new();
        for f in &r.files {
            let path = MemPath::parse_file(&f.path)
                .map_err(|e| StoreError::Unavailable(format!("s3: stored path: {e}")))?;
            let before = self.blob(f.before.as_deref()).await?;
            let after = self.blob(f.after.as_deref()).await?;
            let now = self.get(&self.key(&path)?).await?.map(|(b, _)| b.to_vec());
            if let Some(want) =
                memdir_core::diff::undo_file(before, after, now).map_err(|_| conflict())?
            {
                out.push((path, want));
            }
        }
        Ok((r.id.clone(), out))
    }
}

impl History for S3History {
    fn enabled(&self) -> bool {
        true
    }

    fn start(&self, at: jiff::Timestamp) -> Result<(), StoreError> {
        let t = self.t.clone();
        self.bridge
            .run(async move { t.start(at.as_second()).await })
    }

    fn prepare(&self, _at: jiff::Timestamp) -> Result<(), StoreError> {
        // Nothing to do: what other tools change in the bucket is not tracked (module docs).
        Ok(())
    }

    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let t = self.t.clone();
        let writer = change.actor.writer.clone();
        let source = Some(change.actor.source.as_str().to_string());
        let message = change.message();
        let reason = one_line(change.reason);
        let at = change.at.as_second();
        self.bridge.run(async move {
            let files = t.drain_pending();
            t.record(writer, source, message, reason, at, files).await
        })
    }

    fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let t = self.t.clone();
        let path = path.cloned();
        self.bridge.run(async move { t.history(path, limit).await })
    }

    fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError> {
        let t = self.t.clone();
        let path = path.clone();
        self.bridge.run(async move { t.blame(path).await })
    }

    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError> {
        let t = self.t.clone();
        let id = id.to_string();
        self.bridge.run(async move { t.revert(id).await })
    }

    fn files_of(&self, id: &str) -> Result<(String, Vec<Touched>), StoreError> {
        let t = self.t.clone();
        let id = id.to_string();
        self.bridge.run(async move { t.files_of(id).await })
    }

    fn forget(
        &self,
        forget: &Forget,
        record: &Change<'_>,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let t = self.t.clone();
        let forget = forget.clone();
        let record = ForgetRecord {
            writer: record.actor.writer.clone(),
            source: Some(record.actor.source.as_str().to_string()),
            message: record.message(),
            reason: one_line(record.reason),
            at_s: record.at.as_second(),
        };
        self.bridge
            .run(async move { t.forget(&forget, record, dry_run).await })
    }

    fn record_empty(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let t = self.t.clone();
        let writer = change.actor.writer.clone();
        let source = Some(change.actor.source.as_str().to_string());
        let message = change.message();
        let reason = one_line(change.reason);
        let at = change.at.as_second();
        self.bridge.run(async move {
            let dir = t.journal_dir().await?;
            t.append_record(&dir, writer, source, message, reason, at, Vec::new())
                .await
                .map(Some)
        })
    }

    fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.t.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A reason as recorded: trimmed, on one line, `None` when blank.
fn one_line(reason: Option<&str>) -> Option<String> {
    reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| r.replace('\n', " "))
}
