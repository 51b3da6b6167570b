//! Any file: read, write, edit, list, delete, move, and a file's version.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::proposals::proposed;
use crate::store::{Entry, EntryKind, LockName, Precondition, StoreError, Version};
use memdir_core::edit::{EditError, EditOp, Edited};
use memdir_core::path::MemPath;

/// A file's version: its git blob id (as `git hash-object` prints), or `None` if absent.
pub(crate) fn version(cx: &Ctx, path: &str) -> Result<Option<String>, Error> {
    let p = MemPath::parse_file(path)?;
    match cx.store().read(&p) {
        Ok(b) => Ok(Some(Version::of(&b).to_string())),
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Reads a file's bytes.
pub(crate) fn read(cx: &Ctx, path: &str) -> Result<Vec<u8>, Error> {
    let p = MemPath::parse_file(path)?;
    Ok(cx.store().read(&p)?)
}

/// Creates or replaces a file. `core.md` is checked against its cap and the core policy first.
pub(crate) fn write(cx: &Ctx, path: &str, content: &str) -> Result<Outcome, Error> {
    let p = MemPath::parse_file(path)?;
    let guarded = crate::guard::content(cx, p.as_str(), content, None)?;
    let content = &*guarded.text;
    refuse_hiding_ignore(cx, &p, content)?;
    let mut tx = crate::change::begin(cx, "write", p.as_str())?.redacted(&guarded.redacted);
    let core_file = cx.core_file();
    if p.as_str() == core_file {
        let _lock = tx.lock(LockName::File(&p))?;
        let current = cx.read_opt(&p)?;
        cx.check_base(&p, current.as_deref().map(str::as_bytes))?;
        let current = current.unwrap_or_default();
        cx.config.core.cap().check(core_file, &current, content)?;
        if !crate::proposals::gate_core(cx, &current, content)? {
            let id = crate::proposals::write_proposal(&tx, &current, content)?;
            tx.recorded_as("propose", core_file).commit()?;
            return Ok(proposed(core_file, id));
        }
        tx.write_if(&p, content.as_bytes(), &cx.expect)?;
    } else {
        let current = if cx.expect != Precondition::Any || crate::trust::needs_current(cx, &p) {
            cx.read_bytes_opt(&p)?
        } else {
            None
        };
        if cx.expect != Precondition::Any {
            cx.check_base(&p, current.as_deref())?;
        }
        let current = current.map(|b| String::from_utf8_lossy(&b).into_owned());
        let content = &crate::trust::label(cx, &p, current.as_deref(), content)?;
        match crate::notes::write_hook(&tx, &p, content, false, &cx.expect) {
            Some(done) => applied_anyway(cx, &mut tx, &p, content, done)?,
            None => drop(tx.write_if(&p, content.as_bytes(), &cx.expect)?),
        }
    }
    tx.commit()?;
    Ok(Outcome::Done(()))
}

/// Appends `text` to a file that is not a note, log or loaded file ([`crate::Memory::append`]):
/// the new bytes only, at the version the caller read.
pub(crate) fn append(cx: &Ctx, path: &str, text: &str) -> Result<(), Error> {
    let p = MemPath::parse_file(path)?;
    crate::trust::refuse_append(cx, &p)?;
    let guarded = crate::guard::content(cx, p.as_str(), text, None)?;
    let tx =
        crate::change::begin_append(cx, "append", &p, &guarded.text)?.redacted(&guarded.redacted);
    if cx.expect != Precondition::Any {
        cx.check_base(&p, cx.read_bytes_opt(&p)?.as_deref())?;
    }
    tx.append(&p, guarded.text.as_bytes())?;
    tx.commit()
}

/// Refuses a `.gitignore` that would hide memory from history: any file there now, or one
/// of the layout's files, that git records today and would not after the write.
fn refuse_hiding_ignore(cx: &Ctx, p: &MemPath, content: &str) -> Result<(), Error> {
    if p.file_name() != Some(".gitignore") {
        return Ok(());
    }
    let Some(h) = cx.history_backend() else {
        return Ok(());
    };
    let dir = p.parent().unwrap_or_default();
    let mut paths: Vec<String> = cx
        .store()
        .walk(&dir)?
        .into_iter()
        .filter(|e| e.path != *p)
        .filter_map(|e| {
            let rel = e.path.as_str().strip_prefix(dir.as_str())?;
            Some(rel.trim_start_matches('/').to_string())
        })
        .collect();
    let layout = cx.layout();
    paths.extend([
        layout.core.to_string(),
        layout.index_file.to_string(),
        layout.state.to_string(),
        format!("{}/2026-01-01.md", layout.log_dir),
        format!("{}/a.md", layout.notes_dir),
        "a.md".to_string(),
    ]);
    let hidden = h.hidden_by_ignore(content, &paths)?;
    if let Some(first) = hidden.first() {
        let first = if dir.is_root() {
            first.clone()
        } else {
            format!("{dir}/{first}")
        };
        return Err(Error::Invalid(format!(
            "{p} would hide memory from history ({first} and {} more would no longer be recorded): ignore only files that are not memory",
            hidden.len() - 1
        )));
    }
    Ok(())
}

/// A note write whose follow-up (`MEMORY.md`) failed after the note itself was written is
/// applied: it is reported with a warning, and the next change regenerates the index. A
/// failure before the write is the change's failure.
pub(crate) fn applied_anyway(
    cx: &Ctx,
    tx: &mut crate::change::Change<'_>,
    p: &MemPath,
    content: &str,
    done: Result<(), Error>,
) -> Result<(), Error> {
    let Err(e) = done else { return Ok(()) };
    let written = matches!(e.kind(), crate::ErrorKind::Unavailable)
        && cx.read_bytes_opt(p).ok().flatten().as_deref() == Some(content.as_bytes());
    if !written {
        return Err(e);
    }
    cx.warn(format!(
        "{p} is saved, but updating MEMORY.md failed ({e}): the next change or `memdir context` regenerates it"
    ));
    tx.lagging();
    Ok(())
}

/// Replaces exactly one occurrence of `old` with `new` in a file.
pub(crate) fn edit(cx: &Ctx, path: &str, old: &str, new: &str) -> Result<Outcome, Error> {
    edit_with(
        cx,
        path,
        &EditOp::Replace {
            old,
            new,
            expected: 1,
        },
    )
    .map(|o| match o {
        Outcome::Done(_) => Outcome::Done(()),
        Outcome::Proposed { id, message } => Outcome::Proposed { id, message },
    })
}

/// Applies one partial edit (append, prepend, a section, or a replacement with an expected
/// count) as one change: the same version check (`with_base`), caps, core gate, trust label,
/// index update and history record as [`Memory::edit`]. Returns what was done, in one line.
pub(crate) fn edit_with(cx: &Ctx, path: &str, op: &EditOp<'_>) -> Result<Outcome<String>, Error> {
    let p = MemPath::parse_file(path)?;
    let mut tx = crate::change::begin(cx, "edit", p.as_str())?;
    let _lock = tx.lock(LockName::File(&p))?;
    let (bytes, read_version) = cx.store().read_versioned(&p)?;
    cx.check_base(&p, Some(&bytes))?;
    // The replacement goes only over the version the edit was computed from.
    let pre = Precondition::Matches(read_version);
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::Invalid(format!(
            "{p} is not UTF-8 text: it cannot be edited by text"
        ))
    })?;
    let Edited {
        text: updated,
        summary,
    } = memdir_core::edit::apply_to(p.as_str(), &text, op).map_err(|e| match e {
        EditError::NotFound(m) => Error::NotFound(m),
        EditError::Invalid(m) => Error::Invalid(m),
    })?;
    let guarded = crate::guard::content(cx, p.as_str(), &updated, Some(&text))?;
    tx = tx.redacted(&guarded.redacted);
    let updated = guarded.text.into_owned();
    let core_file = cx.core_file();
    if p.as_str() == core_file {
        cx.config.core.cap().check(core_file, &text, &updated)?;
        if !crate::proposals::gate_core(cx, &text, &updated)? {
            let id = crate::proposals::write_proposal(&tx, &text, &updated)?;
            tx.recorded_as("propose", core_file).commit()?;
            return Ok(proposed(core_file, id));
        }
    }
    refuse_hiding_ignore(cx, &p, &updated)?;
    let updated = crate::trust::label(cx, &p, Some(&text), &updated)?;
    match crate::notes::write_hook(&tx, &p, &updated, true, &pre) {
        Some(done) => applied_anyway(cx, &mut tx, &p, &updated, done)?,
        None => drop(tx.write_if(&p, updated.as_bytes(), &pre)?),
    }
    tx.commit()?;
    Ok(Outcome::Done(summary))
}

