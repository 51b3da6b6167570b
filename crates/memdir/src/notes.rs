//! Notes on disk: finding and reading them, creating one, following `[[links]]`, and the write
//! hook that keeps the index current and `state.md` under its cap.

use crate::change::Change;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::store::{Entry, EntryKind, LockName, Precondition, Reader, StoreError};
use memdir_core::host::FolderLayout;
use memdir_core::links::{self, Link, Resolver};
use memdir_core::note::{NOT_NOTE_DIRS, NewNote, Note, mark_superseded};
use memdir_core::path::MemPath;
use serde::Serialize;

/// One file read for notes work: a note, or `core.md` / `state.md`, which links may come from
/// and point to.
#[derive(Debug, Clone)]
pub struct NoteFile {
    /// Its path from the root.
    pub path: MemPath,
    /// Its whole text (invalid UTF-8 replaced).
    pub text: String,
    /// The parsed note.
    pub note: Note,
    /// True for notes; false for `core.md` and `state.md`.
    pub is_note: bool,
}

impl NoteFile {
    pub(crate) fn new(path: MemPath, text: String, is_note: bool) -> NoteFile {
        let note = Note::parse(&text);
        NoteFile {
            path,
            text,
            note,
            is_note,
        }
    }
}

/// Reads a text file, `None` when it is not there.
pub(crate) fn read_text(store: Reader<'_>, path: &MemPath) -> Result<Option<String>, Error> {
    match store.read(path) {
        // Valid UTF-8 (the usual case) is taken over without a copy.
        Ok(b) => Ok(Some(String::from_utf8(b).unwrap_or_else(|e| {
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }))),
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The paths of every note, in path order. Folders that never hold notes are not walked.
pub(crate) fn note_paths(store: Reader<'_>, layout: &FolderLayout) -> Result<Vec<MemPath>, Error> {
    Ok(note_entries(store, layout)?
        .into_iter()
        .map(|e| e.path)
        .collect())
}

/// [`note_paths`] with each note's listed size and modification time.
pub(crate) fn note_entries(store: Reader<'_>, layout: &FolderLayout) -> Result<Vec<Entry>, Error> {
    let is_note_path = |p: &str| layout.is_note_path(p);
    let mut out = Vec::new();
    let top = match store.list(&MemPath::root()) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => return Ok(out),
        Err(e) => return Err(e.into()),
    };
    for e in top {
        match e.kind {
            EntryKind::File if is_note_path(e.path.as_str()) => out.push(e),
            EntryKind::File => {}
            EntryKind::Dir => {
                if NOT_NOTE_DIRS.contains(&e.path.as_str()) {
                    continue;
                }
                for f in store.walk(&e.path)? {
                    if is_note_path(f.path.as_str()) {
                        out.push(f);
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Reads every note of a folder in `layout`, plus core and `state.md` when they exist (they
/// can hold links).
pub fn scan(store: Reader<'_>, layout: &FolderLayout) -> Result<Vec<NoteFile>, Error> {
    if store.local_root().is_none() {
        return scan_remote(store, layout);
    }
    let mut out = Vec::new();
    for special in [layout.core, layout.state] {
        if let Some(text) = read_text(store, &MemPath::known(special))? {
            out.push(NoteFile::new(MemPath::known(special), text, false));
        }
    }
    for path in note_paths(store, layout)? {
        // A note removed between the listing and the read is simply gone.
        if let Some(text) = read_text(store, &path)? {
            out.push(NoteFile::new(path, text, true));
        }
    }
    Ok(out)
}

/// [`scan`] on a store without a local folder: one `read_all` (a listing and only what changed
/// since the store's last call, on PostgreSQL), not a query per note.
fn scan_remote(store: Reader<'_>, layout: &FolderLayout) -> Result<Vec<NoteFile>, Error> {
    let (core, state) = (layout.core, layout.state);
    let mut keep = |p: &MemPath| {
        let s = p.as_str();
        if s == core || s == state {
            return true;
        }
        let top_dir = s.split_once('/').map(|(d, _)| d);
        top_dir.is_none_or(|d| !NOT_NOTE_DIRS.contains(&d)) && layout.is_note_path(s)
    };
    let files = store.read_all(&mut keep)?;
    let text = |b: Vec<u8>| {
        String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    };
    let mut specials = Vec::new();
    let mut notes = Vec::new();
    for (path, bytes) in files {
        if path.as_str() == core || path.as_str() == state {
            specials.push((path, bytes));
        } else {
            notes.push(NoteFile::new(path, text(bytes), true));
        }
    }
    // Core first, then state, as the folder's scan gives them.
    specials.sort_by_key(|(p, _)| p.as_str() != core);
    let mut out: Vec<NoteFile> = specials
        .into_iter()
        .map(|(p, b)| NoteFile::new(p, text(b), false))
        .collect();
    out.extend(notes);
    Ok(out)
}

/// The notes directly in `folder` (the root: notes at the top level; never its subfolders), in
/// path order, as [`scan`] reads them. A store without a local folder is read with one
/// `read_all`, as [`scan`] does.
pub(crate) fn scan_folder(
    store: Reader<'_>,
    layout: &FolderLayout,
    folder: &MemPath,
) -> Result<Vec<NoteFile>, Error> {
    let top_dir = folder.as_str().split('/').next().unwrap_or_default();
    if NOT_NOTE_DIRS.contains(&top_dir) {
        return Ok(Vec::new());
    }
    let here =
        |p: &MemPath| p.parent().unwrap_or_default() == *folder && layout.is_note_path(p.as_str());
    let mut out = Vec::new();
    if store.local_root().is_none() {
        for (path, bytes) in store.read_all(&mut |p| here(p))? {
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            out.push(NoteFile::new(path, text, true));
        }
    } else {
        let entries = match store.list(folder) {
            Ok(v) => v,
            Err(StoreError::NotFound(_)) => return Ok(out),
            Err(e) => return Err(e.into()),
        };
        for e in entries {
            if e.kind == EntryKind::File
                && here(&e.path)
                && let Some(text) = read_text(store, &e.path)?
            {
                out.push(NoteFile::new(e.path, text, true));
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A resolver over scanned files: frontmatter names, stems and paths.
pub fn resolver(files: &[NoteFile]) -> Resolver {
    Resolver::new(
        files
            .iter()
            .map(|f| (f.path.as_str(), f.note.meta.name.as_deref())),
    )
}

/// What `memdir note new` is asked to write.
#[derive(Debug, Clone)]
pub struct NoteRequest<'a> {
    /// The name, a slug path such as `people/priya`.
    pub name: &'a str,
    /// The one-line description.
    pub description: &'a str,
    /// The type (`user`, `feedback`, `project`, `reference`, ...).
    pub kind: Option<&'a str>,
    /// Tags, one word each.
    pub tags: &'a [String],
    /// The day after which `sweep` archives the note.
    pub expires: Option<jiff::civil::Date>,
    /// The body.
    pub body: &'a str,
    /// Replace an existing note of that name.
    pub force: bool,
}

/// One link with where it leads.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRef {
    /// The file the link is in.
    pub file: String,
    /// Its 1-based line.
    pub line: usize,
    /// The link as written.
    pub link: Link,
    /// The file it resolves to, or `None` when it is broken.
    pub resolves_to: Option<String>,
}

/// A note's outgoing links and backlinks.
#[derive(Debug, Clone, Serialize)]
pub struct LinksReport {
    /// The note asked about.
    pub path: String,
    /// Its frontmatter name, if any.
    pub name: Option<String>,
    /// Links in the note, in order.
    pub outgoing: Vec<LinkRef>,
    /// Links in other files that resolve to the note, by file then line.
    pub backlinks: Vec<LinkRef>,
    /// True when no note has this name yet; `backlinks` are then the links that name it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

/// One note reached by [`Memory::link_graph`].
#[derive(Debug, Clone, Serialize)]
pub struct GraphNode {
    /// Its path.
    pub path: String,
    /// Its frontmatter name, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its frontmatter description, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Steps from the note asked about (0 for that note).
    pub depth: usize,
    /// How it was reached: `outgoing` (linked from `via`) or `backlink` (links to `via`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relation: Option<&'static str>,
    /// The note it was reached from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// True when its content came from an external source: show it fenced.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
}

/// A note with the notes around it: [`Memory::link_graph`].
#[derive(Debug, Clone, Serialize)]
pub struct LinkGraph {
    /// The note asked about (depth 0), then every note reached, by depth, then path.
    pub nodes: Vec<GraphNode>,
    /// Links met on the way that lead nowhere, as `file:line [[target]]`.
    pub broken: Vec<String>,
    /// True when the walk stopped at [`GRAPH_MAX_NODES`] notes.
    pub truncated: bool,
}

/// The most notes one [`Memory::link_graph`] returns.
pub const GRAPH_MAX_NODES: usize = 50;
/// The deepest walk [`Memory::link_graph`] takes.
pub const GRAPH_MAX_DEPTH: usize = 3;

/// A note asked for by name: `[[payment-retry-policy]]`, `payment-retry-policy`, or a path.
/// Returns the text inside `[[...]]` without alias or heading, or the input as given.
pub fn link_target(input: &str) -> &str {
    let t = input.trim();
    let t = t.strip_prefix('!').unwrap_or(t);
    match t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) {
        Some(inner) => {
            let inner = inner.split('|').next().unwrap_or(inner);
            inner.split('#').next().unwrap_or(inner).trim()
        }
        None => input.trim(),
    }
}

/// Writes `notes/<name>.md` with frontmatter (name, description, type, created) and the body,
/// then refreshes the index. Refuses to replace an existing note unless `force` is set, and
/// refuses a note that would take the index over its cap. Returns the path written.
pub(crate) fn note_new(cx: &Ctx, req: &NoteRequest<'_>) -> Result<String, Error> {
    let text = NewNote {
        name: req.name,
        description: req.description,
        kind: req.kind,
        tags: req.tags,
        created: cx.clock().now().date(),
        expires: req.expires,
        body: req.body,
    }
    .render()
    .map_err(Error::Invalid)?;
    let path = MemPath::parse_file(&cx.layout().note_path(req.name))?;
    let guarded = crate::guard::content(cx, path.as_str(), &text, None)?;
    let text = crate::trust::label(cx, &path, None, &guarded.text)?;
    let tx = crate::change::begin(cx, "note new", path.as_str())?.redacted(&guarded.redacted);
    let lock = tx.lock(LockName::File(&path))?;
    let exists = || {
        Error::Store(StoreError::Conflict(format!(
            "{path} already exists: edit it, pick another name, or pass --force to replace it"
        )))
    };
    if !req.force && cx.store().stat(&path)?.is_some() {
        return Err(exists());
    }
    let pre = if req.force {
        Precondition::Any
    } else {
        Precondition::Absent
    };
    let written = if cx.layout().index_generated() {
        crate::note_index::write_note(&tx, &path, &text, &pre)
    } else {
        // A hand-written index (or none) is the host's: the note is a plain file.
        tx.write_if(&path, text.as_bytes(), &pre).map(drop)
    };
    written.map_err(|e| match e {
        Error::Store(StoreError::Conflict(_)) if !req.force => exists(),
        e => e,
    })?;
    drop(lock);
    tx.commit()?;
    Ok(path.to_string())
}

/// Regenerates the index, `MEMORY.md`, from every note's frontmatter (recorded as one change).
pub(crate) fn regenerate_index(cx: &Ctx) -> Result<crate::note_index::IndexReport, Error> {
    let layout = cx.layout();
    if !layout.index_generated() {
        return Err(Error::Invalid(match layout.index_path() {
            Some(index) => format!(
                "in the {} layout {index} is written by the agent, so memdir never regenerates it: `memdir lint` shows where it and the notes differ",
                layout.name
            ),
            None => format!(
                "the {} layout has no index of notes to generate",
                layout.name
            ),
        }));
    }
    let tx = crate::change::begin(cx, "index", layout.index_file)?;
    let report = crate::note_index::refresh(&tx)?;
    tx.commit()?;
    Ok(report)
}

/// The path a reader asked for: a path that exists is taken as it is; otherwise a note's
/// name (`payment-retry-policy` or `[[payment-retry-policy]]`) resolved like a link (name,
/// then file name, then path). Errors when neither finds anything.
pub(crate) fn resolve_note(cx: &Ctx, input: &str) -> Result<String, Error> {
    let target = link_target(input);
    let bracketed = target != input.trim();
    if !bracketed {
        // A path that leaves the memory is refused as such, never looked up as a name.
        let p = MemPath::parse(input)?;
        if cx.store().stat(&p)?.is_some() {
            return Ok(if p.is_root() {
                "/".to_string()
            } else {
                p.to_string()
            });
        }
    }
    if target.is_empty() {
        return Err(Error::Invalid(
            "the note name is empty: give a path or a name like [[payment-retry-policy]]".into(),
        ));
    }
    let notes = crate::catalogue::notes(cx)?;
    match notes.resolve(target) {
        Some(found) => Ok(found.to_string()),
        // Something written as a path is reported as a missing path by the reader.
        None if !bracketed && (target.contains('/') || target.contains('.')) => {
            Ok(input.to_string())
        }
        None => Err(Error::NotFound(format!(
            "no file or note is named {target:?}: search with memory_search (`memdir search`), or list notes with `memdir ls notes`"
        ))),
    }
}

/// What [`note_supersede`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Superseded {
    /// The superseded note.
    pub old: String,
    /// The note that replaces it.
    pub new: String,
    /// The link written in the old note's `superseded_by`: the new note's name, or its path when
    /// the name leads elsewhere.
    pub link: String,
    /// False when the old note already named this successor, so nothing was written.
    pub changed: bool,
}

/// The note `path` says replaces it (`superseded_by`), resolved; `None` when it is not
/// superseded, or its link leads nowhere or back to itself.
pub(crate) fn successor<'a>(f: &NoteFile, r: &'a Resolver) -> Option<&'a str> {
    let to = r.resolve(f.note.meta.superseded_by.as_deref()?)?;
    (to != f.path.as_str()).then_some(to)
}

/// The notes after `path` in its chain of successors, in order, stopping before the first one
/// met twice (a cycle a hand edit made) or at one that is not superseded.
pub(crate) fn successors<'a>(
    by_path: &std::collections::HashMap<&str, &NoteFile>,
    r: &'a Resolver,
    path: &str,
) -> Vec<&'a str> {
    let mut chain: Vec<&str> = Vec::new();
    let mut at = by_path.get(path).copied();
    while let Some(f) = at {
        let Some(next) = successor(f, r) else { break };
        if next == path || chain.contains(&next) {
            break;
        }
        chain.push(next);
        at = by_path.get(next).copied();
    }
    chain
}

/// Marks the note `old` as superseded by the note `new` (each a path or a name, resolved as
/// [`resolve_note`] does): `old`'s frontmatter gets `superseded_by: "[[new]]"`, written as one
/// change through the same guard, trust label, index update and history record as an edit.
/// Refuses a missing note, a file that is not a note, `old` == `new`, and a cycle (`new` already
/// superseded by `old`, directly or through a chain).
pub(crate) fn note_supersede(cx: &Ctx, old: &str, new: &str) -> Result<Superseded, Error> {
    supersede(cx, old, new, None)
}

/// More work for the change that supersedes a note, done before it commits: accepting a
/// proposal files the proposal away in the same change. The change is recorded as `op` (on the
/// old note's path); when the note already names its successor, a change on `path` does only
/// this work.
pub(crate) struct Also<'f> {
    /// What the change is recorded as.
    pub(crate) op: &'f str,
    /// Where a change that only does this work is recorded.
    pub(crate) path: &'f str,
    /// The work.
    pub(crate) work: &'f dyn Fn(&Change<'_>) -> Result<(), Error>,
}

/// [`note_supersede`], with `also` done in the same change: the one way a note is marked
/// superseded, by `memdir note supersede` or by accepting a consolidation proposal.
pub(crate) fn supersede(
    cx: &Ctx,
    old: &str,
    new: &str,
    also: Option<Also<'_>>,
) -> Result<Superseded, Error> {
    let files = scan(cx.store(), &cx.layout())?;
    let r = resolver(&files);
    let by_path: std::collections::HashMap<&str, &NoteFile> =
        files.iter().map(|f| (f.path.as_str(), f)).collect();
    let find = |input: &str| -> Result<&NoteFile, Error> {
        let target = link_target(input);
        if target.is_empty() {
            return Err(Error::Invalid(
                "the note name is empty: give a path or a name like [[payment-retry-policy]]"
                    .into(),
            ));
        }
        let as_path = (target == input.trim())
            .then(|| MemPath::parse(input).ok())
            .flatten()
            .and_then(|p| by_path.get(p.as_str()).copied());
        let found = as_path.or_else(|| r.resolve(target).and_then(|p| by_path.get(p).copied()));
        match found {
            Some(f) if f.is_note => Ok(f),
            Some(f) => Err(Error::Invalid(format!(
                "{} is not a note: only notes can supersede or be superseded",
                f.path
            ))),
            None => Err(Error::NotFound(format!(
                "no note is named {target:?}: list notes with `memdir ls notes`, or create it with `memdir note new`"
            ))),
        }
    };
    let (old_f, new_f) = (find(old)?, find(new)?);
    let (old_p, new_p) = (old_f.path.as_str(), new_f.path.as_str());
    if old_p == new_p {
        return Err(Error::Invalid(format!(
            "{old} and {new} are the same note ({old_p}): name the note that replaces it"
        )));
    }
    let chain = successors(&by_path, &r, new_p);
    if let Some(at) = chain.iter().position(|p| *p == old_p) {
        let path: Vec<&str> = std::iter::once(new_p)
            .chain(chain[..=at].iter().copied())
            .collect();
        return Err(Error::Invalid(format!(
            "{new_p} is already superseded by {old_p} ({}): superseding {old_p} by it would make a cycle",
            path.join(" -> ")
        )));
    }
    if let Some(e) = old_f.note.errors.first() {
        return Err(Error::Invalid(format!(
            "{old_p} has a broken frontmatter (line {}: {}): fix it first, `memdir lint` shows where",
            e.line, e.message
        )));
    }
    let mut done = Superseded {
        old: old_p.to_string(),
        new: new_p.to_string(),
        link: successor_link(new_f, &r),
        changed: false,
    };
    if successor(old_f, &r) == Some(new_p) {
        if let Some(a) = also {
            let tx = crate::change::begin(cx, a.op, a.path)?;
            (a.work)(&tx)?;
            tx.commit()?;
        }
        return Ok(done);
    }
    let p = old_f.path.clone();
    let op = also.as_ref().map_or("note supersede", |a| a.op);
    let mut tx = crate::change::begin(cx, op, p.as_str())?
        .default_reason(format!("superseded by [[{}]]", done.link));
    let _lock = tx.lock(LockName::File(&p))?;
    let (bytes, version) = cx.store().read_versioned(&p)?;
    cx.check_base(&p, Some(&bytes))?;
    // Rewritten from the text under the lock, and written only over that version.
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::Invalid(format!("{p} is not UTF-8 text: it cannot be edited")))?;
    let updated = mark_superseded(&text, &done.link);
    let guarded = crate::guard::content(cx, p.as_str(), &updated, Some(&text))?;
    tx = tx.redacted(&guarded.redacted);
    let updated = crate::trust::label(cx, &p, Some(&text), &guarded.text)?;
    let pre = Precondition::Matches(version);
    match write_hook(&tx, &p, &updated, true, &pre) {
        Some(written) => crate::files::applied_anyway(cx, &mut tx, &p, &updated, written)?,
        None => drop(tx.write_if(&p, updated.as_bytes(), &pre)?),
    }
    if let Some(a) = also {
        (a.work)(&tx)?;
    }
    tx.commit()?;
    done.changed = true;
    Ok(done)
}

/// The link a note superseded by `new` names it with: its name when that leads back to it,
/// else its path without `.md` (which always does).
pub(crate) fn successor_link(new: &NoteFile, r: &Resolver) -> String {
    let new_p = new.path.as_str();
    new.note
        .meta
        .name
        .clone()
        .filter(|n| r.resolve(n) == Some(new_p))
        .unwrap_or_else(|| new_p.strip_suffix(".md").unwrap_or(new_p).to_string())
}

/// A note and the notes around it, for context in one call: its outgoing links and its
/// backlinks, then theirs, up to `depth` steps (at most [`GRAPH_MAX_DEPTH`], and at most
/// [`GRAPH_MAX_NODES`] notes), each with its name and description.
pub(crate) fn link_graph(cx: &Ctx, target: &str, depth: usize) -> Result<LinkGraph, Error> {
    let depth = depth.min(GRAPH_MAX_DEPTH);
    let notes = crate::catalogue::notes(cx)?;
    let files = notes.files();
    let wanted = link_target(target);
    let Some(start) = notes.resolve(wanted).map(str::to_string) else {
        return Err(Error::NotFound(format!(
            "no note is named {wanted:?}: run `memdir index` or `memdir ls notes` to see the names"
        )));
    };
    let by_path: std::collections::HashMap<&str, &NoteFile> =
        files.iter().map(|f| (f.path.as_str(), f)).collect();
    // Every resolved link once: (from, line, raw, to).
    let mut out_links: std::collections::HashMap<&str, Vec<String>> = Default::default();
    let mut back_links: std::collections::HashMap<String, Vec<&str>> = Default::default();
    let mut broken_at: std::collections::HashMap<&str, Vec<String>> = Default::default();
    for (i, f) in files.iter().enumerate() {
        for (link, to) in notes.links_of(i) {
            match to.map(|t| files[t].path.as_str()) {
                Some(to) if to != f.path.as_str() => {
                    let to = to.to_string();
                    let outs = out_links.entry(f.path.as_str()).or_default();
                    if !outs.contains(&to) {
                        outs.push(to.clone());
                        back_links.entry(to).or_default().push(f.path.as_str());
                    }
                }
                Some(_) => {}
                None => broken_at
                    .entry(f.path.as_str())
                    .or_default()
                    .push(format!("{}:{} {}", f.path, link.line, link.raw)),
            }
        }
    }
    let node = |path: &str, depth, relation, via: Option<&str>| {
        let f = by_path.get(path);
        GraphNode {
            path: path.to_string(),
            name: f.and_then(|f| f.note.meta.name.clone()),
            description: f.and_then(|f| f.note.meta.description.clone()),
            depth,
            relation,
            via: via.map(str::to_string),
            external: f.is_some_and(|f| f.note.is_external()),
        }
    };
    let mut seen: std::collections::HashSet<String> = [start.clone()].into();
    let mut graph = LinkGraph {
        nodes: vec![node(&start, 0, None, None)],
        broken: Vec::new(),
        truncated: false,
    };
    let mut frontier = vec![start];
    'walk: for d in 1..=depth {
        let mut next = Vec::new();
        for from in &frontier {
            graph
                .broken
                .extend(broken_at.get(from.as_str()).into_iter().flatten().cloned());
            let outs = out_links.get(from.as_str()).into_iter().flatten();
            let backs = back_links.get(from).into_iter().flatten();
            let around = outs
                .map(|p| (p.as_str(), "outgoing"))
                .chain(backs.map(|p| (*p, "backlink")));
            for (p, relation) in around {
                if !seen.insert(p.to_string()) {
                    continue;
                }
                if graph.nodes.len() >= GRAPH_MAX_NODES {
                    graph.truncated = true;
                    break 'walk;
                }
                graph.nodes.push(node(p, d, Some(relation), Some(from)));
                next.push(p.to_string());
            }
        }
        frontier = next;
    }
    Ok(graph)
}

/// Finds a note by link target (name, then stem, then path) and lists its outgoing links and
/// the links that point to it.
pub(crate) fn links(cx: &Ctx, target: &str) -> Result<LinksReport, Error> {
    let notes = crate::catalogue::notes(cx)?;
    let files = notes.files();
    let found = notes.resolve(target).and_then(|p| notes.index_of(p));
    let Some(found) = found else {
        // A note that does not exist yet can still be linked to: those links are its
        // backlinks (each one broken until the note is written).
        let wanted = links::normalize(target);
        let backlinks: Vec<LinkRef> = notes
            .all_links()
            .flat_map(|(f, ls)| {
                ls.iter()
                    .filter(|l| links::normalize(&l.target) == wanted)
                    .map(|link| LinkRef {
                        file: f.path.to_string(),
                        line: link.line,
                        link: link.clone(),
                        resolves_to: None,
                    })
            })
            .collect();
        if backlinks.is_empty() {
            return Err(Error::NotFound(format!(
                "no note is named {target:?} and nothing links to it: run `memdir index` or `memdir ls notes` to see the names"
            )));
        }
        return Ok(LinksReport {
            path: target.to_string(),
            name: None,
            outgoing: Vec::new(),
            backlinks,
            missing: true,
        });
    };
    let link_ref = |from: usize, link: &Link, to: Option<usize>| LinkRef {
        file: files[from].path.to_string(),
        line: link.line,
        link: link.clone(),
        resolves_to: to.map(|t| files[t].path.to_string()),
    };
    Ok(LinksReport {
        path: files[found].path.to_string(),
        name: files[found].note.meta.name.clone(),
        outgoing: notes
            .links_of(found)
            .map(|(l, to)| link_ref(found, l, to))
            .collect(),
        backlinks: notes
            .backlinks_of(found)
            .map(|(from, l)| link_ref(from, l, Some(found)))
            .collect(),
        missing: false,
    })
}

/// Writes through memdir that notes, the index and `state.md` must see: a note goes through the
/// index (cap check, then refresh), a hand-written index and `state.md` are checked against
/// their caps (a generated `MEMORY.md` is refused by the change's path guard). Returns `None` for every other path. `locked` says the caller already
/// holds the path's lock; the write happens only when `pre` holds.
pub(crate) fn write_hook(
    tx: &Change<'_>,
    path: &MemPath,
    content: &str,
    locked: bool,
    pre: &Precondition,
) -> Option<Result<(), Error>> {
    let mem = tx.cx();
    let p = path.as_str();
    let layout = mem.layout();
    let (index_file, state_file) = (layout.index_file, layout.state);
    if p == index_file && layout.index == memdir_core::host::IndexKind::HandWritten {
        // The host's agent keeps this index by hand: it is capped like the generated one.
        return Some((|| {
            let _lock = if locked {
                None
            } else {
                Some(tx.lock(LockName::File(path))?)
            };
            let current = read_text(mem.store(), path)?.unwrap_or_default();
            mem.config()
                .index
                .cap()
                .check(index_file, &current, content)?;
            tx.write_if(path, content.as_bytes(), pre)?;
            Ok(())
        })());
    }
    if p == state_file {
        return Some((|| {
            let _lock = if locked {
                None
            } else {
                Some(tx.lock(LockName::File(path))?)
            };
            let current = read_text(mem.store(), path)?.unwrap_or_default();
            mem.config()
                .state
                .cap()
                .check(state_file, &current, content)?;
            tx.write_if(path, content.as_bytes(), pre)?;
            Ok(())
        })());
    }
    if !layout.index_generated() {
        // Notes are plain files here: no generated index to keep current.
        return None;
    }
    if layout.is_note_path(p) {
        return Some(crate::note_index::write_note(tx, path, content, pre));
    }
    None
}

/// After a delete or a move: updates the index when a note may have come or gone. Single `.md`
/// files update their own lines; a folder (whose notes are unknown once it moved) rebuilds it.
///
/// `gone`: the text of the one file that left (the deleted file, or the moved file's text
/// before the move), which lets an index split by folder be updated from the two folders only.
pub(crate) fn after_change(
    tx: &Change<'_>,
    paths: &[&MemPath],
    gone: Option<&str>,
) -> Result<(), Error> {
    let mem = tx.cx();
    let layout = mem.layout();
    if !layout.index_generated() {
        return Ok(());
    }
    let is_note_path = |p: &str| layout.is_note_path(p);
    let outside = |s: &str| NOT_NOTE_DIRS.contains(&s.split('/').next().unwrap_or(""));
    if paths
        .iter()
        .any(|p| !p.as_str().ends_with(".md") && !outside(p.as_str()))
    {
        crate::note_index::refresh(tx)?;
        return Ok(());
    }
    if !paths.iter().any(|p| is_note_path(p.as_str())) {
        return Ok(());
    }
    let mut changes = Vec::new();
    for p in paths {
        changes.push(((*p).clone(), read_text(mem.store(), p)?));
    }
    crate::note_index::update(tx, &changes, gone)
}
