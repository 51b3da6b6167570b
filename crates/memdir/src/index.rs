//! The index, `MEMORY.md`: generated from every note's frontmatter, kept current by writes through
//! memdir, capped, and loaded into the context right after core.

use crate::error::Error;
use crate::memory::{CORE_FILE, Memory};
use crate::notes::{NoteFile, read_text, scan};
use crate::store::{LockName, Precondition};
use memdir_core::caps::{Cap, CapExceeded, Size};
use memdir_core::context::{Fill, Section, nest_headings, units};
use memdir_core::note::{INDEX_FILE, IndexEntry, Note, parse_index, render_index};
use memdir_core::path::MemPath;
use memdir_core::state::STATE_FILE;
use serde::Serialize;

/// At or above this share of a cap, the context warns.
pub const GROWTH_WARNING: f64 = 0.9;

/// What `memdir index` did.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// The index file, `MEMORY.md`.
    pub path: String,
    /// Notes listed.
    pub listed: usize,
    /// Notes left out because they lack a valid frontmatter with a name and a description.
    pub unlisted: Vec<String>,
    /// Lines and bytes of the index.
    pub size: Size,
    /// The index's cap.
    pub cap: Cap,
    /// True when the file changed.
    pub changed: bool,
}

fn mp(s: &str) -> MemPath {
    // Only called with constant, known-good paths.
    MemPath::parse(s).unwrap_or_default()
}

/// The index lines for every note that has a valid frontmatter with a name and a description.
pub fn entries(files: &[NoteFile]) -> Vec<IndexEntry> {
    files
        .iter()
        .filter(|f| f.is_note && f.note.is_indexable())
        .map(|f| entry(&f.path, &f.note))
        .collect()
}

/// The index line of one listable note.
fn entry(path: &MemPath, note: &Note) -> IndexEntry {
    let external = note.is_external();
    IndexEntry {
        name: note.meta.name.clone().unwrap_or_default(),
        path: path.to_string(),
        description: note.meta.description.clone().unwrap_or_default(),
        kind: note.meta.kind.clone().filter(|_| !external),
        external,
    }
}

/// Regenerates `MEMORY.md` from the notes. No index is created while no note can be listed.
pub(crate) fn refresh(mem: &Memory) -> Result<IndexReport, Error> {
    let _lock = mem.store().lock(LockName::Index)?;
    let files = scan(mem.store().as_ref())?;
    write_index(mem, &files)
}

fn write_index(mem: &Memory, files: &[NoteFile]) -> Result<IndexReport, Error> {
    let listed = entries(files);
    let text = render_index(&listed);
    let path = mp(INDEX_FILE);
    let current = read_text(mem.store().as_ref(), &path)?;
    // No index appears until some note can be listed; an existing one is always kept current.
    let changed =
        current.as_deref() != Some(text.as_str()) && (!listed.is_empty() || current.is_some());
    if changed {
        mem.store().write(&path, text.as_bytes())?;
    }
    Ok(IndexReport {
        path: INDEX_FILE.to_string(),
        listed: listed.len(),
        unlisted: files
            .iter()
            .filter(|f| f.is_note && !f.note.is_indexable())
            .map(|f| f.path.to_string())
            .collect(),
        size: Size::of(&text),
        cap: mem.config().index.cap(),
        changed,
    })
}