/// Lists a folder (or describes one file).
pub(crate) fn ls(cx: &Ctx, path: &str) -> Result<Vec<Entry>, Error> {
    let p = MemPath::parse(path)?;
    match cx.store().stat(&p)? {
        None => Err(Error::NotFound(format!("{} does not exist", display(&p)))),
        Some(e) if e.kind == EntryKind::File => Ok(vec![e]),
        Some(_) => Ok(cx.store().list(&p)?),
    }
}

/// Deletes a file or a folder.
pub(crate) fn rm(cx: &Ctx, path: &str) -> Result<(), Error> {
    let p = MemPath::parse(path)?;
    if p.is_root() {
        return Err(Error::Invalid("cannot delete the memory root".into()));
    }
    let tx = crate::change::begin(cx, "rm", p.as_str())?;
    if p.as_str() == cx.core_file() {
        crate::proposals::refuse_core_move_unless_user(cx)?;
    }
    // A note's text, for the index to drop its line without reading every note.
    let gone = match cx.store().stat(&p)? {
        Some(e) if e.kind == EntryKind::File && p.as_str().ends_with(".md") => cx.read_opt(&p)?,
        _ => None,
    };
    tx.remove(&p)?;
    crate::notes::after_change(&tx, &[&p], gone.as_deref())?;
    tx.commit()
}

