//! `forget`: removes a file, or every line holding a text, from the current files *and* from
//! every version history keeps, then drops the search indexes' copies.
//!
//! The order, under the change lock: the change begins (hand edits are recorded first, so the
//! newest version in history is the files as they are), the current files are rewritten with
//! the same [`Forget`] the history applies, `MEMORY.md` is regenerated, and then the history
//! rewrites every version and records the forget as its newest change. The record says how
//! much was forgotten and why, never what.
//!
//! A kill between rewriting the files and rewriting history leaves the files without the
//! content and history with it (the next change records the files' state by the same writer,
//! as any interrupted change): running forget again rewrites history then, since it always
//! rewrites history, whatever the current files hold.
//!
//! Only a person may forget: any other source is refused, and the refusal is recorded in
//! history (naming what was asked for by path or glob only, never by the text).

use crate::ctx::Ctx;
use crate::error::Error;
use crate::history::Change;
use crate::provenance::Source;
use crate::store::EntryKind;
use memdir_core::forget::{Forget, Scrub};
use memdir_core::path::MemPath;
use memdir_store::history::ForgetReport;
use serde::Serialize;

/// One current file forget changed (or, dry, would change).
#[derive(Debug, Clone, Serialize)]
pub struct ForgotFile {
    /// The file.
    pub path: String,
    /// Lines removed from it (0 when the whole file goes).
    pub lines: usize,
    /// True when the whole file goes.
    pub removed: bool,
}

/// What a forget did.
#[derive(Debug, Clone, Serialize)]
pub struct ForgetOutcome {
    /// True when nothing was changed (`--dry-run`).
    pub dry_run: bool,
    /// The current files changed, in path order.
    pub files: Vec<ForgotFile>,
    /// What history rewrote; `None` when the memory keeps no history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<ForgetReport>,
}

impl ForgetOutcome {
    /// Lines removed from the current files.
    pub fn lines(&self) -> usize {
        self.files.iter().map(|f| f.lines).sum()
    }
}

/// What the forget is recorded as: `forget <path>` or `forget <glob>` (`forget *` for every
/// file), never the text.
fn recorded_path(what: &Forget, glob: Option<&str>) -> String {
    match what.path() {
        Some(p) => p.to_string(),
        None => glob.unwrap_or("*").to_string(),
    }
}

/// The reason recorded: how much went, and the person's reason if they gave one.
fn summary(files: &[ForgotFile], reason: Option<&str>) -> String {
    let lines: usize = files.iter().map(|f| f.lines).sum();
    let removed = files.iter().filter(|f| f.removed).count();
    let mut s = if removed > 0 {
        format!(
            "forgot {removed} file{}",
            if removed == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "forgot {lines} line{} in {} file{}",
            if lines == 1 { "" } else { "s" },
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        )
    };
    if let Some(r) = reason.map(str::trim).filter(|r| !r.is_empty()) {
        s.push_str(", reason: ");
        s.push_str(r);
    }
    s
}

/// Every file of the memory, in path order.
fn all_files(mem: &Ctx) -> Result<Vec<MemPath>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![MemPath::root()];
    while let Some(d) = stack.pop() {
        for e in mem.store().list(&d)? {
            match e.kind {
                EntryKind::Dir => stack.push(e.path),
                EntryKind::File => out.push(e.path),
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Runs a forget (see the module docs). `glob` is what `what` was built with, for the record.
pub(crate) fn forget(
    mem: &Ctx,
    what: &Forget,
    glob: Option<&str>,
    dry_run: bool,
) -> Result<ForgetOutcome, Error> {
    let path = recorded_path(what, glob);
    if mem.actor().source != Source::User || !mem.has_person_powers() {
        return Err(refuse(mem, &path));
    }
    let history = mem.history_backend().cloned();
    // The current files first: what goes, and what stays of each.
    let mut files = Vec::new();
    let mut changes = Vec::new();
    let candidates = match what.path() {
        Some(p) => vec![p.clone()],
        None => all_files(mem)?,
    };
    for p in candidates {
        if !what.covers(p.as_str()) {
            continue;
        }
        let Some(bytes) = mem.read_bytes_opt(&p)? else {
            continue;
        };
        match what.scrub(p.as_str(), &bytes) {
            Scrub::Keep => {}
            Scrub::Drop => {
                files.push(ForgotFile {
                    path: p.to_string(),
                    lines: 0,
                    removed: true,
                });
                changes.push((p, None));
            }
            Scrub::Rewrite(b, n) => {
                files.push(ForgotFile {
                    path: p.to_string(),
                    lines: n,
                    removed: false,
                });
                changes.push((p, Some(b)));
            }
        }
    }
    let reason = summary(&files, mem.reason());
    let at = mem.clock().now().timestamp();
    if dry_run {
        let report = match &history {
            Some(h) => Some(h.forget(what, &record(mem, &path, &reason, at), true)?),
            None => None,
        };
        return Ok(ForgetOutcome {
            dry_run,
            files,
            history: report,
        });
    }
    if history.is_none()
        && files.is_empty()
        && let Some(p) = what.path()
    {
        return Err(Error::NotFound(format!(
            "{p} does not exist: nothing to forget"
        )));
    }
    // The person's reason goes into the recorded summary, after the counts.
    let plain = mem.with_reason(None);
    let tx = crate::change::begin_forget(&plain, "forget", &path)?;
    tx.apply_forgotten(&changes)?;
    if let Err(e) = crate::note_index::refresh(&tx) {
        mem.warn(format!("could not regenerate MEMORY.md after forget: {e}"));
    }
    let report = match &history {
        Some(h) => Some(h.forget(what, &record(mem, &path, &reason, at), false)?),
        None => None,
    };
    // Anything the history's record does not hold yet (MEMORY.md regenerated) is recorded by
    // the same writer, under the same name.
    tx.default_reason(reason).commit()?;
    let touched: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    if let Err(e) = mem.searcher().forget_indexes(&touched) {
        mem.warn(e.to_string());
    }
    Ok(ForgetOutcome {
        dry_run,
        files,
        history: report,
    })
}

fn record<'a>(mem: &'a Ctx, path: &'a str, reason: &'a str, at: jiff::Timestamp) -> Change<'a> {
    Change {
        op: "forget",
        path,
        reason: Some(reason),
        actor: mem.actor(),
        at,
        via: mem.via(),
        whole_tree: false,
    }
}

/// Records that a forget was refused, and says why.
fn refuse(mem: &Ctx, path: &str) -> Error {
    let who = mem.actor().source.as_str();
    let reason = format!("refused: forget needs source user, this was {who}");
    let mut recorded = false;
    if let Some(h) = mem.history_backend() {
        let record = || -> Result<Option<String>, Error> {
            let plain = mem.with_reason(None);
            let _tx = crate::change::begin_forget(&plain, "forget refused", path)?;
            Ok(h.record_empty(&Change {
                op: "forget refused",
                path,
                reason: Some(&reason),
                actor: mem.actor(),
                at: mem.clock().now().timestamp(),
                via: mem.via(),
                whole_tree: false,
            })?)
        };
        match record() {
            Ok(id) => recorded = id.is_some(),
            Err(e) => mem.warn(format!("could not record the refused forget: {e}")),
        }
    }
    Error::Invalid(format!(
        "forget needs a person (source user), not {who}: nothing was forgotten{}; ask the user to run `memdir forget`",
        if recorded {
            ", and the refusal is recorded in history"
        } else {
            ""
        }
    ))
}
