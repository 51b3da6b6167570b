//! `lint`: checks a memory folder and reports findings with a file, a line, a severity and a fix.
//!
//! Errors: frontmatter that does not parse, two notes with one name, links (and `superseded_by`
//! links) that lead nowhere, and core, index or state over their caps. Warnings: notes the index
//! does not list (no frontmatter, no name or description, or an index that is out of date), links
//! to superseded notes, files too large to be useful in a prompt, undated state lines, and expired
//! scratch notes or notes that `sweep` has not moved yet.

use crate::archive::is_expired;
use crate::catalogue::Notes;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::note_index::entries;
use crate::notes::{NoteFile, read_text, resolver, successor, successors};
use crate::store::{EntryKind, StoreError};
use memdir_core::caps::{Cap, Size};
use memdir_core::host::IndexKind;
use memdir_core::links::{extract, normalize};
use memdir_core::log::EXTERNAL_SCRATCH_MARK;
use memdir_core::note::{
    INDEX_FILE, IndexEntry, NOT_NOTE_DIRS, SOURCE_KEY, SUPERSEDED_BY_KEY, index_line,
};
use memdir_core::path::MemPath;
use memdir_core::scratch::{SCRATCH_DIR, ScratchName};
use memdir_core::state::{ARCHIVE_DIR, undated_items};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// Files larger than this many bytes are flagged: the Anthropic memory tool's `view` cuts text
/// files at 16,000 characters, and a file that large is rarely read whole.
pub const LARGE_FILE_BYTES: u64 = 16_000;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Must be fixed; `memdir lint` exits non-zero.
    Error,
    /// Worth fixing.
    Warning,
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file, from the root.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// Error or warning.
    pub severity: Severity,
    /// A stable short name: `frontmatter`, `duplicate-name`, `broken-link`, `over-cap`,
    /// `not-in-index`, `stale-index`, `unlisted`, `too-large`, `undated-state`, `expired-scratch`,
    /// `expired-note`, `external-in-index`, `external-unfenced`, `index-drift` (a hand-written
    /// index and the notes disagree), `superseded-link` (a link to a note another supersedes),
    /// `broken-supersede` (a `superseded_by` that leads nowhere).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Everything lint found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LintReport {
    /// Notes checked.
    pub notes: usize,
    /// Findings, by file then line.
    pub findings: Vec<Finding>,
    /// How many findings are errors.
    pub errors: usize,
    /// How many are warnings.
    pub warnings: usize,
}

struct Out(Vec<Finding>);

impl Out {
    fn push(
        &mut self,
        file: &str,
        line: usize,
        severity: Severity,
        code: &'static str,
        message: String,
        hint: impl Into<String>,
    ) {
        self.0.push(Finding {
            file: file.to_string(),
            line,
            severity,
            code,
            message,
            hint: hint.into(),
        });
    }
}

