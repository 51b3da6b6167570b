//! How a change is recorded: under the `git` change lock (taken whether or not history is
//! kept, so two changes never interleave), whatever changed outside memdir is recorded first,
//! then the change is recorded by its writer through the [`History`] seam.
//!
//! Before anything is written, the change's intent (operation, path, writer, source, reason,
//! and for a log append the offset and the entry) goes to `.memdir/journal`; it is cleared once
//! the change is recorded. A journal found by the next change (or by `context`) belongs to a
//! change that was killed or whose commit failed: that change is finished then, under the
//! lock: a torn append is cut back, temp files of the dead write are removed, `MEMORY.md` is
//! regenerated, and what was written is committed by its real writer, not as a hand edit.
//!
//! On a store whose change lock is a transaction ([`LockGuard::atomic`]: PostgreSQL), there is
//! no journal: every write and the record commit together when the lock is released, and a
//! killed change rolls back whole, so there is nothing to finish.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::guard::Writer as GuardWriter;
use crate::history::{Change as Record, FileChange, History};
use crate::provenance::{Actor, BlameLine, HAND_EDIT, HistoryEntry, apply};
use crate::store::{LockGuard, LockName, Precondition, Store, StoreError, Version};
use memdir_core::path::MemPath;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The file under `.memdir/` that holds the change in progress (empty: none).
pub const JOURNAL: &str = "journal";

/// A change's intent, as written to [`JOURNAL`] before the change touches a file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Intent {
    /// Format version.
    v: u32,
    op: String,
    path: String,
    writer: String,
    source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// When the change began (RFC 3339); its commit carries this time.
    at: String,
    /// The process that made it.
    pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    append: Option<AppendIntent>,
}

/// A log append in progress: the file, its size before the append and the entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct AppendIntent {
    pub(crate) path: String,
    pub(crate) offset: u64,
    pub(crate) entry: String,
}

/// The proof [`Ctx::writer`] asks for: only this file can make one, so a [`Change`] is the one
/// handle in the engine that writes.
pub(crate) struct Writes(());

/// The store's writing half, for this file's journal and recovery.
fn writer(cx: &Ctx) -> &dyn Store {
    cx.writer(&Writes(()))
}

/// An open change; call [`Change::commit`] once the files are written. A change dropped without
/// a commit (it failed part-way) still records what it wrote, by its writer.
pub(crate) struct Change<'a> {
    cx: &'a Ctx,
    history: Option<Arc<dyn History>>,
    op: String,
    path: String,
    reason: Option<String>,
    /// The kinds of the secrets the guard redacted from this change's content.
    redacted: Vec<&'static str>,
    /// Keep the journal: the change is applied but a follow-up (the commit, `MEMORY.md`)
    /// failed, so the next change finishes it.
    lagging: bool,
    done: bool,
    /// The change lock; `commit` releases it (dropping it releases it too).
    lock: Option<Box<dyn LockGuard>>,
    /// The lock is the store's transaction: no journal, and a failed record fails the change.
    atomic: bool,
    /// Why recording failed on an atomic store (the change is not kept).
    failed: Option<Error>,
}

/// Starts a change named `op` on `path`. Every change holds the change lock until it is
/// committed, with or without history: it serialises writers, so what a change read is
/// still current when it writes.
pub(crate) fn begin<'a>(cx: &'a Ctx, op: &str, path: &str) -> Result<Change<'a>, Error> {
    begin_with(cx, op, path, GuardWriter::Files, |_| Ok(None))
}

/// [`begin`] for a forget, whose paths pass no path guard (see [`Change::apply_forgotten`]).
pub(crate) fn begin_forget<'a>(cx: &'a Ctx, op: &str, path: &str) -> Result<Change<'a>, Error> {
    begin_with(cx, op, path, GuardWriter::Forget, |_| Ok(None))
}

/// [`begin`] for the gate's own changes to its ledger.
pub(crate) fn begin_gate<'a>(cx: &'a Ctx, op: &str, path: &str) -> Result<Change<'a>, Error> {
    begin_with(cx, op, path, GuardWriter::Gate, |_| Ok(None))
}

/// [`Memory::begin`] for a log append of `entry` to `file`: the journal records where the
/// file ended, so a torn append is cut back by the next change.
pub(crate) fn begin_append<'a>(
    cx: &'a Ctx,
    op: &str,
    file: &MemPath,
    entry: &str,
) -> Result<Change<'a>, Error> {
    begin_with(cx, op, file.as_str(), GuardWriter::Files, |mem| {
        let offset = match mem.store().stat(file)? {
            Some(e) => e.size,
            None => 0,
        };
        Ok(Some(AppendIntent {
            path: file.to_string(),
            offset,
            entry: entry.to_string(),
        }))
    })
}

