//! Search over a memory folder: `grep` (literal by default, exact, in path order) and `ranked`
//! (BM25 over lines, for questions in natural language).
//!
//! Both modes read a corpus: on a local folder (the store's
//! [`local_root`](memdir_store::Store::local_root)) the real folder, walked and read directly (the fast
//! path, never entering `.memdir/` or `.git/`); on any other store, the files listed and read
//! through the [`Store`](memdir_store::Store) trait, held in memory for the search, with the keyword
//! index in memory. Dated files (`log/`, `archive/`) are read by the date in their name, and
//! both corpora give the same [`SearchHit`] values for the same files, so every front end prints
//! them the same way and every backend answers the same.
//!
//! Search is handed what it needs once, as a [`Searcher`], and never calls back into the
//! engine; the engine's `Memory::search` builds one for each search.
//!
//! ```
//! use memdir_search::{Corpus, EmbedderSlot, Mode, SearchRequest, Searcher};
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir(dir.path().join("log")).unwrap();
//! let day = "- 09:15 moved the price ($5) after the C++ rewrite\n";
//! std::fs::write(dir.path().join("log/2026-11-30.md"), day).unwrap();
//! let embedder = EmbedderSlot::default();
//! let searcher = Searcher {
//!     corpus: Corpus::Folder(dir.path()),
//!     today: jiff::civil::date(2026, 11, 30),
//!     warm: None,
//!     embedder: &embedder,
//!     vectors: None,
//! };
//! let found = searcher.search(&SearchRequest::new("price ($5)")).unwrap();
//! assert_eq!(found.hits[0].path, "log/2026-11-30.md");
//! let mut req = SearchRequest::new("prices rewritten");
//! req.mode = Mode::Ranked;
//! assert_eq!(searcher.search(&req).unwrap().hits.len(), 1);
//! ```
#![deny(missing_docs)]

mod chunk;
mod current;
mod error;
mod grep;
mod hybrid;
mod keyword;
mod postings;
mod ranked;
mod sqlite;
mod vector;
pub(crate) mod walk;
// Warm search follows changes with inotify; elsewhere it is never available.
#[cfg(target_os = "linux")]
mod warm;
#[cfg(not(target_os = "linux"))]
#[path = "warm_disabled.rs"]
mod warm;

pub use hybrid::{Fusion, HybridOptions};
pub use vector::{EmbedderSlot, Progress, VectorStats, embed_config};
pub use warm::Warm;

pub use error::Error;
use jiff::civil::Date;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The cores this process may use, read once: `available_parallelism` reads the cgroup's
/// files on every call, which cost a ranked search more than a hundred microseconds.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Where a search reads its files.
#[derive(Clone, Copy)]
pub enum Corpus<'a> {
    /// A local folder, walked and read directly: the fast path, with warm search and the
    /// indexes under its `.memdir/`.
    Folder(&'a std::path::Path),
    /// Any other store: its files listed and read through the trait, the keyword index kept in
    /// the cache folder the front end gave (the engine's `Memory::with_search_cache`), else in memory for
    /// the one search.
    Store {
        /// The store.
        store: memdir_store::store::Reader<'a>,
        /// The folder the indexes are kept in, if the front end gave one.
        cache: Option<&'a std::path::Path>,
    },
}

impl<'a> Corpus<'a> {
    /// Where the vector index lives (in `.memdir/` under it): the memory folder or the store's
    /// cache folder. A store without a cache folder has nowhere to keep one.
    pub(crate) fn vector_root(self) -> Result<&'a std::path::Path, Error> {
        self.cache_root().ok_or_else(|| {
            Error::Invalid(
                "semantic and hybrid search on this store need a cache folder for the vector index (with_search_cache): use grep or ranked mode".into(),
            )
        })
    }

    /// Where the keyword index lives (in `.memdir/` under this folder): the memory folder, the
    /// store's cache folder, or nowhere (memory).
    pub(crate) fn cache_root(self) -> Option<&'a std::path::Path> {
        match self {
            Corpus::Folder(root) => Some(root),
            Corpus::Store { cache, .. } => cache,
        }
    }
}

/// The output budget front ends for agents apply when the caller gives none, in bytes of
/// rendered `path:line:text` lines: enough for a screenful, small enough for a context window.
pub const DEFAULT_AGENT_MAX_BYTES: usize = 4000;

