//! The note catalogue: every note (and core and `state.md`, which links may come from) read
//! and parsed once, then kept per memory and re-read only where a file changed.
//!
//! A long-lived process (`memdir serve`, `memdir mcp`) asks for notes' links, backlinks,
//! types and tags and lint findings on every page; reading and parsing 2,100 notes for each
//! was most of those pages' time. The catalogue keeps the parsed files ([`NoteFile`]), each
//! file's `[[links]]` and where they lead, and the backlinks derived from them, as one
//! immutable [`Notes`] snapshot that readers share.
//!
//! Why it is never stale:
//! - With a warm copy (inotify, [`memdir_search::Warm::generation`]), an unchanged generation
//!   means no file changed since the last sync, from this process, another one or an editor;
//!   any other generation, or no warm copy, makes a sync.
//! - A sync lists the notes (one listing: each file's size and modification time) and re-reads
//!   a file unless its size and time are the ones recorded when it was read and that time is
//!   more than two seconds old: a write in the same millisecond as the one recorded can leave
//!   both equal (git's "racily clean" problem), so a recent file is read again until it ages.
//!   A file that is read again but holds the same text keeps its parsed form. What this
//!   cannot see, as the search indexes' stamps cannot (`memdir_folder::stamp`): a rewrite
//!   that keeps the size and sets the time back to the very millisecond recorded, more than
//!   two seconds ago (a tool that restores times on purpose).
//! - A store without a local folder is read with one `read_all` (a remote store serves it from
//!   its own cache of what changed) and a file is parsed again when its bytes differ.
//!
//! Memory: the catalogue holds each note's text, its parsed form (the body is a second copy of
//! the text after the frontmatter) and its links: about three times the notes' bytes. Past
//! [`MAX_BYTES`] of note text it keeps nothing and every call reads the notes afresh, as
//! before the catalogue.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::notes::{NoteFile, note_entries, read_text};
use memdir_core::host::{FolderLayout, LayoutName};
use memdir_core::links::{Link, Resolver, extract};
use memdir_core::note::NOT_NOTE_DIRS;
use memdir_core::path::MemPath;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The most note text the catalogue keeps; a memory with more is read afresh on every call.
pub const MAX_BYTES: usize = 64 << 20;

/// A file modified this recently (or in the future) is read again at every sync: its size and
/// time may not change on a second write within the same clock tick.
const RACY_MS: i64 = 2_000;

/// Every note with its links resolved, as of one sync. Cheap to share: readers hold an `Arc`.
#[derive(Debug)]
pub struct Notes {
    files: Vec<NoteFile>,
    links: Vec<Vec<Link>>,
    /// For each file, for each of its links: the index in `files` of the file it leads to.
    to: Vec<Vec<Option<usize>>>,
    resolver: Resolver,
    by_path: HashMap<String, usize>,
    /// For each file: the links that lead to it from another file, as (file, link) indexes,
    /// by file then line.
    backlinks: Vec<Vec<(usize, usize)>>,
    /// Lint's findings that depend on the notes alone, computed on first use.
    pub(crate) lint: OnceLock<Vec<crate::lint::Finding>>,
}