/// Moves a file or folder; never overwrites.
pub(crate) fn mv(cx: &Ctx, from: &str, to: &str) -> Result<(), Error> {
    let f = MemPath::parse(from)?;
    let t = MemPath::parse(to)?;
    if f.is_root() || t.is_root() {
        return Err(Error::Invalid("cannot move the memory root".into()));
    }
    let tx = crate::change::begin(cx, "mv", &format!("{f} -> {t}"))?;
    let core_file = cx.core_file();
    // The moved file's text, when it is one file: the index updates from it.
    let moved = if t.as_str() == core_file {
        let _lock = tx.lock(LockName::File(&t))?;
        crate::proposals::refuse_core_move_unless_user(cx)?;
        let incoming = cx.read_opt(&f)?.unwrap_or_default();
        cx.config.core.cap().check(core_file, "", &incoming)?;
        tx.rename(&f, &t)?;
        None
    } else {
        if f.as_str() == core_file {
            crate::proposals::refuse_core_move_unless_user(cx)?;
        }
        let text = match cx.store().stat(&f)? {
            Some(e) if e.kind == EntryKind::File => cx.read_opt(&f)?,
            _ => None,
        };
        let remark = crate::trust::check_move(cx, &f, &t, text.as_deref())?;
        crate::note_index::check_move(&tx, &f, &t, text.as_deref())?;
        tx.rename(&f, &t)?;
        if remark && let Some(text) = &text {
            let marked = crate::trust::mark(&cx.layout(), &t, text);
            if marked != text.as_str() {
                tx.write(&t, marked.as_bytes())?;
            }
        }
        text
    };
    crate::notes::after_change(&tx, &[&f, &t], moved.as_deref())?;
    tx.commit()
}

fn display(p: &MemPath) -> &str {
    if p.is_root() { "/" } else { p.as_str() }
}