fn begin_with<'a>(
    cx: &'a Ctx,
    op: &str,
    path: &str,
    who: GuardWriter,
    append: impl FnOnce(&Ctx) -> Result<Option<AppendIntent>, Error>,
) -> Result<Change<'a>, Error> {
    cx.refuse_bad_config()?;
    // The paths the change names pass the path guard before anything is written (each write
    // passes it again, for the paths it names itself).
    for p in path.split(" -> ") {
        if let Ok(p) = MemPath::parse(p) {
            crate::guard::path(cx, &p, who, || None)?;
        }
    }
    let lock = writer(cx).lock(LockName::Git)?;
    // Not yet journaled: dropped now, it records nothing.
    let mut tx = unjournaled(cx, lock, op, path);
    // A transaction leaves no temp files, no torn append and no journal: skip all three.
    if !tx.atomic {
        // A change killed while writing its journal (or any of memdir's own files) leaves a
        // temp file there, and no journal to say so.
        if let Err(e) = writer(cx).clean_temp_files(&MemPath::root(), false) {
            cx.warn(format!(
                "could not remove temp files of interrupted writes: {e}"
            ));
        }
        recover(&tx)?;
    }
    if let Some(h) = &tx.history {
        for p in path.split(" -> ") {
            if let Ok(p) = MemPath::parse_file(p) {
                h.check_recordable(&p)?;
            }
        }
        let prepared = h.prepare(cx.clock().now().timestamp());
        keep_warnings(cx, h.as_ref());
        prepared?;
    }
    if !tx.atomic {
        write_intent(&tx, op, path, append(cx)?)?;
    }
    tx.done = false;
    Ok(tx)
}

/// A change holding the change lock whose journal is not written: it records nothing unless
/// [`begin_with`] journals it. Recovery writes through one.
fn unjournaled<'a>(cx: &'a Ctx, lock: Box<dyn LockGuard>, op: &str, path: &str) -> Change<'a> {
    let atomic = lock.atomic();
    Change {
        cx,
        history: cx.history_backend().cloned(),
        op: op.to_string(),
        path: path.to_string(),
        reason: None,
        redacted: Vec::new(),
        lagging: false,
        done: true,
        lock: Some(lock),
        atomic,
        failed: None,
    }
}

/// Writes the change's intent to the journal before it touches a file.
fn write_intent(
    tx: &Change<'_>,
    op: &str,
    path: &str,
    append: Option<AppendIntent>,
) -> Result<(), Error> {
    let cx = tx.cx;
    let intent = Intent {
        v: 1,
        op: op.to_string(),
        path: path.to_string(),
        writer: cx.actor().writer.clone(),
        source: cx.actor().source.as_str().to_string(),
        reason: cx.reason().map(str::to_string),
        at: cx.clock().now().timestamp().to_string(),
        pid: std::process::id(),
        append,
    };
    let json = serde_json::to_vec(&intent)
        .map_err(|e| Error::Store(StoreError::Unavailable(format!("journal: {e}"))))?;
    tx.write_meta(JOURNAL, &json)?;
    Ok(())
}

fn keep_warnings(cx: &Ctx, h: &dyn History) {
    for line in h.take_warnings() {
        cx.warn(line);
    }
}

