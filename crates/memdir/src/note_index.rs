//! The index, `MEMORY.md`: generated from every note's frontmatter, kept current by writes through
//! memdir, capped, and loaded into the context right after core.

use crate::change::Change;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::notes::{NoteFile, read_text, scan, scan_folder};
use crate::store::{LockName, Precondition};
use memdir_core::caps::{Cap, CapExceeded, Size};
use memdir_core::context::{Fill, Section, nest_headings, units};
use memdir_core::layout::{Dated, Layout, is_generated_folder_index, layout, relayout};
use memdir_core::note::{INDEX_FILE, IndexEntry, Note, parse_index, render_index};
use memdir_core::path::MemPath;
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

/// The index lines for every note that has a valid frontmatter with a name and a description,
/// and that no other note supersedes.
pub fn entries(files: &[NoteFile]) -> Vec<IndexEntry> {
    files
        .iter()
        .filter(|f| f.is_note && f.note.is_listed())
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
///
/// In a layout whose index is hand-written (or absent) nothing is written: that file is the
/// host's, so every path that would refresh it (sweep, recovery, imports) leaves it alone.
pub(crate) fn refresh(tx: &Change<'_>) -> Result<IndexReport, Error> {
    let mem = tx.cx();
    if !mem.layout().index_generated() {
        return Ok(IndexReport {
            path: mem.layout().index_file.to_string(),
            listed: 0,
            unlisted: Vec::new(),
            size: Size::of(""),
            cap: mem.config().index.cap(),
            changed: false,
        });
    }
    let _lock = tx.lock(LockName::Index)?;
    let files = scan(mem.store(), &mem.layout())?;
    write_index(tx, &files)
}

fn write_index(tx: &Change<'_>, files: &[NoteFile]) -> Result<IndexReport, Error> {
    let mem = tx.cx();
    let listed = dated(files);
    let planned = layout(&listed, mem.config().index.cap());
    let changed = save_layout(tx, files, &planned, !listed.is_empty())?;
    Ok(IndexReport {
        path: INDEX_FILE.to_string(),
        listed: listed.len(),
        unlisted: files
            .iter()
            .filter(|f| f.is_note && !f.note.is_indexable() && !is_folder_index(f))
            .map(|f| f.path.to_string())
            .collect(),
        size: Size::of(&planned.root),
        cap: mem.config().index.cap(),
        changed,
    })
}

/// True for a folder index memdir generated (it is a `.md` file, but never a note's content).
pub(crate) fn is_folder_index(f: &NoteFile) -> bool {
    is_generated_folder_index(f.path.as_str(), &f.text)
}

/// Every listable note with its date, for the layout.
pub fn dated(files: &[NoteFile]) -> Vec<Dated> {
    files
        .iter()
        .filter(|f| f.is_note && f.note.is_listed())
        .map(|f| Dated {
            entry: entry(&f.path, &f.note),
            date: note_date(&f.note),
        })
        .collect()
}

fn note_date(note: &Note) -> Option<String> {
    note.meta
        .updated
        .clone()
        .or_else(|| note.meta.created.clone())
}

/// Writes the planned index files: each folder's (never over a file a person wrote there),
/// removes generated folder indexes no longer planned, then `MEMORY.md` last, so a reader never
/// meets a root that points at folder indexes not yet written. Returns true when any changed.
fn save_layout(
    tx: &Change<'_>,
    files: &[NoteFile],
    planned: &Layout,
    has_entries: bool,
) -> Result<bool, Error> {
    let mem = tx.cx();
    let store = mem.store();
    let mut changed = false;
    let existing: std::collections::HashMap<&str, &NoteFile> = files
        .iter()
        .filter(|f| f.path.as_str().ends_with(INDEX_FILE))
        .map(|f| (f.path.as_str(), f))
        .collect();
    for (path, text) in &planned.folders {
        match existing.get(path.as_str()) {
            Some(f) if f.text == *text => continue,
            // A person's own file of that name stays; lint says so.
            Some(f) if !is_folder_index(f) => continue,
            _ => {}
        }
        tx.write_index(&MemPath::parse_file(path)?, text.as_bytes())?;
        changed = true;
    }
    for f in existing.values() {
        if is_folder_index(f) && !planned.folders.iter().any(|(p, _)| p == f.path.as_str()) {
            match tx.remove(&f.path) {
                Ok(()) | Err(Error::Store(crate::store::StoreError::NotFound(_))) => changed = true,
                Err(e) => return Err(e),
            }
        }
    }
    let current = read_text(store, &MemPath::known(INDEX_FILE))?;
    // No index appears until some note can be listed; an existing one is always kept current.
    if current.as_deref() != Some(planned.root.as_str()) && (has_entries || current.is_some()) {
        tx.write_index(&MemPath::known(INDEX_FILE), planned.root.as_bytes())?;
        changed = true;
    }
    Ok(changed)
}

/// Writes a note and updates the index, refusing the write when it would take the index over its
/// cap (a write that keeps the index the same size or shrinks it is always allowed).
///
/// When `MEMORY.md` is exactly what memdir last generated, only this note's line changes and no
/// other note is read; an index split by folder reads the notes of this note's folder only
/// (their lines and dates make the folder's line and its own index). Otherwise the index is
/// rebuilt from every note.
pub(crate) fn write_note(
    tx: &Change<'_>,
    path: &MemPath,
    content: &str,
    pre: &Precondition,
) -> Result<(), Error> {
    let mem = tx.cx();
    let _lock = tx.lock(LockName::Index)?;
    let cap = mem.config().index.cap();
    let current = read_text(mem.store(), &MemPath::known(INDEX_FILE))?;
    // The fast path: a flat index memdir wrote, which still fits with this note's line.
    if let Some(before) = current.as_deref().and_then(parse_index) {
        let mut after = before.clone();
        replace_entry(&mut after, path, Some(content));
        let after_text = render_index(&after);
        if fits(cap, &after_text) {
            tx.write_if(path, content.as_bytes(), pre)?;
            return save_index(tx, current.as_deref(), &after_text, !after.is_empty());
        }
    }
    if let Some(root) = current.as_deref()
        && write_in_folder(tx, root, path, content, pre)?
    {
        return Ok(());
    }
    // Otherwise from every note: the layout before and after this write, folders past the cap.
    let files = scan(mem.store(), &mem.layout())?;
    let before = dated(&files);
    let after = with_written(mem, &before, path, content);
    let (old_layout, new_layout) = (layout(&before, cap), layout(&after, cap));
    refuse_growth(
        cap,
        &old_layout.root,
        &new_layout.root,
        &format!("if {path} were written"),
    )?;
    tx.write_if(path, content.as_bytes(), pre)?;
    // The written note replaces its old text among the files the layout is saved against.
    let files: Vec<NoteFile> = files.into_iter().filter(|f| f.path != *path).collect();
    save_layout(tx, &files, &new_layout, !after.is_empty()).map(drop)
}

/// The listed notes `before` (in path order) once `content` is written at `path`, in path
/// order, as a scan after the write would list them.
fn with_written(mem: &Ctx, before: &[Dated], path: &MemPath, content: &str) -> Vec<Dated> {
    let mut after: Vec<Dated> = before
        .iter()
        .filter(|d| d.entry.path != path.as_str())
        .cloned()
        .collect();
    if mem.layout().is_note_path(path.as_str()) {
        let note = Note::parse(content);
        if note.is_listed() {
            after.push(Dated {
                entry: entry(path, &note),
                date: note_date(&note),
            });
            after.sort_by(|a, b| a.entry.path.cmp(&b.entry.path));
        }
    }
    after
}

/// [`write_note`] into an index split by folder, reading only the notes of the note's folder;
/// false (nothing written) when [`relayout`] cannot tell without every note.
fn write_in_folder(
    tx: &Change<'_>,
    root: &str,
    path: &MemPath,
    content: &str,
    pre: &Precondition,
) -> Result<bool, Error> {
    let mem = tx.cx();
    let Some(new) = relayout_changes(mem, root, &[(path, None, Some(content))], false)? else {
        return Ok(false);
    };
    refuse_growth(
        mem.config().index.cap(),
        root,
        &new.0,
        &format!("if {path} were written"),
    )?;
    tx.write_if(path, content.as_bytes(), pre)?;
    save_relayout(tx, root, new)?;
    Ok(true)
}

/// One note's change for [`relayout_changes`]: its path, its text before and after (`None`:
/// absent).
type NoteChange<'a> = (&'a MemPath, Option<&'a str>, Option<&'a str>);