/// Checks the folder; never changes it.
pub(crate) fn lint(cx: &Ctx) -> Result<LintReport, Error> {
    let store = cx.store();
    let notes = crate::catalogue::notes(cx)?;
    let files = notes.files();
    // What the notes alone give is kept with the catalogue's snapshot until a note changes.
    let mut out = Out(notes
        .lint
        .get_or_init(|| {
            let mut out = Out(Vec::new());
            check_frontmatter(files, &mut out);
            check_duplicates(files, &mut out);
            check_links(&notes, &mut out);
            check_superseded(files, &mut out);
            check_external(files, &mut out);
            out.0
        })
        .clone());
    let layout = cx.layout();
    let (core_file, state_file) = (layout.core, layout.state);
    let index = match layout.index_path() {
        Some(f) => read_text(store, &MemPath::known(f))?,
        None => None,
    };
    match layout.index {
        IndexKind::Generated => {
            check_index(files, index.as_deref(), cx.config().index.cap(), &mut out)
        }
        IndexKind::HandWritten => {
            check_hand_index(store, files, layout.index_file, index.as_deref(), &mut out)?
        }
        IndexKind::None => {}
    }
    let cfg = cx.config();
    let core = read_text(store, &MemPath::known(core_file))?;
    let state = read_text(store, &MemPath::known(state_file))?;
    for (file, cap, text, hint) in [
        (
            core_file,
            cfg.core.cap(),
            &core,
            "move detail into notes and keep core to what every turn needs",
        ),
        (
            layout.index_file,
            cfg.index.cap(),
            &index,
            "merge related notes, or give stale ones an `expires` date and run `memdir sweep`",
        ),
        (
            state_file,
            cfg.state.cap(),
            &state,
            "run `memdir sweep` to archive old lines, or remove lines that no longer hold",
        ),
    ] {
        if let Some(text) = text {
            check_cap(file, cap, text, hint, &mut out);
        }
    }
    if let Some(state) = &state {
        for line in undated_items(state) {
            out.push(
                state_file,
                line,
                Severity::Warning,
                "undated-state",
                "this state line has no date, so sweep never archives it".to_string(),
                "start it with the day it became true: `- 2026-11-30 text`",
            );
        }
    }
    check_sizes(cx, files, &mut out)?;
    check_expired(cx, files, &mut out)?;
    let mut findings = out.0;
    findings.sort_by(|a, b| {
        (a.file.as_str(), a.line, a.severity, a.code).cmp(&(
            b.file.as_str(),
            b.line,
            b.severity,
            b.code,
        ))
    });
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    Ok(LintReport {
        notes: files.iter().filter(|f| f.is_note).count(),
        warnings: findings.len() - errors,
        errors,
        findings,
    })
}

/// Flags `.md` files too large for a prompt: notes by the text already read, and the files of
/// the other loaded or served folders by their listed size. The archive is never loaded,
/// session transcripts are read by line range (their size is the point), and the capped
/// files have their own check.
fn check_sizes(cx: &Ctx, files: &[NoteFile], out: &mut Out) -> Result<(), Error> {
    let mut sizes: Vec<(String, u64)> = files
        .iter()
        .filter(|f| f.is_note)
        .map(|f| (f.path.to_string(), f.text.len() as u64))
        .collect();
    for dir in NOT_NOTE_DIRS
        .iter()
        .filter(|d| **d != ARCHIVE_DIR && **d != memdir_core::transcript::SESSIONS_DIR)
    {
        let dir = match MemPath::parse(dir) {
            Ok(d) if cx.store().stat(&d)?.is_some() => d,
            _ => continue,
        };
        for e in cx.store().walk(&dir)? {
            if e.path.as_str().ends_with(".md") {
                sizes.push((e.path.to_string(), e.size));
            }
        }
    }
    for (p, size) in sizes {
        if size > LARGE_FILE_BYTES {
            out.push(
                &p,
                1,
                Severity::Warning,
                "too-large",
                format!(
                    "{size} bytes: too large to be useful in a prompt (over {LARGE_FILE_BYTES})"
                ),
                "split it into smaller notes that link to each other",
            );
        }
    }
    Ok(())
}

fn check_expired(cx: &Ctx, files: &[NoteFile], out: &mut Out) -> Result<(), Error> {
    let now = cx.clock().now();
    let now_ms = now.timestamp().as_millisecond();
    let scratch = match cx.store().list(&MemPath::known(SCRATCH_DIR)) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    for e in scratch {
        if e.kind == EntryKind::File
            && e.path
                .file_name()
                .and_then(ScratchName::parse)
                .is_some_and(|n| n.expires_ms <= now_ms)
        {
            out.push(
                e.path.as_str(),
                1,
                Severity::Warning,
                "expired-scratch",
                "this scratch note has expired but is still here".to_string(),
                "run `memdir sweep`",
            );
        }
    }
    for f in files.iter().filter(|f| f.is_note) {
        if let Some(d) = f.note.meta.expires
            && is_expired(d, now.date())
        {
            let line = f
                .note
                .frontmatter
                .as_ref()
                .and_then(|fm| fm.line_of("expires"))
                .unwrap_or(1);
            out.push(
                f.path.as_str(),
                line,
                Severity::Warning,
                "expired-note",
                format!("this note expired on {d} but is still here"),
                "run `memdir sweep` to move it to archive/, or push `expires` back",
            );
        }
    }
    Ok(())
}