/// How many lines ranked mode returns when the request sets no limit.
pub const DEFAULT_RANKED_LIMIT: usize = 10;

/// How a pattern is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Exact lines that contain the pattern (a literal unless `regex` is set), in path order.
    #[default]
    Grep,
    /// The best lines for the words of a question, by BM25 score.
    Ranked,
    /// The chunks closest in meaning to the query, by embedding cosine (needs an embedder).
    Semantic,
    /// Ranked and semantic scores merged: words and meaning (needs an embedder).
    Hybrid,
}

impl FromStr for Mode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Mode, Error> {
        match s {
            "grep" => Ok(Mode::Grep),
            "ranked" => Ok(Mode::Ranked),
            "semantic" => Ok(Mode::Semantic),
            "hybrid" => Ok(Mode::Hybrid),
            other => Err(Error::Invalid(format!(
                "unknown search mode {other:?}: use grep, ranked, semantic or hybrid"
            ))),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Grep => "grep",
            Mode::Ranked => "ranked",
            Mode::Semantic => "semantic",
            Mode::Hybrid => "hybrid",
        })
    }
}

/// One search, as every front end asks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// What to look for: a literal (grep), a regular expression (grep with `regex`), or words.
    pub pattern: String,
    /// Grep or ranked.
    pub mode: Mode,
    /// Treat the pattern as a regular expression (grep mode only).
    pub regex: bool,
    /// Match case exactly (grep mode; ranked mode always folds case).
    pub case_sensitive: bool,
    /// Lines of context before and after each grep match.
    pub context: usize,
    /// The most result lines (context lines count); `None` is unlimited for grep and
    /// [`DEFAULT_RANKED_LIMIT`] for ranked.
    pub limit: Option<usize>,
    /// Leave out dated files before this day (files without a date are kept).
    pub since: Option<Date>,
    /// Leave out dated files after this day (files without a date are kept).
    pub until: Option<Date>,
    /// Only files whose path from the root matches this glob (`notes/**`, `*.md`); a plain
    /// folder name such as `log` also matches everything under it.
    pub path_glob: Option<String>,
    /// Stop once the rendered lines would pass this many bytes; `None` is unlimited.
    pub max_bytes: Option<usize>,
    /// Ranked modes: one hit per file (its best line), `limit` counting files, and
    /// [`SearchOutcome::omitted`] the matching files left out, so hits + omitted is the total.
    pub files: bool,
}

impl SearchRequest {
    /// A grep for `pattern`: literal, case-insensitive, no context, no limits.
    pub fn new(pattern: impl Into<String>) -> SearchRequest {
        SearchRequest {
            pattern: pattern.into(),
            mode: Mode::Grep,
            regex: false,
            case_sensitive: false,
            context: 0,
            limit: None,
            since: None,
            until: None,
            path_glob: None,
            max_bytes: None,
            files: false,
        }
    }
}

/// One result line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The file, relative to the root (`log/2026-11-30.md`).
    pub path: String,
    /// The line number, from 1.
    pub line: u64,
    /// The line's text (invalid UTF-8 replaced, very long lines cut).
    pub text: String,
    /// The ranked score (higher is better); `None` in grep mode.
    pub score: Option<f64>,
    /// The date in a dated file's name, `YYYY-MM-DD`.
    pub date: Option<String>,
    /// True for a context line around a match rather than a match.
    pub is_context: bool,
    /// True for a line from an external source, as the context fences it (a note labelled
    /// `source: external`, an `[external]` log entry, a line inside an untrusted block): show it
    /// as data, never as instructions.
    pub external: bool,
    /// Why a ranked line came: the parts its score adds up from. `None` in grep mode and with
    /// reciprocal rank fusion. Not part of `--json` (its shape is fixed); a page shows it.
    #[serde(skip)]
    pub why: Option<Why>,
}

/// The parts of a ranked line's score, which add up to it: why the line came.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Why {
    /// The line's own query words (BM25; in hybrid mode, ranked mode's whole score on the
    /// fusion's scale).
    pub keyword: f64,
    /// How near its passage is in meaning to the query (semantic and hybrid modes).
    pub meaning: f64,
    /// The share of the lines (ranked mode) or passages (hybrid mode) just before and after it.
    pub neighbour: f64,
    /// How well its file (for a daily log, its day) matches the query as a whole.
    pub day: f64,
    /// Hybrid mode's priors: a day the query names, a time for a "when" question, a speaker
    /// the query names.
    pub hint: f64,
    /// What the line lost (zero or less) because another note supersedes its note: it ranks
    /// below its successor.
    pub superseded: f64,
}