impl Notes {
    fn new(files: Vec<NoteFile>, links: Vec<Vec<Link>>) -> Notes {
        let resolver = crate::notes::resolver(&files);
        let by_path: HashMap<String, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.as_str().to_string(), i))
            .collect();
        let mut backlinks = vec![Vec::new(); files.len()];
        let to: Vec<Vec<Option<usize>>> = links
            .iter()
            .enumerate()
            .map(|(from, ls)| {
                ls.iter()
                    .enumerate()
                    .map(|(k, l)| {
                        let to = resolver
                            .resolve(&l.target)
                            .and_then(|p| by_path.get(p).copied());
                        if let Some(t) = to
                            && t != from
                        {
                            backlinks[t].push((from, k));
                        }
                        to
                    })
                    .collect()
            })
            .collect();
        Notes {
            files,
            links,
            to,
            resolver,
            by_path,
            backlinks,
            lint: OnceLock::new(),
        }
    }

    /// Core and `state.md` when they exist, then every note in path order: what
    /// [`crate::notes::scan`] reads.
    pub fn files(&self) -> &[NoteFile] {
        &self.files
    }

    /// The notes only, in path order.
    pub fn notes(&self) -> impl Iterator<Item = &NoteFile> {
        self.files.iter().filter(|f| f.is_note)
    }

    /// The path a link target resolves to (name, then stem, then path).
    pub fn resolve(&self, target: &str) -> Option<&str> {
        self.resolver.resolve(target)
    }

    /// The index in [`Notes::files`] of the file at `path`.
    pub(crate) fn index_of(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// The links in file `i`, in order, each with the index of the file it leads to.
    pub(crate) fn links_of(&self, i: usize) -> impl Iterator<Item = (&Link, Option<usize>)> {
        let to = &self.to[i];
        self.links[i]
            .iter()
            .enumerate()
            .map(move |(k, l)| (l, to.get(k).copied().flatten()))
    }

    /// Every link in another file that leads to file `i`, as (file index, link), by file then line.
    pub(crate) fn backlinks_of(&self, i: usize) -> impl Iterator<Item = (usize, &Link)> {
        self.backlinks[i]
            .iter()
            .map(|&(f, k)| (f, &self.links[f][k]))
    }

    /// Every file's links, in file order.
    pub(crate) fn all_links(&self) -> impl Iterator<Item = (&NoteFile, &[Link])> {
        self.files.iter().zip(self.links.iter().map(Vec::as_slice))
    }
}

/// What the catalogue recorded of one file when it read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified_ms: i64,
}

#[derive(Default)]
struct Kept {
    layout: Option<LayoutName>,
    /// The warm copy's generation the snapshot was synced at.
    generation: Option<u64>,
    /// Each file's stamp when read, by path (only files the listing gave a stamp for).
    stamps: HashMap<MemPath, Stamp>,
    notes: Option<Arc<Notes>>,
}

/// The catalogue of one memory, shared by every copy of its [`Ctx`].
#[derive(Default)]
pub(crate) struct Catalogue {
    kept: Mutex<Kept>,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Catalogue")
    }
}

/// The notes as they are now: the kept snapshot when nothing changed, else a sync.
pub(crate) fn notes(cx: &Ctx) -> Result<Arc<Notes>, Error> {
    let layout = cx.layout();
    let store = cx.store();
    let mut kept = cx.catalogue.kept.lock().unwrap_or_else(|p| p.into_inner());
    if kept.layout != Some(layout.name) {
        *kept = Kept {
            layout: Some(layout.name),
            ..Kept::default()
        };
    }
    let generation = match (&cx.warm, store.local_root()) {
        (Some(w), Some(root)) => w.generation(root),
        _ => None,
    };
    if let (Some(g), Some(notes)) = (generation, &kept.notes)
        && kept.generation == Some(g)
    {
        return Ok(notes.clone());
    }
    let previous = kept.notes.take();
    let (fresh, stamps) = match store.local_root() {
        Some(_) => sync_listed(store, &layout, previous.as_deref(), &kept.stamps)?,
        None => (
            sync_remote(store, &layout, previous.as_deref())?,
            HashMap::new(),
        ),
    };
    // The same files with the same texts keep the last snapshot, with what it derived.
    let notes = match (fresh, previous) {
        (Some(n), _) => Arc::new(n),
        (None, Some(p)) => p,
        (None, None) => Arc::new(Notes::new(Vec::new(), Vec::new())),
    };
    let bytes: usize = notes.files.iter().map(|f| f.text.len()).sum();
    if bytes <= MAX_BYTES {
        kept.notes = Some(notes.clone());
        kept.stamps = stamps;
        kept.generation = generation;
    } else {
        kept.stamps.clear();
        kept.generation = None;
    }
    Ok(notes)
}

/// One file of a sync: its index in the last snapshot when it is unchanged there, else its
/// text as read now.
enum Got {
    Kept(usize),
    Read(MemPath, String, bool),
}