/// Writes a note and updates the index, refusing the write when it would take the index over its
/// cap (a write that keeps the index the same size or shrinks it is always allowed).
///
/// When `MEMORY.md` is exactly what memdir last generated, only this note's line changes and no
/// other note is read; otherwise the index is rebuilt from every note.
pub(crate) fn write_note(
    mem: &Memory,
    path: &MemPath,
    content: &str,
    pre: &Precondition,
) -> Result<(), Error> {
    let _lock = mem.store().lock(LockName::Index)?;
    let current = read_text(mem.store().as_ref(), &mp(INDEX_FILE))?;
    let before = match current.as_deref().and_then(parse_index) {
        Some(listed) => listed,
        None => entries(&scan(mem.store().as_ref())?),
    };
    let mut after = before.clone();
    replace_entry(&mut after, path, Some(content));
    let (before_text, after_text) = (render_index(&before), render_index(&after));
    let cap = mem.config().index.cap();
    let (old, new) = (Size::of(&before_text), Size::of(&after_text));
    if cap.check(INDEX_FILE, &before_text, &after_text).is_err()
        && (new.lines > old.lines || new.bytes > old.bytes)
    {
        return Err(CapExceeded {
            file: format!("{INDEX_FILE} (the index, if {path} were written)"),
            cap,
            current: old,
            new,
            fix: format!(
                "{INDEX_FILE} is generated, so make room among the notes: merge this note into \
                 another (`memdir edit`), move an old note out of the index \
                 (`memdir mv notes/x.md archive/notes/x.md`), or delete one (`memdir rm notes/x.md`)"
            ),
        }
        .into());
    }
    mem.store().write_if(path, content.as_bytes(), pre)?;
    save_index(mem, current.as_deref(), &after_text, !after.is_empty())
}

/// Updates the index after files were deleted or moved: each path with its new text (`None` when
/// it is gone). Falls back to a full rebuild when the index is not memdir's own output.
pub(crate) fn update(mem: &Memory, changes: &[(MemPath, Option<String>)]) -> Result<(), Error> {
    let _lock = mem.store().lock(LockName::Index)?;
    let current = read_text(mem.store().as_ref(), &mp(INDEX_FILE))?;
    let Some(mut listed) = current.as_deref().and_then(parse_index) else {
        let files = scan(mem.store().as_ref())?;
        return write_index(mem, &files).map(|_| ());
    };
    for (path, text) in changes {
        replace_entry(&mut listed, path, text.as_deref());
    }
    save_index(
        mem,
        current.as_deref(),
        &render_index(&listed),
        !listed.is_empty(),
    )
}

/// Drops the index line of `path`, then adds one for `text` when it is a listable note.
fn replace_entry(listed: &mut Vec<IndexEntry>, path: &MemPath, text: Option<&str>) {
    listed.retain(|e| e.path != path.as_str());
    let Some(text) = text else { return };
    if !memdir_core::note::is_note_path(path.as_str()) {
        return;
    }
    let note = Note::parse(text);
    if note.is_indexable() {
        listed.push(entry(path, &note));
    }
}

fn save_index(
    mem: &Memory,
    current: Option<&str>,
    text: &str,
    has_entries: bool,
) -> Result<(), Error> {
    if current != Some(text) && (has_entries || current.is_some()) {
        mem.store().write(&mp(INDEX_FILE), text.as_bytes())?;
    }
    Ok(())
}

/// Cuts a text to what fits a cap, whole lines only and never inside an untrusted block;
/// returns the kept text and the lines left out.
pub fn fit(text: &str, cap: Cap) -> (String, usize) {
    let mut kept = String::new();
    let mut lines = 0;
    let total = text.lines().count();
    for unit in units(text) {
        let n = unit.lines().count();
        if lines + n > cap.max_lines || kept.len() + unit.len() > cap.max_bytes {
            break;
        }
        kept.push_str(unit);
        lines += n;
    }
    (kept, total - lines)
}

