//! Ranked mode's line scorer that stops early: the keyword index's terms kept per term and
//! file (the `postings` table), scored with upper bounds so that files which cannot reach the
//! best lines are never decoded.
//!
//! It computes exactly what FTS5's `bm25()` computes over the `lines` table (and over `docs`
//! for a file's own score), with the same statistics, in the same order of floating-point
//! operations, so its scores are the same to the bit: FTS5 stays the reference
//! (`ranked::Scorer::Full`) and a test holds the two to the same answers. What it changes is
//! the work: FTS5 re-tokenizes every matching line to count its terms (the `lines` table keeps
//! only columns, not positions) and sorts them all, which on a folder of common words is most
//! of its lines; this scorer reads a few blobs per term and, once it holds as many lines as
//! ranked mode takes, skips every file whose bound is below the worst of them.
//!
//! A file's bound is, for each of the query's terms, the term's IDF times the BM25 term
//! weight at the best column weight and the fewest tokens of any of the file's lines holding
//! it. Every floating-point operation in the score is monotone in its inputs under
//! round-to-nearest, so the computed bound is never below any computed line score in the
//! file; files are visited by bound, best first, and the visit stops at the first file whose
//! bound is below the current k-th best score, since no line after it can enter.
//!
//! `data` holds, as LEB128 varints, a header (the lines holding the term, its count in the
//! file's `docs` row, its most counts in one line's body, speaker and unindexed columns, the
//! fewest tokens of a line holding it), then for each line holding the term in row order the
//! row delta, the term's counts (body, speaker, unindexed columns), the line-number delta and
//! the line's tokens.

use super::sqlite::db_err;
use crate::error::Error;
use rusqlite::{Connection, params};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

/// FTS5's BM25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How often a term is in one line: in its body, its speaker, and in the columns FTS5 does not
/// index but still counts when it scores (see [`Counts::freq`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub body: u32,
    pub speaker: u32,
    pub unindexed: u32,
}

impl Counts {
    fn holds(self) -> bool {
        self.body + self.speaker > 0
    }

    fn max(self, o: Counts) -> Counts {
        Counts {
            body: self.body.max(o.body),
            speaker: self.speaker.max(o.speaker),
            unindexed: self.unindexed.max(o.unindexed),
        }
    }