/// What [`relayout_changes`] gives: `MEMORY.md`, and each changed folder's index path with its
/// text (`None`: it goes).
type Relaid = (String, Vec<(String, Option<String>)>);

/// The index files after `changes`, from the root index and the notes of the changed notes'
/// folders only (see [`relayout`]): the new root and each changed folder's index (`None`: it
/// goes). `applied`: the store holds the changes already (a delete or a move, after the fact),
/// else it holds what was there before them. `None` when that cannot be told without every note.
fn relayout_changes(
    mem: &Ctx,
    root: &str,
    changes: &[NoteChange<'_>],
    applied: bool,
) -> Result<Option<Relaid>, Error> {
    let cap = mem.config().index.cap();
    let layout = mem.layout();
    let listed = |path: &MemPath, text: Option<&str>| {
        let note = Note::parse(text.filter(|_| layout.is_note_path(path.as_str()))?);
        note.is_listed().then(|| Dated {
            entry: entry(path, &note),
            date: note_date(&note),
        })
    };
    let mut root = root.to_string();
    let mut folders = Vec::new();
    let mut done: Vec<MemPath> = Vec::new();
    for (path, _, _) in changes {
        let folder = path.parent().unwrap_or_default();
        if done.contains(&folder) {
            continue;
        }
        let here = dated(&scan_folder(mem.store(), &layout, &folder)?);
        let (mut before, mut after) = (here.clone(), here);
        for (p, was, now) in changes {
            if p.parent().unwrap_or_default() != folder {
                continue;
            }
            // The side the store does not show yet is made from the known text.
            let (side, text) = if applied {
                (&mut before, *was)
            } else {
                (&mut after, *now)
            };
            side.retain(|d| d.entry.path != p.as_str());
            side.extend(listed(p, text));
            side.sort_by(|a, b| a.entry.path.cmp(&b.entry.path));
        }
        let Some(new) = relayout(&root, folder.as_str(), &before, &after, cap) else {
            return Ok(None);
        };
        root = new.root;
        folders.extend(new.folder);
        done.push(folder);
    }
    Ok(Some((root, folders)))
}

/// Writes what [`relayout_changes`] gave: each folder's index (never over a person's own file
/// of that name), then `MEMORY.md`.
fn save_relayout(tx: &Change<'_>, current: &str, (root, folders): Relaid) -> Result<(), Error> {
    let mem = tx.cx();
    let store = mem.store();
    for (index, text) in folders {
        let index_path = MemPath::parse_file(&index)?;
        let existing = read_text(store, &index_path)?;
        match (existing, text) {
            // A person's own file of that name stays; lint says so.
            (Some(e), _) if !is_generated_folder_index(&index, &e) => {}
            (Some(e), Some(t)) if e == t => {}
            (_, Some(t)) => tx.write_index(&index_path, t.as_bytes())?,
            (Some(_), None) => match tx.remove(&index_path) {
                Ok(()) | Err(Error::Store(crate::store::StoreError::NotFound(_))) => {}
                Err(e) => return Err(e),
            },
            (None, None) => {}
        }
    }
    save_index(tx, Some(current), &root, true)
}

fn fits(cap: Cap, text: &str) -> bool {
    let s = Size::of(text);
    s.lines <= cap.max_lines && s.bytes <= cap.max_bytes
}

/// Refuses a change that would take `MEMORY.md` past its cap even listing folders; a change
/// that keeps it the same size or shrinks it is always allowed.
fn refuse_growth(cap: Cap, before: &str, after: &str, what: &str) -> Result<(), Error> {
    let (old, new) = (Size::of(before), Size::of(after));
    if fits(cap, after) || (new.lines <= old.lines && new.bytes <= old.bytes) {
        return Ok(());
    }
    Err(CapExceeded {
        file: format!("{INDEX_FILE} (the index, {what})"),
        cap,
        current: old,
        new,
        fix: format!(
            "{INDEX_FILE} is generated and lists folders once notes outgrow it, so make room: put the note in a folder that has notes, merge this note into another (`memdir edit`), move an old note out of the index (`memdir mv notes/x.md archive/notes/x.md`), or delete one (`memdir rm notes/x.md`)"
        ),
    }
    .into())
}

/// Refuses a move that would take `MEMORY.md` past its cap (a note into a new folder when the
/// index lists folders and is full); checked before anything moves.
pub(crate) fn check_move(
    tx: &Change<'_>,
    from: &MemPath,
    to: &MemPath,
    text: Option<&str>,
) -> Result<(), Error> {
    let mem = tx.cx();
    if !mem.layout().index_generated() {
        return Ok(());
    }
    let _lock = tx.lock(LockName::Index)?;
    let cap = mem.config().index.cap();
    let current = read_text(mem.store(), &MemPath::known(INDEX_FILE))?;
    if current.as_deref().and_then(parse_index).is_some() {
        // A flat index memdir wrote fits its cap: after a move it still fits, or it splits
        // into folders, whose lines are no more than the notes' were.
        return Ok(());
    }
    // One file moved: the two folders' notes tell, if the index is split by folder.
    if let (Some(root), Some(text)) = (current.as_deref(), text)
        && let Some((new, _)) = relayout_changes(
            mem,
            root,
            &[(from, Some(text), None), (to, None, Some(text))],
            false,
        )?
    {
        return refuse_growth(cap, root, &new, &format!("if {from} moved to {to}"));
    }
    let files = scan(mem.store(), &mem.layout())?;
    let before = dated(&files);
    let prefix = format!("{}/", from.as_str());
    let after: Vec<Dated> = before
        .iter()
        .filter_map(|d| {
            let p = d.entry.path.as_str();
            let moved = if p == from.as_str() {
                to.to_string()
            } else if let Some(rest) = p.strip_prefix(&prefix) {
                format!("{to}/{rest}")
            } else {
                return Some(d.clone());
            };
            mem.layout().is_note_path(&moved).then(|| {
                let mut d = d.clone();
                d.entry.path = moved;
                d
            })
        })
        .collect();
    refuse_growth(
        cap,
        &layout(&before, cap).root,
        &layout(&after, cap).root,
        &format!("if {from} moved to {to}"),
    )
}

/// Updates the index after files were deleted or moved: each path with its new text (`None` when
/// it is gone); `gone` is the text the one file that left had (a deleted or moved note), when
/// known. Falls back to a full rebuild when the index is neither memdir's own flat output that
/// still fits nor its split output that [`relayout`] can update.
pub(crate) fn update(
    tx: &Change<'_>,
    changes: &[(MemPath, Option<String>)],
    gone: Option<&str>,
) -> Result<(), Error> {
    let mem = tx.cx();
    let _lock = tx.lock(LockName::Index)?;
    let current = read_text(mem.store(), &MemPath::known(INDEX_FILE))?;
    if let Some(mut listed) = current.as_deref().and_then(parse_index) {
        for (path, text) in changes {
            replace_entry(&mut listed, path, text.as_deref());
        }
        let text = render_index(&listed);
        if fits(mem.config().index.cap(), &text) {
            return save_index(tx, current.as_deref(), &text, !listed.is_empty());
        }
    } else if let (Some(root), Some(gone)) = (current.as_deref(), gone) {
        // What each path held before: the text that left where a path is gone now, nothing
        // where one is there now (a move's target never overwrites).
        let noted: Vec<NoteChange<'_>> = changes
            .iter()
            .map(|(p, now)| match now {
                None => (p, Some(gone), None),
                Some(t) => (p, None, Some(t.as_str())),
            })
            .collect();
        if changes.iter().filter(|(_, now)| now.is_none()).count() == 1
            && let Some(new) = relayout_changes(mem, root, &noted, true)?
        {
            return save_relayout(tx, root, new);
        }
    }
    let files = scan(mem.store(), &mem.layout())?;
    write_index(tx, &files).map(drop)
}

/// Drops the index line of `path`, then adds one for `text` when it is a listable note.
fn replace_entry(listed: &mut Vec<IndexEntry>, path: &MemPath, text: Option<&str>) {
    listed.retain(|e| e.path != path.as_str());
    let Some(text) = text else { return };
    // Only memdir's own layout has a generated index, so its note rule applies.
    if !memdir_core::host::FolderLayout::default().is_note_path(path.as_str()) {
        return;
    }
    let note = Note::parse(text);
    if note.is_listed() {
        listed.push(entry(path, &note));
    }
}

fn save_index(
    tx: &Change<'_>,
    current: Option<&str>,
    text: &str,
    has_entries: bool,
) -> Result<(), Error> {
    if current != Some(text) && (has_entries || current.is_some()) {
        tx.write_index(&MemPath::known(INDEX_FILE), text.as_bytes())?;
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
pub(crate) fn context_sections(mem: &Ctx) -> Result<Vec<Section>, Error> {
    let store = mem.store();
    let layout = mem.layout();
    let (core_file, state_file) = (layout.core, layout.state);
    let mut out = Vec::new();
    let index_file = layout.index_path();
    let index = match index_file {
        Some(f) => read_text(store, &MemPath::known(f))?.unwrap_or_default(),
        None => String::new(),
    };
    let index_cap = mem.config().index.cap();
    if let Some(index_file) = index_file
        && !index.trim().is_empty()
    {
        let (mut kept, left_out) = fit(&index, index_cap);
        if left_out > 0 {
            kept.push_str(&format!(
                "\n({left_out} more line(s) of {index_file} not loaded: it is over its cap of {} lines and {} bytes. \
                 See them with `memdir read {index_file}`; merge or archive notes, then `memdir lint`.)\n",
                index_cap.max_lines, index_cap.max_bytes
            ));
        }
        out.push(
            Section::new(
                "index",
                format!("Index of notes ({index_file})"),
                Some(index_file.to_string()),
                nest_headings(&kept),
            )
            .with_fill(Fill::Head),
        );
    }
    let state = read_text(store, &MemPath::known(state_file))?.unwrap_or_default();
    if !state.trim().is_empty() {
        let state_cap = mem.config().state.cap();
        let (mut kept, left_out) = fit(&state, state_cap);
        if left_out > 0 {
            kept.push_str(&format!(
                "\n({left_out} more line(s) of {state_file} not loaded: it is over its cap. \
                 Run `memdir sweep` to archive old lines, or remove some.)\n"
            ));
        }
        out.push(
            Section::new(
                "state",
                format!("Running state ({state_file})"),
                Some(state_file.to_string()),
                nest_headings(&kept),
            )
            .with_fill(Fill::Tail),
        );
    }
    let core = read_text(store, &MemPath::known(core_file))?.unwrap_or_default();
    let mut capped = vec![(core_file, mem.config().core.cap(), core.as_str())];
    if let Some(index_file) = index_file {
        capped.push((index_file, index_cap, index.as_str()));
    }
    if let Some(line) = growth_guard(&capped) {
        out.push(Section::new("guard", "", None, line));
    }
    let pending = crate::proposals::proposals(mem)?.len();
    if pending > 0 {
        out.push(Section::new(
            "proposals",
            "",
            None,
            format!(
                "{pending} proposed change(s) to {core_file} wait for the user's review in {}/: do not propose them again. See them with `memdir review`.",
                crate::proposals::PROPOSALS_DIR
            ),
        ));
    }
    out.extend(crate::gates::gate_context(mem)?);
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
