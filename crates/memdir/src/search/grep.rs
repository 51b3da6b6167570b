//! Grep mode: ripgrep's matcher and searcher, in-process, over the files in scope.
//!
//! Files are searched on all cores but their results are taken in path order, so output is
//! the same on every run. Once the budget is spent, the rest are only counted (no line text is
//! kept), which is what the trailer reports.

use super::walk::{FileRef, Scope, files, open_file};
use super::{Budget, SearchHit, SearchOutcome, SearchRequest};
use crate::error::Error;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Longest line text kept; longer lines (minified data, pasted blobs) are cut so one line can
/// never flood an agent's context.
pub(crate) const MAX_LINE_BYTES: usize = 1000;

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
                one_line(&e.to_string())
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

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .before_context(context)
        .after_context(context)
        .build()
}

/// Turns raw line bytes into display text: no line ending, invalid UTF-8 replaced, long lines cut.
pub(crate) fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.len() <= MAX_LINE_BYTES {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut s = String::from_utf8_lossy(&bytes[..MAX_LINE_BYTES]).into_owned();
    // Cutting may split a character; drop a trailing replacement char made by the cut.
    if s.ends_with('\u{FFFD}') {
        s.pop();
    }
    s.push_str(&format!(
        " [... {} more bytes]",
        bytes.len() - MAX_LINE_BYTES
    ));
    s
}

/// One file's lines, or only its match count once the budget is spent.
#[derive(Default)]
struct FileResult {
    lines: Vec<(u64, bool, String)>,
    matches: usize,
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
            let line = m.line_number().unwrap_or(0);
            self.out.lines.push((line, false, line_text(m.bytes())));
        }
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.keep_text && !matches!(c.kind(), SinkContextKind::Other) {
            let line = c.line_number().unwrap_or(0);
            self.out.lines.push((line, true, line_text(c.bytes())));
        }
        Ok(true)
    }
}

fn search_file(m: &RegexMatcher, s: &mut Searcher, path: &Path, keep_text: bool) -> FileResult {
    let mut sink = Collect {
        out: FileResult::default(),
        keep_text,
    };
    // A file that cannot be read (gone, permissions, now a symlink) is skipped, like `grep -s`.
    let Ok(file) = open_file(path) else {
        return FileResult::default();
    };
    match s.search_file(m, &file, &mut sink) {
        Ok(()) => sink.out,
        Err(_) => FileResult::default(),
    }
}

/// Runs a grep over the folder at `root`.
pub(crate) fn search(
    root: &Path,
    scope: &Scope,
    req: &SearchRequest,
) -> Result<SearchOutcome, Error> {
    let m = matcher(req)?;
    let files = files(root, scope)?;
    let mut budget = Budget::new(req.max_bytes, req.limit);
    let mut outcome = SearchOutcome::default();
    let spent = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len() / 16 + 1);

    let mut take = |f: &FileRef, r: FileResult, outcome: &mut SearchOutcome| {
        if spent.load(Ordering::Relaxed) || r.lines.is_empty() {
            outcome.omitted += r.matches;
            return;
        }
        let date = f.date_string();
        let mut shown = 0;
        for (line, is_context, text) in r.lines {
            let hit = SearchHit {
                path: f.rel.clone(),
                line,
                text,
                score: None,
                date: date.clone(),
                is_context,
            };
            if !budget.take(&hit) {
                spent.store(true, Ordering::Relaxed);
                break;
            }
            shown += usize::from(!is_context);
            outcome.hits.push(hit);
        }
        outcome.omitted += r.matches - shown;
    };

    if workers <= 1 {
        let mut s = searcher(req.context);
        for f in &files {
            let keep = !spent.load(Ordering::Relaxed);
            let r = search_file(&m, &mut s, &f.abs, keep);
            take(f, r, &mut outcome);
        }
        return Ok(outcome);
    }

    std::thread::scope(|sc| {
        let (tx, rx) = mpsc::channel::<(usize, FileResult)>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (m, files, next, spent) = (&m, &files, &next, &spent);
            sc.spawn(move || {
                let mut s = searcher(req.context);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = files.get(i) else { break };
                    let keep = !spent.load(Ordering::Relaxed);
                    if tx.send((i, search_file(m, &mut s, &f.abs, keep))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results arrive in any order; hand them to the budget in path order.
        let mut pending = BTreeMap::new();
        let mut want = 0;
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&want) {
                take(&files[want], r, &mut outcome);
                want += 1;
            }
        }
    });
    Ok(outcome)
}
