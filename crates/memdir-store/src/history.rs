//! The history seam: every change made through memdir is recorded with its writer, reason and
//! source, and can be listed, blamed and reverted.
//!
//! [`History`] is the trait; a folder records into git (`memdir-folder`), a database keeps
//! tables, the in-memory reference keeps snapshots. The engine calls `prepare` and `commit`
//! under the `git` change lock, so records never interleave. The types here are what every
//! backend records and lists: [`Actor`], [`Source`], [`HistoryEntry`], [`BlameLine`].

use crate::store::StoreError;
use jiff::Timestamp;
use memdir_core::forget::Forget;
use memdir_core::path::MemPath;
use serde::Serialize;

/// Trailer that carries the reason in a commit message.
pub const REASON_TRAILER: &str = "Memdir-Reason";
/// Trailer that carries the source (`user`, `agent`, `external`).
pub const SOURCE_TRAILER: &str = "Memdir-Source";
/// Trailer that names the channel a change came through, when not the agent's own tools
/// (`web`: memdir's page).
pub const VIA_TRAILER: &str = "Memdir-Via";
/// The author name of commits that record edits made by hand.
pub const HAND_EDIT: &str = "hand-edit";

/// Who makes a change, and from where its content comes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The writer identity (`--writer`, `MEMDIR_WRITER`, or the MCP client's name).
    pub writer: String,
    /// Where the content comes from.
    pub source: Source,
}

impl Default for Actor {
    fn default() -> Self {
        Actor {
            writer: "main".to_string(),
            source: Source::User,
        }
    }
}

/// The trust label of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Typed or approved by the person.
    User,
    /// Written by an agent on its own judgement.
    Agent,
    /// Content from outside: the web, files, tool output. Never trusted as instructions.
    External,
}

impl Source {
    /// The label as written in files and commits.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Agent => "agent",
            Source::External => "external",
        }
    }
}

impl std::str::FromStr for Source {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "user" => Ok(Source::User),
            "agent" => Ok(Source::Agent),
            "external" => Ok(Source::External),
            _ => Err(format!("bad source {s:?}: use user, agent or external")),
        }
    }
}

/// One commit in a history listing.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryEntry {
    /// Full commit id.
    pub commit: String,
    /// The author: the writer.
    pub writer: String,
    /// Commit time, RFC 3339.
    pub date: String,
    /// The first line of the message.
    pub summary: String,
    /// The reason, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The source label, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A change's time as every history records it: RFC 3339 in UTC, whole seconds
/// (`2026-11-30T09:15:00Z`); empty for a time jiff cannot represent.
pub fn rfc3339(at_s: i64) -> String {
    Timestamp::from_second(at_s)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// File changes to apply: `(path, Some(content))` writes, `(path, None)` deletes.
pub type Changes = Vec<(MemPath, Option<Vec<u8>>)>;

/// One file a recorded change touched, as it was just before the change and just after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file.
    pub path: MemPath,
    /// Its content before the change; `None` when the change created it.
    pub before: Option<Vec<u8>>,
    /// Its content after the change; `None` when the change deleted it.
    pub after: Option<Vec<u8>>,
}

/// One line of a blame.
#[derive(Debug, Clone, Serialize)]
pub struct BlameLine {
    /// 1-based line number.
    pub line: usize,
    /// The commit that last changed the line.
    pub commit: String,
    /// Its writer.
    pub writer: String,
    /// Its time, RFC 3339.
    pub date: String,
    /// Its reason, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The line's text.
    pub text: String,
}

/// Who made one recorded version of a file, for [`blame_versions`].
#[derive(Debug, Clone)]
pub struct BlameWho {
    /// The change's id.
    pub commit: String,
    /// Its writer.
    pub writer: String,
    /// Its time, RFC 3339.
    pub date: String,
    /// Its reason, if any.
    pub reason: Option<String>,
}

/// Blame for the stores that keep each version of a file themselves (in memory, PostgreSQL,
/// S3; the folder asks git): `versions` is the file's text after each change that touched it,
/// oldest first, with who made the change (`None`: the change removed the file). Each line of
/// the last version is credited to the change that last brought it in (a line diff carries it
/// through the versions between); a removed file starts over.
pub fn blame_versions(
    path: &MemPath,
    versions: impl IntoIterator<Item = (BlameWho, Option<String>)>,
) -> Result<Vec<BlameLine>, StoreError> {
    let mut who: Vec<BlameWho> = Vec::new();
    let mut lines: Vec<(String, usize)> = Vec::new();
    let mut exists = false;
    for (w, text) in versions {
        let me = who.len();
        who.push(w);
        match text {
            Some(text) => {
                exists = true;
                lines = memdir_core::diff::carry_lines(&lines, &text, me);
            }
            None => {
                exists = false;
                lines.clear();
            }
        }
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
                commit: w.commit.clone(),
                writer: w.writer.clone(),
                date: w.date.clone(),
                reason: w.reason.clone(),
                text,
            }
        })
        .collect())
}

/// Commit message for an operation: `op path`, then the reason and trailers.
pub fn message(op: &str, path: &str, reason: Option<&str>, source: Source) -> String {
    let mut m = format!("{op} {path}\n");
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if let Some(r) = reason {
        m.push('\n');
        m.push_str(r);
        m.push('\n');
    }
    m.push('\n');
    if let Some(r) = reason {
        m.push_str(&format!("{REASON_TRAILER}: {}\n", r.replace('\n', " ")));
    }
    m.push_str(&format!("{SOURCE_TRAILER}: {}\n", source.as_str()));
    m
}

