//! Grep mode: ripgrep's matcher and searcher, in-process, over the files in scope.
//!
//! Files are searched on all cores while the folder is still being walked (the walk yields
//! them in path order), and their results are handed out in path order as they come, so output
//! is the same on every run and starts before the search ends. Once the budget
//! is spent, the rest are only counted (no line text is kept), which is what the trailer
//! reports. A literal ASCII pattern skips the regex engine where `memmem` on the file's ASCII
//! fold gives the same answers (see `Literal`).

use super::walk::{self, FileRef, Held, Scope, has_case_twins, open_file};
use super::{Budget, HitRef, SearchRequest};
use crate::error::Error;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use memchr::memmem;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};

/// Longest line text kept; longer lines (minified data, pasted blobs) are cut so one line can
/// never flood an agent's context.
pub(crate) const MAX_LINE_BYTES: usize = 1000;

/// Files up to this size are read whole before searching; bigger ones are streamed.
const WHOLE_READ_MAX: u64 = 16 << 20;

/// Regular expressions compile to at most this much memory, so a hostile pattern fails fast.
const REGEX_SIZE_LIMIT: usize = 10 << 20;

/// Builds the matcher: a literal unless `regex`, case-insensitive unless `case_sensitive`.
pub(crate) fn matcher(req: &SearchRequest) -> Result<RegexMatcher, Error> {
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(!req.case_sensitive)
        .fixed_strings(!req.regex)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .line_terminator(Some(b'\n'));
    b.build(&req.pattern).map_err(|e| {
        if req.regex {
            Error::Invalid(format!(
                "bad regular expression {:?}: {}; fix it or drop --regex to search the literal text",
                req.pattern,
                regex_problem(req, &e)
            ))
        } else {
            Error::Invalid(format!(
                "cannot search for {:?}: {}",
                req.pattern,
                one_line(&e.to_string())
            ))
        }
    })
}

/// What is wrong with a regular expression, in words and a position, without the wrapper the
/// matcher adds to the pattern or the caret diagram (which only reads well on its own lines).
fn regex_problem(req: &SearchRequest, e: &grep_regex::Error) -> String {
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(!req.case_sensitive)
        .build()
        .parse(&req.pattern);
    let (kind, span) = match &parsed {
        Err(regex_syntax::Error::Parse(p)) => (p.kind().to_string(), *p.span()),
        Err(regex_syntax::Error::Translate(t)) => (t.kind().to_string(), *t.span()),
        // The pattern parses; the matcher refused it for another reason (size, a line break).
        _ => return one_line(&e.to_string()),
    };
    format!("{kind} at character {}", span.start.column)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A thread's searchers: one that reports lines with numbers and context, and one for files
/// searched after the budget is spent, which only counts matching lines (no line numbers to
/// track, no context to keep). Each stops at a NUL byte (a binary file) unless the bytes are
/// known to be text.
struct Searchers {
    full: Searcher,
    count: Searcher,
    /// A file read from disk, reused from file to file.
    buf: Vec<u8>,
    /// Its ASCII fold, for a case-insensitive literal.
    fold: Vec<u8>,
}

fn searchers(context: usize) -> Searchers {
    let build = |numbered: bool, context: usize| {
        SearcherBuilder::new()
            .line_number(numbered)
            .before_context(context)
            .after_context(context)
            .build()
    };
    Searchers {
        full: build(true, context),
        count: build(false, 0),
        buf: Vec::new(),
        fold: Vec::new(),
    }
}

/// Turns raw line bytes into display text: no line ending, invalid UTF-8 replaced, long lines cut.
pub(crate) fn line_text(bytes: &[u8]) -> String {
    let mut s = String::new();
    push_line_text(&mut s, bytes);
    s
}

/// Appends `bytes` to `out` as display text (see [`line_text`]).
fn push_line_text(out: &mut String, bytes: &[u8]) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let cut = bytes.len() > MAX_LINE_BYTES;
    let shown = &bytes[..bytes.len().min(MAX_LINE_BYTES)];
    match std::str::from_utf8(shown) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(shown)),
    }
    if cut {
        // Cutting may split a character; drop a trailing replacement char made by the cut.
        if out.ends_with('\u{FFFD}') {
            out.pop();
        }
        out.push_str(&format!(
            " [... {} more bytes]",
            bytes.len() - MAX_LINE_BYTES
        ));
    }
}