/// External content where it loads on every turn: a labelled note's index line (fenced, but
/// still read every turn: a warning), and an external mark in `core.md` or `state.md`, which
/// load unfenced (an error).
fn check_external(files: &[NoteFile], out: &mut Out) {
    for f in files {
        let p = f.path.as_str();
        let line = f
            .note
            .frontmatter
            .as_ref()
            .and_then(|fm| fm.line_of(SOURCE_KEY))
            .unwrap_or(1);
        if f.is_note && f.note.is_listed() && f.note.is_external() {
            out.push(
                p,
                line,
                Severity::Warning,
                "external-in-index",
                "this note came from an external source, and its name and description load on every turn (fenced as untrusted in the index)".to_string(),
                "check them; if the user vouches for the note, remove `source: external`; otherwise remove `description` to keep it out of the index",
            );
        }
        if !f.is_note && (f.note.is_external() || f.text.contains(EXTERNAL_SCRATCH_MARK)) {
            out.push(
                p,
                line,
                Severity::Error,
                "external-unfenced",
                format!("{p} holds content marked external, and it loads on every turn without a fence"),
                "move that content into a note (it keeps its label there) and remove it from this file",
            );
        }
    }
}

fn check_frontmatter(files: &[NoteFile], out: &mut Out) {
    for f in files.iter().filter(|f| f.is_note) {
        let p = f.path.as_str();
        for e in &f.note.errors {
            out.push(
                p,
                e.line,
                Severity::Error,
                "frontmatter",
                e.message.clone(),
                "fix the YAML between the `---` lines; quote values that hold `: ` or start with a symbol",
            );
        }
        if !f.note.errors.is_empty() || crate::note_index::is_folder_index(f) {
            continue;
        }
        match &f.note.frontmatter {
            None => out.push(
                p,
                1,
                Severity::Warning,
                "unlisted",
                "no frontmatter, so the index does not list this note (links to it still work)"
                    .to_string(),
                "add `---`, `name: ...`, `description: ...`, `---` at the top",
            ),
            Some(fm) => {
                let missing: Vec<&str> = [
                    ("name", &f.note.meta.name),
                    ("description", &f.note.meta.description),
                ]
                .into_iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect();
                if !missing.is_empty() {
                    out.push(
                        p,
                        fm.line_of("name").unwrap_or(1),
                        Severity::Warning,
                        "unlisted",
                        format!(
                            "the frontmatter has no {}, so the index does not list this note",
                            missing.join(" and no ")
                        ),
                        format!(
                            "add `{}: ...` to the frontmatter",
                            missing.join(": ...` and `")
                        ),
                    );
                }
            }
        }
    }
}

fn check_duplicates(files: &[NoteFile], out: &mut Out) {
    let mut by_name: BTreeMap<String, Vec<&NoteFile>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.is_note) {
        if let Some(n) = &f.note.meta.name {
            by_name.entry(normalize(n)).or_default().push(f);
        }
    }
    for group in by_name.values().filter(|g| g.len() > 1) {
        for f in group {
            let others: Vec<&str> = group
                .iter()
                .filter(|o| o.path != f.path)
                .map(|o| o.path.as_str())
                .collect();
            let line = f
                .note
                .frontmatter
                .as_ref()
                .and_then(|fm| fm.line_of("name"))
                .unwrap_or(1);
            out.push(
                f.path.as_str(),
                line,
                Severity::Error,
                "duplicate-name",
                format!(
                    "name {:?} is also used by {}, so links to it are ambiguous",
                    f.note.meta.name.as_deref().unwrap_or(""),
                    others.join(", ")
                ),
                "rename one of them, or merge them into one note",
            );
        }
    }
}

/// The line of a note's `superseded_by`, when it names a successor: its link is checked by
/// [`check_superseded`], not as a link of the text.
fn superseded_by_line(f: &NoteFile) -> Option<usize> {
    f.note.meta.superseded_by.as_ref()?;
    f.note.frontmatter.as_ref()?.line_of(SUPERSEDED_BY_KEY)
}