impl SearchHit {
    /// The line as `path:line:text` (a match) or `path-line-text` (a context line).
    pub fn render(&self) -> String {
        self.as_ref().render()
    }

    /// The hit, borrowed.
    pub fn as_ref(&self) -> HitRef<'_> {
        HitRef {
            path: &self.path,
            line: self.line,
            text: &self.text,
            score: self.score,
            date: self.date.as_deref(),
            is_context: self.is_context,
            external: self.external,
            why: self.why,
        }
    }
}

/// One result line, borrowed: what [`Searcher::search_each`] hands out, so a front end that
/// prints results as they come never copies them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitRef<'a> {
    /// The file, relative to the root.
    pub path: &'a str,
    /// The line number, from 1.
    pub line: u64,
    /// The line's text.
    pub text: &'a str,
    /// The ranked score; `None` in grep mode.
    pub score: Option<f64>,
    /// The date in a dated file's name.
    pub date: Option<&'a str>,
    /// True for a context line around a match.
    pub is_context: bool,
    /// True for a line from an external source ([`SearchHit::external`]).
    pub external: bool,
    /// Why a ranked line came ([`SearchHit::why`]).
    pub why: Option<Why>,
}

impl HitRef<'_> {
    /// The line as `path:line:text` (a match) or `path-line-text` (a context line).
    pub fn render(&self) -> String {
        let sep = if self.is_context { '-' } else { ':' };
        format!("{}{sep}{}{sep}{}", self.path, self.line, self.text)
    }

    /// An owned copy.
    pub fn to_hit(&self) -> SearchHit {
        SearchHit {
            path: self.path.to_string(),
            line: self.line,
            text: self.text.to_string(),
            score: self.score,
            date: self.date.map(str::to_string),
            is_context: self.is_context,
            external: self.external,
            why: self.why,
        }
    }
}

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SearchOutcome {
    /// The result lines, in path order (grep) or best first (ranked).
    pub hits: Vec<SearchHit>,
    /// Matches found but left out by the output budget or the limit.
    pub omitted: usize,
}

impl SearchOutcome {
    /// The last line to print when matches were left out, or `None` when nothing was.
    pub fn trailer(&self) -> Option<String> {
        match self.omitted {
            0 => None,
            n => Some(format!(
                "... {n} more {} left out by the output budget: narrow with --path/--since or raise --max-bytes/--limit",
                if n == 1 { "match" } else { "matches" }
            )),
        }
    }

    /// True when nothing matched at all (not even a match left out by the budget).
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty() && self.omitted == 0
    }
}

/// Keeps the rendered size and line count of results under the request's budget.
struct Budget {
    max_bytes: usize,
    max_lines: usize,
    bytes: usize,
    lines: usize,
}

impl Budget {
    fn new(max_bytes: Option<usize>, max_lines: Option<usize>) -> Budget {
        Budget {
            max_bytes: max_bytes.unwrap_or(usize::MAX),
            max_lines: max_lines.unwrap_or(usize::MAX),
            bytes: 0,
            lines: 0,
        }
    }

    /// Takes room for `hit` if it fits.
    fn take(&mut self, hit: &HitRef<'_>) -> bool {
        // path + sep + line number + sep + text + newline
        let cost = hit.path.len() + hit.text.len() + 3 + digits(hit.line);
        if self.lines >= self.max_lines || self.bytes.saturating_add(cost) > self.max_bytes {
            return false;
        }
        self.lines += 1;
        self.bytes += cost;
        true
    }
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// What a search is handed, once, by the memory it searches: where the files are, today's
/// date (for dates in a question), the warm copy of the files, the embedder and the backend's
/// own vector index. Search never calls back into the engine.
#[derive(Clone, Copy)]
pub struct Searcher<'a> {
    /// Where the files are.
    pub corpus: Corpus<'a>,
    /// Today, in the memory's time zone.
    pub today: Date,
    /// The in-memory copy of a folder's files, when warm search is on.
    pub warm: Option<&'a Warm>,
    /// The embedder of semantic and hybrid search.
    pub embedder: &'a EmbedderSlot,
    /// The backend's own vector index, when it keeps one (else a SQLite file under the
    /// corpus's cache folder).
    pub vectors: Option<&'a std::sync::Arc<dyn memdir_store::vectors::VectorStore>>,
}