/// One file's lines (their text back to back in one string), or only its match count once the
/// budget is spent.
#[derive(Default)]
struct FileResult {
    /// Line number, true for a context line, and where its text is: in `text`, or, when `raw`
    /// is set, the line's bytes in the held file (made into text only if it is shown).
    lines: Vec<(u64, bool, std::ops::Range<usize>)>,
    text: String,
    raw: Option<Arc<Held>>,
    matches: usize,
    /// Which lines of the file came from an external source, worked out here from the bytes
    /// just searched when the file has lines to show; `None` where they were not (a file too
    /// large to read whole), which the caller then reads itself.
    marks: Option<Vec<bool>>,
}

impl FileResult {
    fn push(&mut self, line: u64, is_context: bool, bytes: &[u8]) {
        let start = self.text.len();
        push_line_text(&mut self.text, bytes);
        self.lines.push((line, is_context, start..self.text.len()));
    }
}

struct Collect {
    out: FileResult,
    keep_text: bool,
}

impl Sink for Collect {
    type Error = io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.out.matches += 1;
        if self.keep_text {
            self.out
                .push(m.line_number().unwrap_or(0), false, m.bytes());
        }
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.keep_text && !matches!(c.kind(), SinkContextKind::Other) {
            self.out.push(c.line_number().unwrap_or(0), true, c.bytes());
        }
        Ok(true)
    }
}

/// A literal pattern of ASCII text, looked for with `memmem` in a file's bytes (or their ASCII
/// fold) instead of the regex engine wherever that gives the same answers (see
/// [`Literal::accepts`]): a file without it is skipped, with no context lines its matching
/// lines are found directly, and once the budget is spent they are only counted.
struct Literal {
    finder: memmem::Finder<'static>,
    folded: bool,
    /// No context lines are asked for, so matching lines can be found without the searcher.
    plain: bool,
    /// The needle has a `k` or `s`, whose non-ASCII case twins an ASCII fold misses.
    exotic: bool,
}

impl Literal {
    fn new(req: &SearchRequest) -> Option<Literal> {
        let p = req.pattern.as_bytes();
        if req.regex || !p.is_ascii() || p.is_empty() || p.contains(&b'\n') {
            return None;
        }
        let folded = !req.case_sensitive;
        let needle = if folded {
            p.to_ascii_lowercase()
        } else {
            p.to_vec()
        };
        Some(Literal {
            exotic: folded && needle.iter().any(|b| matches!(b, b'k' | b's')),
            finder: memmem::Finder::new(&needle).into_owned(),
            folded,
            plain: req.context == 0,
        })
    }

    /// True if `bytes` can be tested with `memmem` and give the regex's answers: no byte-order
    /// mark (the searcher transcodes or drops it), no NUL byte (the searcher stops there), and
    /// no Unicode case twin of a `k` or `s` in the needle.
    fn accepts(&self, bytes: &[u8], held: Option<&Held>) -> bool {
        let bom = [&b"\xEF\xBB\xBF"[..], b"\xFF\xFE", b"\xFE\xFF"]
            .iter()
            .any(|m| bytes.starts_with(m));
        if bom {
            return false;
        }
        match held {
            Some(h) => !(h.binary || (self.exotic && h.exotic_fold)),
            None => !(memchr::memchr(0, bytes).is_some() || (self.exotic && has_case_twins(bytes))),
        }
    }

    /// The lines of `hay` that hold the needle, numbered, with their text from `bytes` (the
    /// unfolded file): what the searcher reports for a literal with no context lines.
    fn lines(&self, hay: &[u8], bytes: &[u8], held: Option<&Arc<Held>>) -> FileResult {
        let mut out = FileResult {
            raw: held.cloned(),
            ..FileResult::default()
        };
        let mut line = 1u64;
        let mut counted = 0;
        let mut at = 0;
        while at < hay.len()
            && let Some(i) = self.finder.find(&hay[at..])
        {
            let hit = at + i;
            let start = memchr::memrchr(b'\n', &hay[at..hit]).map_or(at, |j| at + j + 1);
            line += memchr::memchr_iter(b'\n', &hay[counted..start]).count() as u64;
            counted = start;
            let end = memchr::memchr(b'\n', &hay[hit..]).map_or(hay.len(), |j| hit + j + 1);
            out.matches += 1;
            if held.is_some() {
                out.lines.push((line, false, start..end));
            } else {
                out.push(line, false, &bytes[start..end]);
            }
            at = end;
        }
        out
    }