fn check_links(notes: &Notes, out: &mut Out) {
    for (i, f) in notes.files().iter().enumerate() {
        let own = superseded_by_line(f);
        for (link, to) in notes.links_of(i) {
            if Some(link.line) == own {
                continue;
            }
            if to.is_none() {
                out.push(
                    f.path.as_str(),
                    link.line,
                    Severity::Error,
                    "broken-link",
                    format!(
                        "{} leads nowhere: no note has that name, file name or path",
                        link.raw
                    ),
                    format!(
                        "fix the link, or create the note: `memdir note new {} --description ...`",
                        suggest_name(&link.target)
                    ),
                );
            }
        }
    }
}

/// A `superseded_by` that leads nowhere (or back to its own note) is an error; a link to a
/// superseded note is a warning at the linking line, naming the note that is current now (the
/// end of the chain of successors).
fn check_superseded(files: &[NoteFile], out: &mut Out) {
    let r = resolver(files);
    let by_path: std::collections::HashMap<&str, &NoteFile> =
        files.iter().map(|f| (f.path.as_str(), f)).collect();
    for f in files.iter().filter(|f| f.is_note) {
        if let Some(target) = &f.note.meta.superseded_by
            && successor(f, &r).is_none()
        {
            out.push(
                f.path.as_str(),
                superseded_by_line(f).unwrap_or(1),
                Severity::Error,
                "broken-supersede",
                format!(
                    "{SUPERSEDED_BY_KEY} [[{target}]] leads nowhere: no other note has that name, file name or path"
                ),
                "point it at the note that replaces this one: `memdir note supersede OLD NEW`",
            );
        }
    }
    for f in files {
        let own = superseded_by_line(f);
        for link in extract(&f.text) {
            let Some(to) = r.resolve(&link.target) else {
                continue;
            };
            if Some(link.line) == own || to == f.path.as_str() {
                continue;
            }
            let Some(current) = successors(&by_path, &r, to).last().copied() else {
                continue;
            };
            if current == f.path.as_str() {
                // The note that replaced it may name its predecessor.
                continue;
            }
            let name = by_path
                .get(current)
                .and_then(|c| c.note.meta.name.as_deref())
                .unwrap_or(current);
            out.push(
                f.path.as_str(),
                link.line,
                Severity::Warning,
                "superseded-link",
                format!(
                    "{} links to {to}, which [[{name}]] ({current}) supersedes",
                    link.raw
                ),
                format!("link to [[{name}]] instead, or keep the link if it is about the old note"),
            );
        }
    }
}

fn suggest_name(target: &str) -> String {
    let slug: String = normalize(target)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' {
                c
            } else {
                '-'
            }
        })
        .collect();
    slug.trim_matches('-').to_string()
}

/// A hand-written index (Claude Code's `MEMORY.md`) is never regenerated, so lint reports
/// where it and the notes drifted apart: a note it does not link to, a link to a file that
/// is not there (`index-drift`).
fn check_hand_index(
    store: crate::store::Reader<'_>,
    files: &[NoteFile],
    index_file: &str,
    index: Option<&str>,
    out: &mut Out,
) -> Result<(), Error> {
    let links = memdir_core::host::index_links(index.unwrap_or(""));
    let linked: HashSet<&str> = links.iter().map(|l| l.target.as_str()).collect();
    for f in files.iter().filter(|f| f.is_note) {
        if !linked.contains(f.path.as_str()) {
            let title = f
                .note
                .meta
                .name
                .clone()
                .unwrap_or_else(|| f.path.as_str().trim_end_matches(".md").to_string());
            let hook = f.note.meta.description.clone().unwrap_or_default();
            out.push(
                f.path.as_str(),
                1,
                Severity::Warning,
                "index-drift",
                format!("{index_file} does not link to this note, so the host never sees it"),
                format!(
                    "add a line to {index_file} (memdir never rewrites it): `- [{title}]({}) — {hook}`",
                    f.path
                ),
            );
        }
    }
    for l in &links {
        let exists = MemPath::parse_file(&l.target)
            .ok()
            .map(|p| store.stat(&p))
            .transpose()?
            .flatten()
            .is_some();
        if !exists {
            out.push(
                index_file,
                l.line,
                Severity::Warning,
                "index-drift",
                format!("this line links to {}, which does not exist", l.target),
                format!("remove the line from {index_file}, or restore the file"),
            );
        }
    }
    Ok(())
}