/// The context sections that follow core: the index (cut to its cap, with a note saying how much
/// was left out), the running state, one growth-guard line when core or the index is at 90% of
/// its cap or more, and one line each when proposals or gate requests wait for the user.
pub(crate) fn context_sections(mem: &Memory) -> Result<Vec<Section>, Error> {
    let store = mem.store().as_ref();
    let mut out = Vec::new();
    let index = read_text(store, &mp(INDEX_FILE))?.unwrap_or_default();
    let index_cap = mem.config().index.cap();
    if !index.trim().is_empty() {
        let (mut kept, left_out) = fit(&index, index_cap);
        if left_out > 0 {
            kept.push_str(&format!(
                "\n({left_out} more line(s) of {INDEX_FILE} not loaded: it is over its cap of {} lines and {} bytes. \
                 See them with `memdir read {INDEX_FILE}`; merge or archive notes, then `memdir lint`.)\n",
                index_cap.max_lines, index_cap.max_bytes
            ));
        }
        out.push(
            Section::new(
                "index",
                format!("Index of notes ({INDEX_FILE})"),
                Some(INDEX_FILE.to_string()),
                nest_headings(&kept),
            )
            .with_fill(Fill::Head),
        );
    }
    let state = read_text(store, &mp(STATE_FILE))?.unwrap_or_default();
    if !state.trim().is_empty() {
        let state_cap = mem.config().state.cap();
        let (mut kept, left_out) = fit(&state, state_cap);
        if left_out > 0 {
            kept.push_str(&format!(
                "\n({left_out} more line(s) of {STATE_FILE} not loaded: it is over its cap. \
                 Run `memdir sweep` to archive old lines, or remove some.)\n"
            ));
        }
        out.push(
            Section::new(
                "state",
                format!("Running state ({STATE_FILE})"),
                Some(STATE_FILE.to_string()),
                nest_headings(&kept),
            )
            .with_fill(Fill::Tail),
        );
    }
    let core = read_text(store, &mp(CORE_FILE))?.unwrap_or_default();
    if let Some(line) = growth_guard(&[
        (CORE_FILE, mem.config().core.cap(), &core),
        (INDEX_FILE, index_cap, &index),
    ]) {
        out.push(Section::new("guard", "", None, line));
    }
    let pending = mem.proposals()?.len();
    if pending > 0 {
        out.push(Section::new(
            "proposals",
            "",
            None,
            format!(
                "{pending} proposed change(s) to {CORE_FILE} wait for the user's review in {}/: do not propose them again. See them with `memdir review`.",
                crate::proposals::PROPOSALS_DIR
            ),
        ));
    }
    out.extend(mem.gate_context()?);
    Ok(out)
}

/// One line naming every capped file at or above [`GROWTH_WARNING`] of its cap, or `None`.
pub fn growth_guard(files: &[(&str, Cap, &str)]) -> Option<String> {
    let full: Vec<String> = files
        .iter()
        .filter(|(_, cap, text)| cap.usage(text) >= GROWTH_WARNING)
        .map(|(name, cap, text)| {
            let s = Size::of(text);
            format!(
                "{name} is at {:.0}% of its cap ({}/{} lines, {}/{} bytes)",
                (cap.usage(text) * 100.0).floor(),
                s.lines,
                cap.max_lines,
                s.bytes,
                cap.max_bytes
            )
        })
        .collect();
    if full.is_empty() {
        return None;
    }
    Some(format!(
        "Memory is nearly full: {}. Tidy up now (merge, shorten or archive) before writes are refused.",
        full.join("; ")
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_whole_lines() {
        let cap = Cap {
            max_lines: 2,
            max_bytes: 100,
        };
        assert_eq!(fit("a\nb\nc\n", cap), ("a\nb\n".to_string(), 1));
        assert_eq!(fit("a\nb\n", cap), ("a\nb\n".to_string(), 0));
        let small = Cap {
            max_lines: 10,
            max_bytes: 3,
        };
        assert_eq!(fit("ab\ncd\n", small), ("ab\n".to_string(), 1));
    }

    #[test]
    fn guard_names_full_files_only() {
        let cap = Cap {
            max_lines: 10,
            max_bytes: 1000,
        };
        assert_eq!(growth_guard(&[("core.md", cap, "a\n")]), None);
        let nine = "x\n".repeat(9);
        let line = growth_guard(&[("core.md", cap, &nine), ("MEMORY.md", cap, "a\n")]).unwrap();
        assert_eq!(
            line,
            "Memory is nearly full: core.md is at 90% of its cap (9/10 lines, 18/1000 bytes). Tidy up now (merge, shorten or archive) before writes are refused."
        );
        assert!(!line.contains('\n'));
    }
}