    /// How many lines of `hay` hold the needle.
    fn count_lines(&self, hay: &[u8]) -> usize {
        let mut n = 0;
        let mut at = 0;
        while let Some(i) = self.finder.find(&hay[at..]) {
            n += 1;
            let end = at + i + self.finder.needle().len();
            match memchr::memchr(b'\n', &hay[end..]) {
                Some(j) => at = end + j + 1,
                None => break,
            }
        }
        n
    }
}

fn search_file(
    m: &RegexMatcher,
    lit: Option<&Literal>,
    s: &mut Searchers,
    f: &FileRef,
    keep_text: bool,
) -> FileResult {
    let (mut out, bytes) = search_file_bytes(m, lit, s, f, keep_text);
    // The external marks of a file with lines to show, from the bytes in hand, on this search
    // thread: read again later they would cost a second open and read per file.
    if let Some(b) = bytes
        && !out.lines.is_empty()
    {
        out.marks = Some(memdir_core::external::external_lines_of(b));
    }
    out
}

/// [`search_file`]'s search, with the bytes it searched when it had them whole.
fn search_file_bytes<'b>(
    m: &RegexMatcher,
    lit: Option<&Literal>,
    s: &'b mut Searchers,
    f: &'b FileRef,
    keep_text: bool,
) -> (FileResult, Option<&'b [u8]>) {
    let Searchers {
        full,
        count,
        buf,
        fold,
    } = s;
    let searcher = if keep_text { full } else { count };
    let mut sink = Collect {
        out: FileResult::default(),
        keep_text,
    };
    // The bytes: held in memory, or read whole into the reused buffer (one read; a streaming
    // reader costs an extra read and copy per file). A huge file is streamed.
    let held = f.held.as_ref();
    let bytes: &[u8] = match held {
        Some(h) => &h.bytes,
        // A file that cannot be read (gone, permissions, now a symlink) is skipped, like `grep -s`.
        None => {
            let Ok(mut file) = open_file(&f.abs) else {
                return (FileResult::default(), None);
            };
            match file.metadata() {
                Ok(meta) if meta.len() <= WHOLE_READ_MAX => {
                    if read_sized(&mut file, meta.len(), buf).is_err() {
                        return (FileResult::default(), None);
                    }
                    buf
                }
                _ => {
                    searcher.set_binary_detection(BinaryDetection::quit(b'\0'));
                    return match searcher.search_file(m, &file, &mut sink) {
                        Ok(()) => (sink.out, None),
                        Err(_) => (FileResult::default(), None),
                    };
                }
            }
        }
    };
    let mut plain_text = false;
    if let Some(lit) = lit
        && lit.accepts(bytes, held.map(|h| &**h))
    {
        plain_text = true;
        let hay: &[u8] = match (lit.folded, held) {
            (false, _) => bytes,
            (true, Some(h)) => &h.folded,
            (true, None) => {
                fold.clear();
                fold.extend(bytes.iter().map(u8::to_ascii_lowercase));
                fold
            }
        };
        if !keep_text {
            let out = FileResult {
                matches: lit.count_lines(hay),
                ..FileResult::default()
            };
            return (out, None);
        }
        if lit.plain {
            return (lit.lines(hay, bytes, held), Some(bytes));
        }
        if lit.finder.find(hay).is_none() {
            return (FileResult::default(), None);
        }
    }
    // Bytes known to be text need no binary check; others stop at a NUL like grep.
    let textual = plain_text || held.is_some_and(|h| !h.binary);
    searcher.set_binary_detection(if textual {
        BinaryDetection::none()
    } else {
        BinaryDetection::quit(b'\0')
    });
    match searcher.search_slice(m, bytes, &mut sink) {
        Ok(()) => (sink.out, Some(bytes)),
        Err(_) => (FileResult::default(), None),
    }
}