/// Finishes a change a killed process left in the journal (see the module docs). Runs
/// under the change lock; a memory with no journal costs one small read.
fn recover(tx: &Change<'_>) -> Result<(), Error> {
    let cx = tx.cx;
    let Some(bytes) = cx.store().read_meta(JOURNAL)? else {
        return Ok(());
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let Ok(intent) = serde_json::from_slice::<Intent>(&bytes) else {
        cx.warn(format!(
            "ignored an unreadable .memdir/{JOURNAL} (a change was interrupted; what it wrote is recorded as a hand edit)"
        ));
        tx.write_meta(JOURNAL, b"")?;
        return Ok(());
    };
    if let Some(a) = &intent.append {
        cut_torn_append(tx, a)?;
    }
    let path =
        MemPath::parse(intent.path.split(" -> ").next().unwrap_or_default()).unwrap_or_default();
    for dir in [path.parent().unwrap_or_default(), MemPath::root()] {
        // Cleaning up is never a reason to lock writers out.
        if let Err(e) = tx.clean_temp_files(&dir, false) {
            cx.warn(format!(
                "could not remove temp files of an interrupted change: {e}"
            ));
        }
    }
    if let Err(e) = crate::note_index::refresh(tx) {
        cx.warn(format!(
            "could not regenerate MEMORY.md after an interrupted change: {e}"
        ));
    }
    if let Some(h) = cx.history_backend() {
        let actor = Actor {
            writer: intent.writer.clone(),
            source: intent
                .source
                .parse()
                .unwrap_or(crate::provenance::Source::User),
        };
        let at = intent
            .at
            .parse()
            .unwrap_or_else(|_| cx.clock().now().timestamp());
        let committed = h.commit(&Record {
            op: &intent.op,
            path: &intent.path,
            reason: intent.reason.as_deref(),
            actor: &actor,
            at,
            via: None,
            whole_tree: true,
        });
        keep_warnings(cx, h.as_ref());
        committed?;
    }
    cx.warn(format!(
        "finished an interrupted change ({} {} by {}): recorded now",
        intent.op, intent.path, intent.writer
    ));
    tx.write_meta(JOURNAL, b"")?;
    Ok(())
}

/// Cuts a log file back to where an interrupted append began, unless the whole entry made
/// it (then it stays: it may have been acknowledged).
fn cut_torn_append(tx: &Change<'_>, a: &AppendIntent) -> Result<(), Error> {
    let cx = tx.cx;
    let Ok(path) = MemPath::parse_file(&a.path) else {
        return Ok(());
    };
    let Some(bytes) = cx.read_bytes_opt(&path)? else {
        return Ok(());
    };
    let Ok(start) = usize::try_from(a.offset) else {
        return Ok(());
    };
    let Some(tail) = bytes.get(start..) else {
        return Ok(());
    };
    let entry = a.entry.as_bytes();
    let body = tail.strip_prefix(b"\n").unwrap_or(tail);
    if tail.is_empty() || body == entry {
        return Ok(());
    }
    // Only a prefix of this very entry is cut: anything else was written by someone else.
    if entry.starts_with(body) {
        tx.write(&path, &bytes[..start])?;
        cx.warn(format!(
            "cut back a log entry in {} that an interrupted append left half-written",
            a.path
        ));
    }
    Ok(())
}

/// Finishes a change a killed memdir left, if there is one: taken under the change lock,
/// for readers (`context`) that would otherwise show a stale `MEMORY.md`. Best effort: a
/// failure is a warning, never a failed read.
pub(crate) fn heal_if_interrupted(cx: &Ctx) {
    let pending = matches!(cx.store().read_meta(JOURNAL), Ok(Some(b)) if !b.iter().all(u8::is_ascii_whitespace));
    if !pending {
        return;
    }
    let healed = writer(cx)
        .lock(LockName::Git)
        .map_err(Error::from)
        .and_then(|lock| recover(&unjournaled(cx, lock, "recover", "")));
    if let Err(e) = healed {
        cx.warn(format!("could not finish an interrupted change: {e}"));
    }
}

/// Writing: every byte a feature stores goes through one of these, while the change holds the
/// change lock and its journal says what it is doing.
impl<'a> Change<'a> {
    /// The context this change reads through.
    pub(crate) fn cx(&self) -> &'a Ctx {
        self.cx
    }

    fn store(&self) -> &'a dyn Store {
        writer(self.cx)
    }

    /// Takes a lock (a file's, the index's, the ledger's) inside this change: always after the
    /// change lock, so locks are taken in one order.
    pub(crate) fn lock(&self, name: LockName<'_>) -> Result<Box<dyn LockGuard>, StoreError> {
        self.store().lock(name)
    }

    /// The path guard ([`crate::guard::path`]) every write below runs first.
    fn admit(&self, path: &MemPath, writer: GuardWriter) -> Result<(), Error> {
        crate::guard::path(self.cx, path, writer, || {
            self.cx.read_opt(path).ok().flatten()
        })
    }

    /// [`Store::write_if`], after the path guard.
    pub(crate) fn write_if(
        &self,
        path: &MemPath,
        data: &[u8],
        pre: &Precondition,
    ) -> Result<Version, Error> {
        self.admit(path, GuardWriter::Content)?;
        Ok(self.store().write_if(path, data, pre)?)
    }

    /// [`Store::write`], after the path guard.
    pub(crate) fn write(&self, path: &MemPath, data: &[u8]) -> Result<(), Error> {
        self.admit(path, GuardWriter::Content)?;
        Ok(self.store().write(path, data)?)
    }

    /// [`Store::append`], after the path guard.
    pub(crate) fn append(&self, path: &MemPath, data: &[u8]) -> Result<(), Error> {
        self.admit(path, GuardWriter::Content)?;
        Ok(self.store().append(path, data)?)
    }

    /// [`Store::remove`], after the path guard.
    pub(crate) fn remove(&self, path: &MemPath) -> Result<(), Error> {
        self.admit(path, GuardWriter::Files)?;
        Ok(self.store().remove(path)?)
    }

    /// [`Store::rename`], after the path guard (for both paths).
    pub(crate) fn rename(&self, from: &MemPath, to: &MemPath) -> Result<(), Error> {
        self.admit(from, GuardWriter::Files)?;
        self.admit(to, GuardWriter::Files)?;
        Ok(self.store().rename(from, to)?)
    }

    /// Puts each file back as given (`None`: removed): an undo, a restore, a forget. Every path
    /// passes the guard before any is written.
    pub(crate) fn apply(&self, changes: &[(MemPath, Option<Vec<u8>>)]) -> Result<(), Error> {
        for (path, _) in changes {
            self.admit(path, GuardWriter::Files)?;
        }
        Ok(apply(self.store(), changes)?)
    }

    /// Puts back what a forget left of each file (`None`: removed). A forget is the user's and
    /// takes the content out of whatever file holds it, as it does from history, so it passes
    /// no path guard.
    pub(crate) fn apply_forgotten(
        &self,
        changes: &[(MemPath, Option<Vec<u8>>)],
    ) -> Result<(), Error> {
        Ok(apply(self.store(), changes)?)
    }

    /// Writes a generated index (`MEMORY.md`, a folder's index): for the index code only.
    pub(crate) fn write_index(&self, path: &MemPath, data: &[u8]) -> Result<(), Error> {
        self.admit(path, GuardWriter::Index)?;
        Ok(self.store().write(path, data)?)
    }

    /// Appends to the gates' ledger: for the gate only.
    pub(crate) fn append_ledger(&self, path: &MemPath, data: &[u8]) -> Result<(), Error> {
        self.admit(path, GuardWriter::Gate)?;
        Ok(self.store().append(path, data)?)
    }

    /// [`Store::clean_temp_files`].
    pub(crate) fn clean_temp_files(&self, dir: &MemPath, deep: bool) -> Result<usize, StoreError> {
        self.store().clean_temp_files(dir, deep)
    }

    /// [`Store::write_meta`]: one of memdir's own files.
    pub(crate) fn write_meta(&self, name: &str, data: &[u8]) -> Result<(), StoreError> {
        self.store().write_meta(name, data)
    }
}