/// Which lines of the file at `path` came from an external source
/// ([`memdir_core::external::external_lines`]); none when it cannot be read. Files the search
/// already holds (`listed`: a store's, or a warm copy's) are not read again, and a store's are
/// listed once for the marks when the search did not list them, so marking costs no request
/// per file.
fn external_marks(
    corpus: Corpus<'_>,
    listed: &std::cell::OnceCell<std::sync::Arc<Vec<walk::FileRef>>>,
    path: &str,
) -> Vec<bool> {
    let marks = memdir_core::external::external_lines_of;
    // A file the search already holds (a store's, or a warm copy's) is not read again.
    let held = |files: &[walk::FileRef]| {
        // A warm copy's list is in path order; a store's may not be.
        files
            .binary_search_by(|f| f.rel.as_str().cmp(path))
            .ok()
            .and_then(|i| files.get(i))
            .or_else(|| files.iter().find(|f| f.rel == path))
            .and_then(|f| f.held.as_ref())
            .map(|h| marks(&h.bytes))
    };
    if let Some(found) = listed.get().and_then(|files| held(files)) {
        return found;
    }
    match corpus {
        Corpus::Folder(root) => {
            let Ok(p) = memdir_core::path::MemPath::parse_file(path) else {
                return Vec::new();
            };
            walk::open_file(&root.join(p.as_str()))
                .and_then(|mut f| {
                    let mut b = Vec::new();
                    std::io::Read::read_to_end(&mut f, &mut b).map(|_| b)
                })
                .map(|b| marks(&b))
                .unwrap_or_default()
        }
        Corpus::Store { store, .. } => {
            let files = listed.get_or_init(|| {
                std::sync::Arc::new(
                    walk::from_store(store, &walk::Scope::everything()).unwrap_or_default(),
                )
            });
            held(files).unwrap_or_default()
        }
    }
}