/// Builds the snapshot from a sync's files, or `None` when they are exactly the last one's
/// (then it is kept, with what it derived). A file read again with the same text keeps its
/// parsed form.
fn build(previous: Option<&Notes>, got: Vec<Got>) -> Option<Notes> {
    let mut got = got;
    if let Some(p) = previous {
        for g in &mut got {
            if let Got::Read(path, text, is_note) = g
                && let Some(i) = p.index_of(path.as_str())
                && p.files[i].text == *text
                && p.files[i].is_note == *is_note
            {
                *g = Got::Kept(i);
            }
        }
        let same = got.len() == p.files.len()
            && got
                .iter()
                .enumerate()
                .all(|(k, g)| matches!(g, Got::Kept(i) if *i == k));
        if same {
            return None;
        }
    }
    let mut files = Vec::with_capacity(got.len());
    let mut links = Vec::with_capacity(got.len());
    for g in got {
        match (g, previous) {
            (Got::Kept(i), Some(p)) => {
                files.push(p.files[i].clone());
                links.push(p.links[i].clone());
            }
            (Got::Kept(_), None) => {}
            (Got::Read(path, text, is_note), _) => {
                links.push(extract(&text));
                files.push(NoteFile::new(path, text, is_note));
            }
        }
    }
    Some(Notes::new(files, links))
}

/// A sync of a local folder: one listing, and a read of each file whose stamp is not the one
/// recorded (or is too recent to trust). `None` when every file is as in `previous`.
fn sync_listed(
    store: crate::store::Reader<'_>,
    layout: &FolderLayout,
    previous: Option<&Notes>,
    stamps: &HashMap<MemPath, Stamp>,
) -> Result<(Option<Notes>, HashMap<MemPath, Stamp>), Error> {
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let mut listed = Vec::new();
    for special in [layout.core, layout.state] {
        let p = MemPath::parse(special)?;
        if let Some(e) = store.stat(&p)? {
            listed.push((e, false));
        }
    }
    listed.extend(note_entries(store, layout)?.into_iter().map(|e| (e, true)));
    let mut got = Vec::with_capacity(listed.len());
    let mut new_stamps = HashMap::with_capacity(listed.len());
    for (e, is_note) in listed {
        let stamp = Stamp {
            size: e.size,
            modified_ms: e.modified_ms,
        };
        let trusted = e.modified_ms > 0 && e.modified_ms + RACY_MS <= now_ms;
        let kept = previous.and_then(|p| {
            let i = p.index_of(e.path.as_str())?;
            (trusted && stamps.get(&e.path) == Some(&stamp) && p.files[i].is_note == is_note)
                .then_some(i)
        });
        match kept {
            Some(i) => got.push(Got::Kept(i)),
            // A file removed between the listing and the read is simply gone.
            None => match read_text(store, &e.path)? {
                Some(text) => got.push(Got::Read(e.path.clone(), text, is_note)),
                None => continue,
            },
        }
        new_stamps.insert(e.path, stamp);
    }
    Ok((build(previous, got), new_stamps))
}

/// A sync of a store without a local folder: one `read_all`, and a parse of each file whose
/// bytes differ from the last snapshot's. `None` when every file is as in `previous`.
fn sync_remote(
    store: crate::store::Reader<'_>,
    layout: &FolderLayout,
    previous: Option<&Notes>,
) -> Result<Option<Notes>, Error> {
    let (core, state) = (layout.core, layout.state);
    let mut keep = |p: &MemPath| {
        let s = p.as_str();
        if s == core || s == state {
            return true;
        }
        let top_dir = s.split_once('/').map(|(d, _)| d);
        top_dir.is_none_or(|d| !NOT_NOTE_DIRS.contains(&d)) && layout.is_note_path(s)
    };
    let mut all = store.read_all(&mut keep)?;
    // Core first, then state, then the notes in path order, as the folder's scan gives them.
    all.sort_by(|(a, _), (b, _)| {
        let rank = |p: &MemPath| match p.as_str() {
            s if s == core => 0,
            s if s == state => 1,
            _ => 2,
        };
        (rank(a), a).cmp(&(rank(b), b))
    });
    let got = all
        .into_iter()
        .map(|(path, bytes)| {
            let is_note = path.as_str() != core && path.as_str() != state;
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            Got::Read(path, text, is_note)
        })
        .collect();
    Ok(build(previous, got))
}