impl Change<'_> {
    /// This change, recorded as `op` on `path` instead of what it began as (a write to core
    /// that became a proposal is recorded as `propose core.md`).
    pub(crate) fn recorded_as(mut self, op: &str, path: &str) -> Self {
        self.op = op.to_string();
        self.path = path.to_string();
        self
    }

    /// This change, recorded with `reason` when the writer gave none.
    pub(crate) fn default_reason(mut self, reason: String) -> Self {
        self.reason = Some(reason);
        self
    }

    /// This change, recording that the guard redacted secrets of `kinds` from what it wrote
    /// (in its reason: how many and of which kinds, never the values).
    pub(crate) fn redacted(mut self, kinds: &[&'static str]) -> Self {
        self.redacted.extend_from_slice(kinds);
        self
    }

    /// Marks the change as applied with a follow-up left to the next change (see
    /// [`Memory::recover`]): the journal is kept.
    pub(crate) fn lagging(&mut self) {
        self.lagging = true;
    }

    /// Records what the change wrote (nothing when there is no history or no change).
    ///
    /// The files are written by now, so a failed commit does not fail the change: it is
    /// reported as applied with a warning, and the journal stays so the next change records
    /// it by its writer. A retry would only duplicate it.
    ///
    /// On an atomic store the record is part of the change: if it or the transaction's commit
    /// fails, nothing of the change is kept and this says so.
    pub(crate) fn commit(mut self) -> Result<(), Error> {
        self.finish();
        let released = self.lock.take().map_or(Ok(()), |l| l.release());
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(released?),
        }
    }

    fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let mem = self.cx;
        if let Some(h) = &self.history {
            let reason = mem.reason().or(self.reason.as_deref());
            let reason = match (reason, crate::guard::note(&self.redacted)) {
                (Some(r), Some(n)) => Some(format!("{r} ({n})")),
                (None, Some(n)) => Some(n),
                (r, None) => r.map(str::to_string),
            };
            let committed = h.commit(&Record {
                op: &self.op,
                path: &self.path,
                reason: reason.as_deref(),
                actor: mem.actor(),
                at: mem.clock().now().timestamp(),
                via: mem.via(),
                whole_tree: false,
            });
            keep_warnings(mem, h.as_ref());
            if let Err(e) = committed {
                if self.atomic {
                    // The store rolls the change back with its record (see `commit`).
                    self.failed = Some(e.into());
                    return;
                }
                mem.warn(format!(
                    "{} {} is saved, but recording it in history failed ({e}): history lags until the next change records it",
                    self.op, self.path
                ));
                return;
            }
        }
        if self.lagging || self.atomic {
            return;
        }
        if let Err(e) = writer(mem).write_meta(JOURNAL, b"") {
            mem.warn(format!(
                "could not clear .memdir/{JOURNAL} ({e}): the next change finishes it"
            ));
        }
    }
}