/// Reads a file of `len` bytes (as of its last stat) into `buf`: the bytes that were there then,
/// without the extra read that would confirm the end (a line appended since is left for the
/// next search, as if the search had run a moment earlier).
fn read_sized(file: &mut std::fs::File, len: u64, buf: &mut Vec<u8>) -> io::Result<()> {
    use std::io::Read as _;
    buf.clear();
    buf.reserve(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(buf).map(|_| ())
}

/// Where a grep's files come from.
pub(crate) enum Files<'a> {
    /// Listed already, in path order (a warm search's copy).
    Listed(&'a [FileRef]),
    /// Walked now: files are searched while the walk goes on.
    Walk(&'a Path, &'a Scope),
}

/// Files a walk hands to the search threads at a time.
const WALK_RUN: usize = 32;

/// Runs a grep over `files` in path order, handing each result line to `emit` in that order,
/// and returns how many matches the budget left out. An error from `emit` stops the search.
/// A hit's external mark comes from its file's marks, worked out by the search thread from the
/// bytes it searched, or by `marks_of` (given the file's path) where it had none.
pub(crate) fn search(
    files: Files<'_>,
    req: &SearchRequest,
    marks_of: &dyn Fn(&str) -> Vec<bool>,
    emit: &mut dyn FnMut(HitRef<'_>) -> Result<(), Error>,
) -> Result<usize, Error> {
    let m = matcher(req)?;
    let lit = Literal::new(req);
    let mut budget = Budget::new(req.max_bytes, req.limit);
    let mut omitted = 0;
    let mut failed = None;
    let spent = AtomicBool::new(false);
    let job = Job {
        m: &m,
        lit: lit.as_ref(),
        context: req.context,
        spent: &spent,
    };

    let mut take = |f: &FileRef, r: FileResult| {
        if spent.load(Ordering::Relaxed) || r.lines.is_empty() {
            omitted += r.matches;
            return;
        }
        let date = f.date_string();
        let mut shown = 0;
        let mut scratch = String::new();
        let marks = r.marks.unwrap_or_else(|| marks_of(&f.rel));
        for (line, is_context, range) in r.lines {
            let text = match &r.raw {
                Some(h) => {
                    scratch.clear();
                    push_line_text(&mut scratch, &h.bytes[range]);
                    scratch.as_str()
                }
                None => &r.text[range],
            };
            let hit = HitRef {
                path: &f.rel,
                line,
                text,
                score: None,
                date: date.as_deref(),
                is_context,
                external: usize::try_from(line)
                    .ok()
                    .and_then(|l| marks.get(l.checked_sub(1)?))
                    .copied()
                    .unwrap_or(false),
                why: None,
            };
            if !budget.take(&hit) {
                spent.store(true, Ordering::Relaxed);
                break;
            }
            shown += usize::from(!is_context);
            if let Err(e) = emit(hit) {
                failed = Some(e);
                spent.store(true, Ordering::Relaxed);
                break;
            }
        }
        omitted += r.matches.saturating_sub(shown);
    };

    let cores = crate::cores();
    std::thread::scope(|sc| {
        let mut d = Dispatch::new(sc, job, cores);
        match files {
            Files::Listed(files) => {
                // Runs of files, so a search of many small files in memory pays for a few
                // dozen hand-offs between threads rather than one per file.
                let run = (files.len() / (cores * 16)).clamp(16, 64);
                for batch in files.chunks(run) {
                    d.push(Cow::Borrowed(batch), &mut take);
                }
            }
            Files::Walk(root, scope) => {
                let mut batch = Vec::with_capacity(WALK_RUN);
                walk::each_file(root, scope, &mut |f| {
                    batch.push(f);
                    if batch.len() == WALK_RUN {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(WALK_RUN));
                        d.push(Cow::Owned(full), &mut take);
                    }
                });
                d.push(Cow::Owned(batch), &mut take);
            }
        }
        d.finish(&mut take);
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(omitted),
    }
}

/// What every search thread needs to search a file.
#[derive(Clone, Copy)]
struct Job<'a> {
    m: &'a RegexMatcher,
    lit: Option<&'a Literal>,
    context: usize,
    /// Set once the budget is spent: later files are only counted.
    spent: &'a AtomicBool,
}

impl Job<'_> {
    fn search(&self, s: &mut Searchers, f: &FileRef) -> FileResult {
        search_file(self.m, self.lit, s, f, !self.spent.load(Ordering::Relaxed))
    }
}

type Batch<'f> = Cow<'f, [FileRef]>;
type Done<'f> = (usize, Batch<'f>, Vec<FileResult>);