/// One change about to be recorded.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    /// The operation (`write`, `edit`, `note new`, `undo`, ...).
    pub op: &'a str,
    /// The path (or `from -> to`) it was made on.
    pub path: &'a str,
    /// Why, when the writer said.
    pub reason: Option<&'a str>,
    /// Who made it.
    pub actor: &'a Actor,
    /// When.
    pub at: Timestamp,
    /// The channel it came through (`web`), recorded as a [`VIA_TRAILER`] trailer.
    pub via: Option<&'a str>,
    /// True when what the change wrote is not known path by path: it is finished for a
    /// process that was killed (see the engine's change journal), so a folder compares its whole
    /// tree instead of staging the paths this process touched.
    pub whole_tree: bool,
}

impl Change<'_> {
    /// The commit message git records: `op path`, the reason, then the trailers.
    pub fn message(&self) -> String {
        let mut m = message(self.op, self.path, self.reason, self.actor.source);
        if let Some(via) = self.via {
            m.push_str(&format!("{VIA_TRAILER}: {via}\n"));
        }
        m
    }
}

/// One change a forget rewrote: its id before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rewritten {
    /// The change's id before the rewrite (gone from history now).
    pub old: String,
    /// Its id in the rewritten history.
    pub new: String,
}

/// What a forget did to history (or, on a dry run, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ForgetReport {
    /// The changes whose recorded content (or message) held what is forgotten, oldest first.
    /// Later changes get new ids too (they sit on rewritten ones) and are not listed.
    pub rewritten: Vec<Rewritten>,
    /// Versions of files that changed: a file version without the forgotten lines, or gone.
    pub versions: usize,
    /// Lines removed across those versions (a file forget counts none).
    pub lines: usize,
    /// The id of the change that records the forget, once it is recorded.
    pub recorded: Option<String>,
}

/// A memory's change history.
///
/// Ids are opaque text (a folder's are git commit ids); a prefix of an id that names one
/// change is accepted by [`History::revert`]. Entries come newest first.
pub trait History: Send + Sync {
    /// True when this memory records history (a folder without a repository does not).
    fn enabled(&self) -> bool;

    /// Starts recording (idempotent): a folder becomes a git repository and what is there is
    /// the first commit.
    fn start(&self, at: Timestamp) -> Result<(), StoreError>;

    /// Called under the change lock before a change is applied: records whatever changed
    /// outside memdir since the last change (a folder's hand edits, authored
    /// [`HAND_EDIT`]), so it is never mixed into memdir's own record.
    fn prepare(&self, at: Timestamp) -> Result<(), StoreError>;

    /// Records what changed since `prepare` as one change; `None` when nothing changed.
    fn commit(&self, change: &Change<'_>) -> Result<Option<String>, StoreError>;

    /// Changes that touched `path` (all when `None`), newest first, at most `limit`.
    fn history(
        &self,
        path: Option<&MemPath>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError>;

    /// Who last changed each line of a file, and why.
    fn blame(&self, path: &MemPath) -> Result<Vec<BlameLine>, StoreError>;

    /// The file contents that undo change `id` (a prefix naming one change) on top of the
    /// current state, with the change's full id. Later changes to the same lines are a
    /// conflict. Nothing is written: the engine writes the contents back through the store and
    /// records that as a new change.
    fn revert(&self, id: &str) -> Result<(String, Changes), StoreError>;

    /// The files change `id` (a prefix naming one change) touched, each as it was before and
    /// after the change, in path order, with the change's full id: a change's diff, and any
    /// file's content as of any change. Nothing is written.
    fn files_of(&self, id: &str) -> Result<(String, Vec<FileChange>), StoreError>;

    /// The paths among `paths` that history would stop recording if `rules` became the
    /// `.gitignore` they sit under (a folder's git; other backends ignore nothing).
    fn hidden_by_ignore(&self, rules: &str, paths: &[String]) -> Result<Vec<String>, StoreError> {
        let _ = (rules, paths);
        Ok(Vec::new())
    }

    /// Refuses a path history could never record (a file inside a nested repository), before
    /// anything is written.
    fn check_recordable(&self, path: &MemPath) -> Result<(), StoreError> {
        let _ = path;
        Ok(())
    }

    /// What went wrong since the last call without failing a change (a file left out of
    /// history, a stale git lock removed), one line each, for the front end to show.
    fn take_warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Removes what `forget` names from every recorded version, so nothing this history keeps
    /// still holds it, and records `record` as the newest change (naming no forgotten content:
    /// the engine writes its message). Called under the change lock, after the engine rewrote
    /// the current files with the same `forget` and before it commits anything else, so the
    /// newest version is the files as they are. With `dry_run`, only reports.
    ///
    /// A history that cannot forget says so (the default), and nothing is changed.
    fn forget(
        &self,
        forget: &Forget,
        record: &Change<'_>,
        dry_run: bool,
    ) -> Result<ForgetReport, StoreError> {
        let _ = (forget, record, dry_run);
        Err(StoreError::Unavailable(
            "this memory's history cannot forget yet: nothing was changed".into(),
        ))
    }

    /// Records `change` although it changed no file (a refused forget, which history must
    /// show); returns its id. The default records nothing.
    fn record_empty(&self, change: &Change<'_>) -> Result<Option<String>, StoreError> {
        let _ = change;
        Ok(None)
    }

    /// Asks this history, in a long-lived process, to follow the backend's change feed from
    /// now on, so that [`History::prepare`] costs what changed outside memdir rather than the
    /// size of the memory. Backends without hand edits have nothing to follow (the default).
    fn follow_changes(&self) {}
}