    /// The line's frequency for the term as FTS5's `bm25()` adds it up: one instance per
    /// occurrence, each weighing its column's weight, in column order. At `detail=column` FTS5
    /// finds the instances by tokenizing the row again, every column of it: the `UNINDEXED`
    /// ones too (`file_id`, `line`, and `text`, the raw line), which weigh 1.0 as columns past
    /// the weights given. So a line whose raw text spells the term (an unstemmed word) counts
    /// it again there; the shipped ranking was tuned with that, so it is kept.
    fn freq(self, w_body: f64, w_speaker: f64) -> f64 {
        let mut f = 0.0;
        for _ in 0..self.body {
            f += w_body;
        }
        for _ in 0..self.speaker {
            f += w_speaker;
        }
        for _ in 0..self.unindexed {
            f += 1.0;
        }
        f
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Reads a varint at `*at`; `None` past the end (a damaged blob).
fn get_varint(data: &[u8], at: &mut usize) -> Option<u64> {
    // Most values (row and line deltas, counts, a line's tokens) fit in one byte.
    let first = *data.get(*at)?;
    if first < 0x80 {
        *at += 1;
        return Some(u64::from(first));
    }
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = *data.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
    }
}

/// One term's postings in one file, as they are built.
#[derive(Default)]
struct TermPost {
    nrows: u32,
    doc_tf: u32,
    most: Counts,
    dmin: u32,
    data: Vec<u8>,
    prev_row: u32,
    prev_line: u32,
}

/// A file's postings, built row by row as its lines go into the FTS5 tables.
#[derive(Default)]
pub(crate) struct FilePostings {
    nrows: u32,
    ntok: u64,
    doc_len: u64,
    terms: BTreeMap<String, TermPost>,
}

impl FilePostings {
    /// Adds the next row (a line inserted into `lines`), given FTS5's tokens of its columns
    /// (`unindexed`: of its `file_id`, `line` and `text`).
    pub fn add_row(
        &mut self,
        line: u32,
        body: &[String],
        speaker: &[String],
        unindexed: &[String],
    ) {
        let row = self.nrows;
        self.nrows += 1;
        let len = u32::try_from(body.len() + speaker.len()).unwrap_or(u32::MAX);
        self.ntok += u64::from(len);
        self.doc_len += body.len() as u64;
        let mut here: Vec<(&str, bool)> = body
            .iter()
            .map(|t| (t.as_str(), true))
            .chain(speaker.iter().map(|t| (t.as_str(), false)))
            .collect();
        here.sort_unstable();
        for t in body {
            if let Some(p) = self.terms.get_mut(t.as_str()) {
                p.doc_tf += 1;
            } else {
                self.terms.insert(
                    t.clone(),
                    TermPost {
                        doc_tf: 1,
                        dmin: u32::MAX,
                        ..TermPost::default()
                    },
                );
            }
        }
        let mut i = 0;
        while i < here.len() {
            let term = here[i].0;
            let mut n = Counts {
                unindexed: u32::try_from(unindexed.iter().filter(|t| *t == term).count())
                    .unwrap_or(u32::MAX),
                ..Counts::default()
            };
            while i < here.len() && here[i].0 == term {
                if here[i].1 {
                    n.body += 1;
                } else {
                    n.speaker += 1;
                }
                i += 1;
            }
            let p = self
                .terms
                .entry(term.to_string())
                .or_insert_with(|| TermPost {
                    dmin: u32::MAX,
                    ..TermPost::default()
                });
            put_varint(&mut p.data, u64::from(row - p.prev_row));
            put_varint(&mut p.data, u64::from(n.body));
            put_varint(&mut p.data, u64::from(n.speaker));
            put_varint(&mut p.data, u64::from(n.unindexed));
            put_varint(&mut p.data, u64::from(line - p.prev_line));
            put_varint(&mut p.data, u64::from(len));
            p.prev_row = row;
            p.prev_line = line;
            p.nrows += 1;
            p.most = p.most.max(n);
            p.dmin = p.dmin.min(len);
        }
    }