fn check_index(files: &[NoteFile], index: Option<&str>, cap: Cap, out: &mut Out) {
    let expected = entries(files);
    let Some(index) = index else {
        if !expected.is_empty() {
            out.push(
                INDEX_FILE,
                1,
                Severity::Warning,
                "not-in-index",
                format!("{INDEX_FILE} is missing, so no note is listed"),
                "run `memdir index`",
            );
        }
        return;
    };
    let planned = memdir_core::layout::layout(&crate::note_index::dated(files), cap);
    if planned.by_folder() {
        check_folder_layout(files, index, &planned, out);
        return;
    }
    let present: HashSet<&str> = index.lines().collect();
    let mut wanted: HashSet<String> = HashSet::new();
    for e in &expected {
        let line = rendered_line(e);
        if !present.contains(line.as_str()) {
            out.push(
                &e.path,
                1,
                Severity::Warning,
                "not-in-index",
                format!("{INDEX_FILE} does not list this note as it is now"),
                "run `memdir index`",
            );
        }
        wanted.insert(line);
    }
    for (i, line) in index.lines().enumerate() {
        if line.starts_with("- [") && !wanted.contains(line) {
            out.push(
                INDEX_FILE,
                i + 1,
                Severity::Warning,
                "stale-index",
                "this line matches no note as it is now".to_string(),
                "run `memdir index`",
            );
        }
    }
}

/// The line a generated index holds for `e`. An external note's line is inside the untrusted
/// block, defused there (`<` and `>` shown as look-alikes, invisible characters dropped), so it
/// is compared as rendering writes it, not as [`index_line`] gives it.
fn rendered_line(e: &IndexEntry) -> String {
    if !e.external {
        return index_line(e);
    }
    memdir_core::note::render_groups(std::slice::from_ref(e))
        .lines()
        .find(|l| l.starts_with("- ["))
        .map_or_else(|| index_line(e), str::to_string)
}

/// An index that lists folders: the root and every folder's index must be what the notes give.
fn check_folder_layout(
    files: &[NoteFile],
    index: &str,
    planned: &memdir_core::layout::Layout,
    out: &mut Out,
) {
    if index != planned.root {
        out.push(
            INDEX_FILE,
            1,
            Severity::Warning,
            "stale-index",
            format!("{INDEX_FILE} does not list the folders as the notes are now"),
            "run `memdir index`",
        );
    }
    for (path, text) in &planned.folders {
        match files.iter().find(|f| f.path.as_str() == path) {
            None => out.push(
                path,
                1,
                Severity::Warning,
                "not-in-index",
                "this folder's index is missing, so its notes are not listed".to_string(),
                "run `memdir index`",
            ),
            Some(f) if !crate::note_index::is_folder_index(f) => out.push(
                path,
                1,
                Severity::Warning,
                "folder-index-taken",
                "a file that memdir did not generate has the name of this folder's index, so its notes are not listed".to_string(),
                "rename that file, then run `memdir index`",
            ),
            Some(f) if f.text != *text => out.push(
                path,
                1,
                Severity::Warning,
                "stale-index",
                "this folder's index does not list its notes as they are now".to_string(),
                "run `memdir index`",
            ),
            Some(_) => {}
        }
    }
    for f in files
        .iter()
        .filter(|f| crate::note_index::is_folder_index(f))
    {
        if !planned.folders.iter().any(|(p, _)| p == f.path.as_str()) {
            out.push(
                f.path.as_str(),
                1,
                Severity::Warning,
                "stale-index",
                "a generated folder index no longer needed".to_string(),
                "run `memdir index`",
            );
        }
    }
}

fn check_cap(file: &str, cap: Cap, text: &str, hint: &str, out: &mut Out) {
    let s = Size::of(text);
    if s.lines <= cap.max_lines && s.bytes <= cap.max_bytes {
        return;
    }
    let line = if s.lines > cap.max_lines {
        cap.max_lines + 1
    } else {
        1
    };
    out.push(
        file,
        line,
        Severity::Error,
        "over-cap",
        format!(
            "{} lines and {} bytes, over the cap of {} lines and {} bytes",
            s.lines, s.bytes, cap.max_lines, cap.max_bytes
        ),
        hint,
    );
}