impl Searcher<'_> {
    /// Searches the files.
    ///
    /// Fails with [`Error::Invalid`] on a bad regular expression, glob or empty pattern.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, Error> {
        let mut hits = Vec::new();
        let omitted = self.search_each(req, &|_, _| {}, &mut |h| {
            hits.push(h.to_hit());
            Ok(())
        })?;
        Ok(SearchOutcome { hits, omitted })
    }

    /// Like [`Searcher::search`], but hands each result line to `each` as soon as it is known,
    /// in the same order, so a front end can print while grep is still reading (a search
    /// with many matches never holds them all), and tells `progress` of the chunks a semantic
    /// or hybrid search embeds first. Returns how many matches were left out by the budget; an
    /// error from `each` (a closed pipe) stops the search and is returned.
    pub fn search_each(
        &self,
        req: &SearchRequest,
        progress: Progress<'_>,
        each: &mut dyn FnMut(HitRef<'_>) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        if req.pattern.is_empty() {
            return Err(Error::Invalid(
                "the search pattern is empty: give the words or text to look for".to_string(),
            ));
        }
        if let (Some(s), Some(u)) = (req.since, req.until)
            && s > u
        {
            return Err(Error::Invalid(format!(
                "--since {s} is after --until {u}: swap them"
            )));
        }
        let scope = walk::Scope::new(req)?;
        let corpus = self.corpus;
        // Each hit is marked external by its file's marks: grep works them out from the bytes
        // it searched; the other modes read them once per file (a warm copy's from the bytes
        // it holds, a store's from the listing the search read), so marking sends no request.
        let listed = std::cell::OnceCell::new();
        if req.mode != Mode::Grep
            && let Corpus::Folder(root) = corpus
            && let Some((files, _)) = self.warm_files(root, &walk::Scope::everything())
        {
            // A warm copy holds every file's bytes: a hit's marks are read from there, not
            // from the disk (this is the list ranked and vector search sync against).
            let _ = listed.set(files);
        }
        let marks_of = |path: &str| external_marks(corpus, &listed, path);
        let found = match (req.mode, corpus) {
            (Mode::Grep, Corpus::Folder(root)) => {
                // A warm copy's list, or a walk searched as it goes.
                return match self.warm_files(root, &scope) {
                    Some((files, _)) => {
                        grep::search(grep::Files::Listed(&files), req, &marks_of, each)
                    }
                    None => grep::search(grep::Files::Walk(root, &scope), req, &marks_of, each),
                };
            }
            (Mode::Grep, Corpus::Store { store, .. }) => {
                let files = std::sync::Arc::new(walk::from_store(store, &scope)?);
                // The marks of a file grep did not read whole come from the files it listed.
                let _ = listed.set(std::sync::Arc::clone(&files));
                return grep::search(grep::Files::Listed(&files), req, &marks_of, each);
            }
            (Mode::Ranked, _) => ranked::search(self, &scope, req),
            (Mode::Semantic, _) => vector::search(self, &scope, req, progress),
            (Mode::Hybrid, _) => {
                hybrid::search(self, &scope, req, &HybridOptions::default(), progress)
            }
        }?;
        let mut marks: std::collections::HashMap<&str, Vec<bool>> = Default::default();
        for h in &found.hits {
            let lines = marks
                .entry(h.path.as_str())
                .or_insert_with(|| marks_of(&h.path));
            let mut h = h.as_ref();
            h.external = usize::try_from(h.line)
                .ok()
                .and_then(|l| lines.get(l.checked_sub(1)?))
                .copied()
                .unwrap_or(false);
            each(h)?;
        }
        Ok(found.omitted)
    }

    /// A hybrid search with the given options (`search` with `Mode::Hybrid` uses
    /// [`HybridOptions::default`]); for benchmarks that compare fusions.
    pub fn search_hybrid(
        &self,
        req: &SearchRequest,
        options: &HybridOptions,
    ) -> Result<SearchOutcome, Error> {
        let scope = walk::Scope::new(req)?;
        hybrid::search(self, &scope, req, options, &|_, _| {})
    }

    /// Deletes the search indexes' cached copies of the files at `paths` (for `forget`): the
    /// SQLite files of the keyword and vector indexes are removed whole (SQLite keeps deleted
    /// rows' bytes in free pages, so dropping rows would not be enough; both are caches the next
    /// search rebuilds), and a backend's own vector index drops those files' rows, so the next
    /// search embeds them again from what they hold now.
    pub fn forget_indexes(&self, paths: &[String]) -> Result<(), Error> {
        // A kept connection would keep the removed file's bytes on disk until it closed.
        if let Some(w) = self.warm {
            w.keyword.clear();
        }
        if let Some(root) = self.corpus.cache_root() {
            let meta = root.join(memdir_folder::META_DIR);
            for base in [sqlite::KEYWORD_DB, vector::VECTOR_FILE] {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    match std::fs::remove_file(meta.join(format!("{base}{suffix}"))) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => {
                            return Err(Error::Index(format!(
                                "could not remove .memdir/{base}{suffix} after forget ({e}): delete it by hand, it may hold what was forgotten"
                            )));
                        }
                    }
                }
            }
        }
        if let Some(v) = self.vectors {
            v.retouch(&[], paths).map_err(Error::Store)?;
        }
        Ok(())
    }

    /// Rebuilds the keyword index of ranked mode from the files and returns how many files it
    /// holds. Never needed for correctness (every ranked search updates the index first); it
    /// is the cure for an index that was damaged in a way its checks cannot see.
    pub fn rebuild_keyword_index(&self) -> Result<usize, Error> {
        let tok = memdir_core::tokenize::Tokenizer::new();
        let (_, files) = ranked::fresh_index(self, &tok, true)?;
        Ok(files.len())
    }

    /// Every file in scope, in path order, with the warm copy's generation when the files
    /// came from one.
    pub(crate) fn corpus_files(
        &self,
        scope: &walk::Scope,
    ) -> Result<(std::sync::Arc<Vec<walk::FileRef>>, Option<u64>), Error> {
        match self.corpus {
            Corpus::Folder(root) => Ok(match self.warm_files(root, scope) {
                Some((files, generation)) => (files, Some(generation)),
                None => (std::sync::Arc::new(walk::files(root, scope)), None),
            }),
            Corpus::Store { store, .. } => {
                Ok((std::sync::Arc::new(walk::from_store(store, scope)?), None))
            }
        }
    }

    /// The files in scope from the warm copy, with its generation, if there is a usable one.
    fn warm_files(
        &self,
        root: &std::path::Path,
        scope: &walk::Scope,
    ) -> Option<(std::sync::Arc<Vec<walk::FileRef>>, u64)> {
        self.warm?.files(root, scope)
    }
}