    /// Writes the file's postings and row counts (its `files` row exists).
    pub fn store(self, tx: &Connection, id: i64, first_row: i64) -> Result<(), Error> {
        tx.execute(
            "UPDATE files SET first_row = ?1, nrows = ?2, ntok = ?3, doc_len = ?4 WHERE id = ?5",
            params![
                first_row,
                self.nrows,
                i64::try_from(self.ntok).unwrap_or(i64::MAX),
                i64::try_from(self.doc_len).unwrap_or(i64::MAX),
                id
            ],
        )
        .map_err(db_err)?;
        let mut st = tx
            .prepare_cached("INSERT INTO postings(term, file_id, data) VALUES (?1, ?2, ?3)")
            .map_err(db_err)?;
        let mut data = Vec::new();
        for (term, p) in self.terms {
            data.clear();
            for v in [
                p.nrows,
                p.doc_tf,
                p.most.body,
                p.most.speaker,
                p.most.unindexed,
                p.dmin,
            ] {
                put_varint(&mut data, u64::from(v));
            }
            data.extend_from_slice(&p.data);
            st.execute(params![term, id, data]).map_err(db_err)?;
        }
        Ok(())
    }
}

/// The BM25 weight of one phrase in one row, as FTS5 computes it.
fn term_weight(freq: f64, len: f64, avgdl: f64) -> f64 {
    (freq * (K1 + 1.0)) / (freq + K1 * (1.0 - B + B * len / avgdl))
}

/// FTS5's IDF for a phrase found in `hits` of `rows` rows.
fn idf(rows: i64, hits: i64) -> f64 {
    let idf = (((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// What a ranked query asks of the lines, in FTS5 tokens.
pub(crate) struct LineQuery<'a> {
    /// The phrases of the line expression that score, in FTS5's order: the ranked terms, then
    /// each phrase's terms (a term in both counts twice, as in FTS5). Excluded terms are
    /// phrases too but never in a matching line, so they add nothing.
    pub scored: Vec<&'a str>,
    /// A matching line holds at least one of these.
    pub any: &'a [String],
    /// ... and every one of these ...
    pub all: Vec<&'a str>,
    /// ... and none of these.
    pub none: &'a [String],
    /// The phrases of a file's own score (the `docs` expression: the ranked terms).
    pub doc_scored: &'a [String],
    /// The column weights of `lines`.
    pub weights: (f64, f64),
}

/// A line taken as a candidate: its file, line number, rowid in `lines` and BM25 score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub file_id: i64,
    pub line: i64,
    pub rowid: i64,
    pub score: f64,
}

/// The postings of every file read for one term go into one buffer (`TermInfo::data`); a file's
/// `Meta` says where its list is, so reading a term allocates once, not once per file.
struct TermInfo {
    /// Per file: its postings.
    files: FxHashMap<i64, Meta>,
    data: Vec<u8>,
    line_hits: i64,
    doc_hits: i64,
}

struct Meta {
    doc_tf: u32,
    most: Counts,
    dmin: u32,
    /// Its posting list: `data[at..at + len]` of its term's buffer.
    at: usize,
    len: usize,
}

impl TermInfo {
    fn list(&self, m: &Meta) -> &[u8] {
        &self.data[m.at..m.at + m.len]
    }
}

/// A file to visit, with its bound.
struct Visit {
    file_id: i64,
    bound: f64,
}

/// A heap entry: greater is worse, so the heap's top is the entry to drop. Ties go in path
/// order, by the file's rank among the paths (lines tie often, and comparing ranks instead of
/// the paths' bytes was a tenth of a search of common words). Small, as the heap moves it
/// about: the candidate it stands for is made from it at the end.
struct Entry {
    score: f64,
    file_id: i64,
    rank: u32,
    /// Its row among its file's rows, and its line number.
    row: u32,
    line: u32,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.rank.cmp(&other.rank))
            .then_with(|| self.row.cmp(&other.row))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

/// What the early-stopping scorer found: the candidate lines, best first (ties in path and
/// line order), and the `docs` score of every file that holds one.
pub(crate) struct Found {
    pub lines: Vec<Candidate>,
    pub doc_score: FxHashMap<i64, f64>,
    /// Files that could hold a matching line, and how many of them were scored (what the
    /// tests check the stopping with).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    pub files: usize,
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    pub visited: usize,
}

/// A file a search may find lines in, as the index lists it.
#[derive(Clone, Copy)]
pub(crate) struct InScope {
    /// Its place among the index's files in path order.
    pub rank: u32,
    /// Its place in the caller's list of files (what the caller finds it by again).
    pub at: u32,
    /// The row of `lines` of its first line.
    pub first_row: i64,
    /// Its `docs` row's length in tokens.
    pub doc_len: i64,
}

impl InScope {
    /// The file the index lists at `rank` (its list is in path order), at `at` in the
    /// caller's list.
    pub(crate) fn of(rank: usize, at: usize, f: &super::keyword::Listed) -> InScope {
        InScope {
            rank: u32::try_from(rank).unwrap_or(u32::MAX),
            at: u32::try_from(at).unwrap_or(u32::MAX),
            first_row: f.first_row,
            doc_len: f.doc_len,
        }
    }
}

/// What BM25 needs of the whole index (every file, in scope or not, as FTS5 counts): its
/// files (`docs` rows), `lines` rows, the tokens of those rows and of the `docs` rows.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    pub docs: i64,
    pub lines: i64,
    pub line_tokens: i64,
    pub doc_tokens: i64,
}

impl Totals {
    /// Added up from the index's file table (which the index caches between changes), instead
    /// of a query over the `files` table on every search.
    pub(crate) fn of(listed: &[super::keyword::Listed]) -> Totals {
        listed.iter().fold(Totals::default(), |t, f| Totals {
            docs: t.docs + 1,
            lines: t.lines + f.nrows,
            line_tokens: t.line_tokens + f.ntok,
            doc_tokens: t.doc_tokens + f.doc_len,
        })
    }
}

/// Files to visit from which a search splits them between threads: below this, starting a
/// thread costs more than the visits (a few microseconds each) it saves.
const PARALLEL_FILES: usize = 256;
/// The most threads one search scores files on.
const MAX_WORKERS: usize = 4;

/// What scoring a file's lines needs, shared by the threads that visit files.
struct Scoring<'s> {
    info: &'s [TermInfo],
    /// Indices into `info`: a matching line holds one of `any`, all of `all`, none of `none`.
    any: &'s [usize],
    all: &'s [usize],
    none: &'s [usize],
    /// The scored phrases' indices into `info`, with their IDF.
    scored: &'s [(usize, f64)],
    avgdl: f64,
    weights: (f64, f64),
    scope: &'s FxHashMap<i64, InScope>,
}

impl Scoring<'_> {
    /// Visits `visits` in order (best bound first), scoring each file's matching lines, and
    /// returns the best `keep` of them (all with `None`), unordered, and the files visited.
    fn visit<'v>(
        &self,
        visits: impl Iterator<Item = &'v Visit>,
        keep: Option<usize>,
    ) -> Result<(Vec<Entry>, usize), Error> {
        let (w_body, w_speaker) = self.weights;
        let nterms = self.info.len();
        let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
        let mut all_found: Vec<Entry> = Vec::new();
        // This file's postings of each term, decoded (buffers reused from file to file), each
        // in row order, and where the walk through each is.
        let mut file_terms: Vec<Vec<(u32, u32, u32, Counts)>> = vec![Vec::new(); nterms];
        let mut next: Vec<usize> = vec![0; nterms];
        // The row being scored: each term's counts in it.
        let mut c: Vec<Counts> = vec![Counts::default(); nterms];
        let is_any: Vec<bool> = (0..nterms).map(|j| self.any.contains(&j)).collect();
        let mut visited = 0;
        for v in visits {
            if let (Some(k), Some(worst)) = (keep, heap.peek())
                && heap.len() >= k
                && v.bound < worst.score
            {
                break;
            }
            visited += 1;
            let Some(&InScope { rank, .. }) = self.scope.get(&v.file_id) else {
                continue;
            };
            for (t, list) in self.info.iter().zip(file_terms.iter_mut()) {
                list.clear();
                if let Some(m) = t.files.get(&v.file_id) {
                    decode(t.list(m), list).ok_or_else(damaged)?;
                }
            }
            next.fill(0);
            // The terms' lists merged in row order: each row any of them holds, once.
            loop {
                let mut row = u32::MAX;
                for (list, &i) in file_terms.iter().zip(&next) {
                    if let Some(p) = list.get(i) {
                        row = row.min(p.0);
                    }
                }
                if row == u32::MAX {
                    break;
                }
                let (mut line, mut len, mut any) = (0, 0, false);
                for (j, list) in file_terms.iter().enumerate() {
                    match list.get(next[j]) {
                        Some(p) if p.0 == row => {
                            (line, len, c[j]) = (p.1, p.2, p.3);
                            any |= is_any[j];
                            next[j] += 1;
                        }
                        _ => c[j] = Counts::default(),
                    }
                }
                if !any
                    || !self.all.iter().all(|&j| c[j].holds())
                    || self.none.iter().any(|&j| c[j].holds())
                {
                    continue;
                }
                let mut score = 0.0;
                for &(j, idf) in self.scored {
                    let f = c[j].freq(w_body, w_speaker);
                    score += idf * term_weight(f, f64::from(len), self.avgdl);
                }
                let e = Entry {
                    score,
                    file_id: v.file_id,
                    rank,
                    row,
                    line,
                };
                match keep {
                    None => all_found.push(e),
                    Some(k) => {
                        if heap.len() < k {
                            heap.push(e);
                        } else if let Some(mut worst) = heap.peek_mut()
                            && e < *worst
                        {
                            // Replaced in place: one sift down instead of a pop and a push.
                            *worst = e;
                        }
                    }
                }
            }
        }
        Ok((
            if keep.is_some() {
                heap.into_vec()
            } else {
                all_found
            },
            visited,
        ))
    }

    /// [`Scoring::visit`] over `visits` split between `workers` threads: the best `keep` of
    /// the lines they find (all with `None`), unordered, and the files visited.
    fn split(
        &self,
        visits: &[Visit],
        keep: Option<usize>,
        workers: usize,
    ) -> Result<(Vec<Entry>, usize), Error> {
        if workers <= 1 {
            return self.visit(visits.iter(), keep);
        }
        let parts = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..workers)
                .map(|w| sc.spawn(move || self.visit(visits.iter().skip(w).step_by(workers), keep)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect::<Vec<_>>()
        });
        let mut found = Vec::new();
        let mut visited = 0;
        for part in parts {
            let (f, v) = part?;
            found.extend(f);
            visited += v;
        }
        Ok((found, visited))
    }
}