/// Hands batches of files (in path order) to search threads and their results, in the same
/// order, to the caller. A search that never grows past one batch runs on the calling thread,
/// so a small folder starts no threads; results are passed on while batches are still coming.
struct Dispatch<'scope, 'env, 'f> {
    sc: &'scope std::thread::Scope<'scope, 'env>,
    job: Job<'env>,
    cores: usize,
    /// The calling thread's searchers, when it searches itself.
    here: Option<Searchers>,
    /// The first batch, held back until a second one shows threads are worth starting.
    first: Option<Batch<'f>>,
    work: Option<mpsc::Sender<(usize, Batch<'f>)>>,
    done: Option<mpsc::Receiver<Done<'f>>>,
    /// Files sent to the threads so far: the start of the next batch in path order.
    sent: usize,
    /// Results that came back ahead of an earlier batch's, by start.
    pending: BTreeMap<usize, (Batch<'f>, Vec<FileResult>)>,
    /// The start of the next batch whose results go to the caller.
    want: usize,
}

type Take<'t> = dyn FnMut(&FileRef, FileResult) + 't;

impl<'scope, 'env: 'scope, 'f: 'scope> Dispatch<'scope, 'env, 'f> {
    fn new(sc: &'scope std::thread::Scope<'scope, 'env>, job: Job<'env>, cores: usize) -> Self {
        Dispatch {
            sc,
            job,
            cores,
            here: None,
            first: None,
            work: None,
            done: None,
            sent: 0,
            pending: BTreeMap::new(),
            want: 0,
        }
    }

    /// Takes the next batch in path order.
    fn push(&mut self, batch: Batch<'f>, take: &mut Take<'_>) {
        if batch.is_empty() {
            return;
        }
        if self.cores <= 1 {
            self.search_here(&batch, take);
            return;
        }
        if self.work.is_none() {
            match self.first.take() {
                None => {
                    self.first = Some(batch);
                    return;
                }
                Some(first) => {
                    self.start();
                    self.send(first);
                }
            }
        }
        self.send(batch);
        self.pass_on(false, take);
    }

    /// Waits for every batch and passes on the rest of the results.
    fn finish(mut self, take: &mut Take<'_>) {
        if let Some(first) = self.first.take() {
            self.search_here(&first, take);
        }
        self.work = None;
        self.pass_on(true, take);
    }

    fn search_here(&mut self, batch: &[FileRef], take: &mut Take<'_>) {
        let s = self.here.get_or_insert_with(|| searchers(self.job.context));
        for f in batch {
            take(f, self.job.search(s, f));
        }
    }

    fn start(&mut self) {
        let (work_tx, work_rx) = mpsc::channel::<(usize, Batch<'f>)>();
        let (done_tx, done_rx) = mpsc::channel::<Done<'f>>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        for _ in 0..self.cores {
            let (work_rx, done_tx, job) = (Arc::clone(&work_rx), done_tx.clone(), self.job);
            self.sc.spawn(move || {
                let mut s = searchers(job.context);
                loop {
                    let next = work_rx
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .recv();
                    let Ok((start, batch)) = next else { break };
                    let results = batch.iter().map(|f| job.search(&mut s, f)).collect();
                    if done_tx.send((start, batch, results)).is_err() {
                        break;
                    }
                }
            });
        }
        self.work = Some(work_tx);
        self.done = Some(done_rx);
    }

    fn send(&mut self, batch: Batch<'f>) {
        let len = batch.len();
        if let Some(work) = &self.work
            && work.send((self.sent, batch)).is_ok()
        {
            self.sent += len;
        }
    }

    /// Passes on results in path order: those that are in (`wait` false) or all of them, once
    /// no more batches will come (`wait` true).
    fn pass_on(&mut self, wait: bool, take: &mut Take<'_>) {
        let Some(done) = &self.done else { return };
        loop {
            let next = if wait {
                done.recv().ok()
            } else {
                done.try_recv().ok()
            };
            let Some((start, batch, results)) = next else {
                break;
            };
            self.pending.insert(start, (batch, results));
            while let Some((batch, results)) = self.pending.remove(&self.want) {
                self.want += batch.len();
                for (f, r) in batch.iter().zip(results) {
                    take(f, r);
                }
            }
        }
    }
}