impl Drop for Change<'_> {
    fn drop(&mut self) {
        // A change that failed part-way: whatever it wrote is still its writer's.
        self.finish();
    }
}

fn repo(cx: &Ctx) -> Result<&Arc<dyn History>, Error> {
    if !cx.config().git.enabled {
        return Err(Error::Invalid(
            "git history is off for this memory folder ([git] enabled = false in .memdir/config.toml): set it to true, then run `memdir init` to start recording".into(),
        ));
    }
    cx.history_backend().ok_or_else(|| {
        Error::Invalid(
            "this memory folder has no git history: run `memdir init` to start one".into(),
        )
    })
}

/// Commits that changed `path` (all when `None`), newest first.
pub(crate) fn history(
    cx: &Ctx,
    path: Option<&str>,
    limit: usize,
) -> Result<Vec<HistoryEntry>, Error> {
    let p = path.map(MemPath::parse_file).transpose()?;
    let mut entries = repo(cx)?.history(p.as_ref(), limit)?;
    for e in &mut entries {
        e.date = cx.clock().local_text(&e.date);
    }
    Ok(entries)
}

/// Who last changed each line of a file, and why.
pub(crate) fn blame(cx: &Ctx, path: &str) -> Result<Vec<BlameLine>, Error> {
    let p = MemPath::parse_file(path)?;
    let mut lines = repo(cx)?.blame(&p)?;
    for l in &mut lines {
        l.date = cx.clock().local_text(&l.date);
    }
    Ok(lines)
}

/// The files change `commit` (a prefix naming one) touched, each before and after it, with the
/// change's full id: its diff, and any file as of any change.
pub(crate) fn change_files(cx: &Ctx, commit: &str) -> Result<(String, Vec<FileChange>), Error> {
    Ok(repo(cx)?.files_of(commit)?)
}

/// Reverts a commit with a new commit (recorded as `undo <commit id>`); returns the reverted
/// commit's id. History is never rewritten.
///
/// Without a commit it steps back: the newest change memdir made that is neither an undo
/// nor undone already, so undoing twice undoes the last two changes. Naming an undo's commit
/// reverts that undo (a redo).
pub(crate) fn undo(cx: &Ctx, commit: Option<&str>) -> Result<String, Error> {
    let history = repo(cx)?.clone();
    let tx = begin(cx, "undo", commit.unwrap_or("last change"))?;
    let target = match commit {
        Some(c) => c.to_string(),
        None => step_back(&history.history(None, 1000)?)?,
    };
    let (id, changes) = history.revert(&target)?;
    tx.apply(&changes)?;
    let reason = format!("undo {}", id.get(..10).unwrap_or(&id));
    tx.default_reason(reason)
        .recorded_as("undo", &id)
        .commit()?;
    Ok(id)
}

/// The commit a plain `undo` reverts: walking back from the newest, an undo that was itself
/// undone is skipped, a live undo marks its target as undone and is skipped, and the first
/// other change memdir made (not a hand edit) is the one.
fn step_back(history: &[HistoryEntry]) -> Result<String, Error> {
    let mut undone: Vec<&str> = Vec::new();
    for h in history {
        if h.writer == HAND_EDIT {
            continue;
        }
        let is_undone = undone.iter().any(|u| h.commit.starts_with(u));
        if let Some(target) = h.summary.strip_prefix("undo ") {
            // Undos made before the target was named in the summary name it in the reason.
            let target = match target.trim() {
                "last change" => h.reason.as_deref().and_then(|r| r.strip_prefix("undo ")),
                t => Some(t),
            };
            if let Some(t) = target.map(str::trim).filter(|t| t.len() >= 4)
                && !is_undone
            {
                undone.push(t);
            }
            continue;
        }
        if !is_undone {
            return Ok(h.commit.clone());
        }
    }
    Err(Error::NotFound("nothing to undo".into()))
}