/// Scores the lines of the files in `scope` (by file id) that match `q`, and keeps the best
/// `keep` (all with `None`), ordered by score, then path, then line.
pub(crate) fn top_lines(
    conn: &Connection,
    q: &LineQuery<'_>,
    scope: &FxHashMap<i64, InScope>,
    totals: Totals,
    keep: Option<usize>,
) -> Result<Found, Error> {
    top_lines_on(conn, q, scope, totals, keep, None)
}

/// [`top_lines`] on `threads` threads (`None`: as many as the files to visit are worth, up to
/// [`MAX_WORKERS`]), which gives the same answer whatever the number.
fn top_lines_on(
    conn: &Connection,
    q: &LineQuery<'_>,
    scope: &FxHashMap<i64, InScope>,
    totals: Totals,
    keep: Option<usize>,
    threads: Option<usize>,
) -> Result<Found, Error> {
    let Totals {
        docs,
        lines,
        line_tokens,
        doc_tokens,
    } = totals;
    let empty = Found {
        lines: Vec::new(),
        doc_score: FxHashMap::default(),
        files: 0,
        visited: 0,
    };
    if lines == 0 || keep == Some(0) {
        return Ok(empty);
    }
    // Every distinct term the query names, with its postings.
    let mut names: Vec<&str> = q
        .any
        .iter()
        .map(String::as_str)
        .chain(q.all.iter().copied())
        .chain(q.none.iter().map(String::as_str))
        .chain(q.doc_scored.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut info = Vec::with_capacity(names.len());
    {
        let mut st = conn
            .prepare_cached("SELECT file_id, data FROM postings WHERE term = ?1")
            .map_err(db_err)?;
        for term in &names {
            let mut t = TermInfo {
                // At most one row per file of the index: sized up front, as growing it
                // rehashed every entry several times (capped: a rare term's map stays small).
                files: FxHashMap::with_capacity_and_hasher(
                    usize::try_from(docs).unwrap_or(0).min(4096),
                    Default::default(),
                ),
                data: Vec::new(),
                line_hits: 0,
                doc_hits: 0,
            };
            let mut rows = st.query([term]).map_err(db_err)?;
            while let Some(r) = rows.next().map_err(db_err)? {
                let file: i64 = r.get(0).map_err(db_err)?;
                let rusqlite::types::ValueRef::Blob(blob) = r.get_ref(1).map_err(db_err)? else {
                    return Err(damaged());
                };
                // The header `store` writes: six counts, each a u32.
                let mut at = 0;
                let mut head = [0u32; 6];
                for v in &mut head {
                    *v = get_varint(blob, &mut at)
                        .and_then(|v| u32::try_from(v).ok())
                        .ok_or_else(damaged)?;
                }
                let [nrows, doc_tf, body, speaker, unindexed, dmin] = head;
                let list = &blob[at..];
                let meta = Meta {
                    doc_tf,
                    most: Counts {
                        body,
                        speaker,
                        unindexed,
                    },
                    dmin,
                    at: t.data.len(),
                    len: list.len(),
                };
                t.data.extend_from_slice(list);
                t.line_hits += i64::from(nrows);
                t.doc_hits += i64::from(meta.doc_tf > 0);
                t.files.insert(file, meta);
            }
            info.push(t);
        }
    }
    let at = |term: &str| names.binary_search(&term).unwrap_or(0);
    let any: Vec<usize> = q.any.iter().map(|t| at(t)).collect();
    let all: Vec<usize> = q.all.iter().map(|t| at(t)).collect();
    let none: Vec<usize> = q.none.iter().map(|t| at(t)).collect();
    let scored: Vec<(usize, f64)> = q
        .scored
        .iter()
        .map(|t| {
            let i = at(t);
            (i, idf(lines, info[i].line_hits))
        })
        .collect();
    let avgdl = line_tokens as f64 / lines as f64;
    let (w_body, w_speaker) = q.weights;

    // The files that can hold a matching line, best bound first.
    let mut visits: Vec<Visit> = Vec::new();
    let mut seen = FxHashSet::default();
    for &i in &any {
        for &file in info[i].files.keys() {
            if !seen.insert(file) || !scope.contains_key(&file) {
                continue;
            }
            if !all.iter().all(|&j| info[j].files.contains_key(&file)) {
                continue;
            }
            let mut bound = 0.0;
            for &(j, idf) in &scored {
                if let Some(m) = info[j].files.get(&file) {
                    let f = m.most.freq(w_body, w_speaker);
                    bound += idf * term_weight(f, f64::from(m.dmin), avgdl);
                }
            }
            visits.push(Visit {
                file_id: file,
                bound,
            });
        }
    }
    visits.sort_by(|a, b| b.bound.total_cmp(&a.bound));

    let scoring = Scoring {
        info: &info,
        any: &any,
        all: &all,
        none: &none,
        scored: &scored,
        avgdl,
        weights: q.weights,
        scope,
    };
    // A long list of files is split between threads, each taking every n-th file in bound
    // order and keeping its own best `keep`: a file one of them skips is below `keep` lines
    // it already holds, so the best `keep` of their lines together are the best overall.
    let workers = threads.unwrap_or(if visits.len() >= PARALLEL_FILES {
        crate::cores().min(MAX_WORKERS)
    } else {
        1
    });
    let (mut found, visited) = scoring.split(&visits, keep, workers)?;
    found.sort();
    if let Some(k) = keep {
        found.truncate(k);
    }
    let lines: Vec<Candidate> = found
        .into_iter()
        .map(|e| Candidate {
            file_id: e.file_id,
            line: i64::from(e.line),
            rowid: scope.get(&e.file_id).map_or(0, |f| f.first_row) + i64::from(e.row),
            score: e.score,
        })
        .collect();

    // The files' own scores, as `bm25(docs)` over the ranked terms.
    let doc_avgdl = doc_tokens as f64 / docs as f64;
    let doc_idf: Vec<(usize, f64)> = q
        .doc_scored
        .iter()
        .map(|t| {
            let i = at(t);
            (i, idf(docs, info[i].doc_hits))
        })
        .collect();
    let mut doc_score = FxHashMap::default();
    let mut done = FxHashSet::default();
    for c in &lines {
        if !done.insert(c.file_id) {
            continue;
        }
        // As `docs MATCH`: a file whose own text holds none of the terms (only its speakers
        // do) has no file score.
        let holds = |j: usize| info[j].files.get(&c.file_id).is_some_and(|m| m.doc_tf > 0);
        if !doc_idf.iter().any(|&(j, _)| holds(j)) {
            continue;
        }
        let len = scope.get(&c.file_id).map_or(0, |f| f.doc_len) as f64;
        let mut s = 0.0;
        for &(j, idf) in &doc_idf {
            let tf = info[j].files.get(&c.file_id).map_or(0, |m| m.doc_tf);
            s += idf * term_weight(f64::from(tf), len, doc_avgdl);
        }
        doc_score.insert(c.file_id, s);
    }
    Ok(Found {
        lines,
        doc_score,
        files: visits.len(),
        visited,
    })
}

fn damaged() -> Error {
    Error::Index(format!(
        "search index: a posting list is damaged; delete .memdir/{} to rebuild it",
        super::sqlite::KEYWORD_DB
    ))
}

/// Decodes one posting list into `(row, line, tokens, counts)`; `None` if it is damaged.
fn decode(data: &[u8], out: &mut Vec<(u32, u32, u32, Counts)>) -> Option<()> {
    let (mut at, mut row, mut line) = (0, 0u32, 0u32);
    let next = |at: &mut usize| u32::try_from(get_varint(data, at)?).ok();
    while at < data.len() {
        row = row.checked_add(next(&mut at)?)?;
        let n = Counts {
            body: next(&mut at)?,
            speaker: next(&mut at)?,
            unindexed: next(&mut at)?,
        };
        line = line.checked_add(next(&mut at)?)?;
        let len = next(&mut at)?;
        out.push((row, line, len, n));
    }
    Some(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::keyword::Index;
    use crate::walk::{FileRef, Held};
    use memdir_core::tokenize::Tokenizer;
    use std::collections::HashMap;
    use std::sync::Arc;

    /// An index of `files` in memory, and every file of it in scope.
    fn indexed(files: &[FileRef]) -> (Index, FxHashMap<i64, InScope>, Totals) {
        let mut index = Index::open(None).unwrap();
        index.sync(files, &Tokenizer::new()).unwrap();
        let listed = index.files().unwrap();
        let scope = listed
            .iter()
            .enumerate()
            .map(|(rank, f)| (f.id, InScope::of(rank, rank, f)))
            .collect();
        // Added up from the file table, the totals are what the table says as a whole.
        let totals = Totals::of(&listed);
        let sql: (i64, i64, i64, i64) = index
            .conn
            .query_row(
                "SELECT count(*), coalesce(sum(nrows), 0), coalesce(sum(ntok), 0),
                        coalesce(sum(doc_len), 0) FROM files",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        let t = totals;
        assert_eq!((t.docs, t.lines, t.line_tokens, t.doc_tokens), sql);
        (index, scope, totals)
    }

    /// Lines holding any of `terms`, scored by all of them, and files by them too.
    fn any_of(terms: &[String]) -> LineQuery<'_> {
        LineQuery {
            scored: terms.iter().map(String::as_str).collect(),
            any: terms,
            all: Vec::new(),
            none: &[],
            doc_scored: terms,
            weights: (1.0, 0.2),
        }
    }

    fn held(rel: &str, text: &str) -> FileRef {
        FileRef {
            rel: rel.to_string(),
            abs: std::path::PathBuf::new(),
            date: None,
            held: Some(Arc::new(Held::new(text.as_bytes().to_vec()))),
        }
    }

    #[test]
    fn line_and_file_scores_are_fts5s_to_the_bit() {
        let files = vec![
            held(
                "a.md",
                "- coffee garden\n- coffee\n\n- 10:00 [D1:1] Coffee: coffee coffee river\n",
            ),
            held(
                "b.md",
                "# Notes\n- river café naïve Ⓐbc 3 River\n- Jon: river\n- a b c\n",
            ),
            held("c.md", "---\n"),
        ];
        let (index, scope, totals) = indexed(&files);
        let ranked = vec!["coffee".to_string(), "river".to_string()];
        let q = any_of(&ranked);
        let found = top_lines(&index.conn, &q, &scope, totals, None).unwrap();
        let mut st = index
            .conn
            .prepare("SELECT rowid, bm25(lines, 1, 0.2) FROM lines WHERE lines MATCH '\"coffee\" OR \"river\"'")
            .unwrap();
        let fts: HashMap<i64, f64> = st
            .query_map([], |r| Ok((r.get(0)?, -r.get::<_, f64>(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(found.lines.len(), fts.len());
        for c in &found.lines {
            assert_eq!(
                c.score.to_bits(),
                fts[&c.rowid].to_bits(),
                "{c:?} against {}",
                fts[&c.rowid]
            );
        }
        let mut st = index
            .conn
            .prepare(
                "SELECT file_id, bm25(docs) FROM docs WHERE docs MATCH '\"coffee\" OR \"river\"'",
            )
            .unwrap();
        let docs: HashMap<i64, f64> = st
            .query_map([], |r| Ok((r.get(0)?, -r.get::<_, f64>(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(found.doc_score.len(), docs.len());
        for (id, s) in &found.doc_score {
            assert_eq!(
                s.to_bits(),
                docs[id].to_bits(),
                "file {id}: {s} against {}",
                docs[id]
            );
        }
    }

    #[test]
    fn stops_at_the_first_file_that_cannot_place_a_line() {
        // Ten files where "ocelot" is one word of a short line, ninety where it sits in long
        // lines: once ten lines are kept, the long-line files' bounds are below all of them.
        let mut files = Vec::new();
        for f in 0..100 {
            let text = if f < 10 {
                "- ocelot river\n".repeat(3)
            } else {
                "- ocelot garden train paint coffee meeting river bridge lamp\n".repeat(3)
            };
            files.push(held(&format!("f{f:03}.md"), &text));
        }
        let (index, scope, totals) = indexed(&files);
        let ranked = vec!["ocelot".to_string()];
        let q = any_of(&ranked);
        let found = top_lines(&index.conn, &q, &scope, totals, Some(10)).unwrap();
        assert_eq!(found.files, 100);
        assert_eq!(found.lines.len(), 10);
        assert!(found.visited < 20, "visited {} of 100 files", found.visited);
        let all = top_lines(&index.conn, &q, &scope, totals, None).unwrap();
        assert_eq!((all.visited, all.lines.len()), (100, 300));
    }

    #[test]
    fn threads_split_the_files_and_give_the_same_answer() {
        // More files than a search splits from, each with a few lines of common words, so
        // many lines tie and the order of ties (path, then line) is tested too.
        let words = ["ocelot", "river", "lamp", "garden", "train", "paint"];
        let files: Vec<FileRef> = (0..PARALLEL_FILES * 2 + 37)
            .map(|f| {
                let text: String = (0..4)
                    .map(|l| {
                        let n = 2 + (f * 7 + l * 3) % 5;
                        let line: Vec<&str> = (0..n)
                            .map(|w| words[(f + l * 5 + w * w) % words.len()])
                            .collect();
                        format!("- {}\n", line.join(" "))
                    })
                    .collect();
                held(&format!("d{:02}/f{f:04}.md", f % 13), &text)
            })
            .collect();
        let (index, scope, totals) = indexed(&files);
        let any = vec!["ocelot".to_string(), "river".to_string()];
        let q = any_of(&any);
        for keep in [Some(1), Some(25), Some(400), None] {
            let one = top_lines_on(&index.conn, &q, &scope, totals, keep, Some(1)).unwrap();
            assert!(one.files > PARALLEL_FILES, "{} files", one.files);
            assert!(!one.lines.is_empty());
            for threads in [2, 3, MAX_WORKERS] {
                let many =
                    top_lines_on(&index.conn, &q, &scope, totals, keep, Some(threads)).unwrap();
                assert_eq!(one.lines, many.lines, "keep {keep:?}, {threads} threads");
                assert_eq!(one.doc_score, many.doc_score);
            }
            // And the automatic choice (split here: more files than PARALLEL_FILES).
            let auto = top_lines(&index.conn, &q, &scope, totals, keep).unwrap();
            assert_eq!(one.lines, auto.lines);
        }
    }

    #[test]
    fn varints_round_trip() {
        let mut buf = Vec::new();
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        for v in values {
            put_varint(&mut buf, v);
        }
        let mut at = 0;
        for v in values {
            assert_eq!(get_varint(&buf, &mut at), Some(v));
        }
        assert_eq!(get_varint(&buf, &mut at), None);
    }
}
