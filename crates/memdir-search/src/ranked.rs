//! Ranked mode: BM25 over lines, each line also credited with the BM25 score of its whole file
//! (for a daily log, its day), so a line in the conversation the question is about beats an
//! equally good line elsewhere.
//!
//! The speaker of a line (`Caroline:` in `- 13:56 [D1:3] Caroline: ...`) is indexed apart from
//! its body and weighs little: a name that starts half the lines says little about any of them.
//! A line also gets a share of the scores of the lines just before and after it, so an answer
//! that only makes sense after its question still ranks.

use super::keyword::{Index, Kept, Listed, Probe};
use super::postings;
use super::sqlite::db_err;
use super::walk::{FileRef, Scope};
use super::{Corpus, DEFAULT_RANKED_LIMIT, SearchOutcome, SearchRequest, Searcher, Why};
use crate::error::Error;
use memdir_core::note::{Meta, Note};
use memdir_core::query::{Query, contains_run};
use memdir_core::tokenize::{Tokenizer, split_line};
use rusqlite::params;
use rustc_hash::FxHashMap;

/// Weights of the `body` and `speaker` columns in a line's BM25.
const W_BODY: f64 = 1.0;
const W_SPEAKER: f64 = 0.2;

/// How much of its neighbours' line scores a line gets.
const W_NEAR: f64 = 0.3;

/// How much of the file's (the day's) score each line gets.
const W_DOC: f64 = 0.6;

/// Lines taken from the line index (the best by their own score; ties in path and line order)
/// before neighbour and file scores are added and the best are kept.
const CANDIDATES: usize = 1000;

/// Opens the index of `root` and brings it up to date; with `rebuild`, from scratch. A warm
/// memory skips the sync when no file changed since its last one (and the index still lists
/// every file: a deleted index is refilled).
pub(crate) fn fresh_index(
    s: &Searcher<'_>,
    tok: &Tokenizer,
    rebuild: bool,
) -> Result<(Index, std::sync::Arc<Vec<FileRef>>), Error> {
    let (all, generation) = s.corpus_files(&Scope::everything())?;
    let mut index = match kept(s) {
        Some((kept, root)) => kept.open(root)?,
        None => Index::open(s.corpus.cache_root())?,
    };
    if rebuild {
        index.clear()?;
    }
    let warm = s.warm.zip(generation);
    let in_step = warm.is_some_and(|(w, g)| w.is_stamped(STAMP, g))
        && !rebuild
        && index.file_count()? == all.len();
    if !in_step {
        index.sync(&all, tok)?;
        if let Some((w, g)) = warm {
            w.stamp(STAMP, g);
        }
    }
    Ok((index, all))
}

/// Where a search may keep its index open for the next one: in a long-lived memory (one with
/// a warm copy), a folder's own index or a store's index in its cache folder. A cache folder
/// may be deleted to keep within a byte budget: whoever deletes it closes the kept connection
/// first ([`crate::Warm::close_index`]), and a connection whose file is gone is never reused
/// nor handed back.
pub(crate) fn kept<'s>(s: &Searcher<'s>) -> Option<(&'s Kept, &'s std::path::Path)> {
    match (s.warm, s.corpus) {
        (Some(w), Corpus::Folder(root)) => Some((&w.keyword, root)),
        (
            Some(w),
            Corpus::Store {
                cache: Some(root), ..
            },
        ) => Some((&w.keyword, root)),
        _ => None,
    }
}

/// The name the keyword index's sync is recorded under in a warm memory.
const STAMP: &str = "keyword-index";

/// A query's words as FTS5 terms: what ranks lines, what every hit must hold, and what no hit
/// may hold.
struct Terms {
    /// Every positive term (free words and phrase words), for BM25.
    ranked: Vec<String>,
    /// Each phrase's terms, in order: a hit has every one as a run.
    phrases: Vec<Vec<String>>,
    /// Terms of `-word`s: a hit has none of them.
    excluded: Vec<String>,
}

impl Terms {
    fn new(q: &Query, tok: &Tokenizer) -> Terms {
        let mut ranked = if q.text.trim().is_empty() {
            Vec::new()
        } else {
            tok.query_terms(&q.text)
        };
        let phrases: Vec<Vec<String>> = q
            .phrases
            .iter()
            .map(|p| tok.terms(p))
            .filter(|t| !t.is_empty())
            .collect();
        for t in phrases.iter().flatten() {
            if !ranked.contains(t) {
                ranked.push(t.clone());
            }
        }
        let mut excluded: Vec<String> = q.excluded.iter().flat_map(|w| tok.terms(w)).collect();
        excluded.sort();
        excluded.dedup();
        Terms {
            ranked,
            phrases,
            excluded,
        }
    }

    /// The FTS5 expression over lines: any ranked term, every phrase term, no excluded term.
    fn line_expr(&self) -> String {
        let mut expr = format!("({})", or_of(&self.ranked));
        for p in &self.phrases {
            expr = format!("{expr} AND ({})", and_of(p));
        }
        if !self.excluded.is_empty() {
            expr = format!("{expr} NOT ({})", or_of(&self.excluded));
        }
        expr
    }

    /// True when a line's text holds every phrase as a run of terms.
    fn phrases_in(&self, text: &str, tok: &Tokenizer) -> bool {
        if self.phrases.is_empty() {
            return true;
        }
        let terms = tok.terms(split_line(text).body);
        self.phrases.iter().all(|p| contains_run(&terms, p))
    }
}

fn quoted(t: &str) -> String {
    format!("\"{}\"", t.replace('"', ""))
}

fn or_of(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| quoted(t))
        .collect::<Vec<_>>()
        .join(" OR ")
}

fn and_of(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| quoted(t))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The frontmatter of a note in a corpus, or `None` for a file that is not a note or cannot be
/// read.
fn note_meta(f: &FileRef) -> Option<Meta> {
    crate::current::note_of(f).map(|n| n.meta)
}

/// Which line scorer a ranked search runs. Both give the same answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scorer {
    /// FTS5's `bm25()` over every matching line, the best kept: the reference (which the
    /// early scorer also falls back to for a query term FTS5 splits in several tokens).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "chosen by name only in the tests")
    )]
    Full,
    /// The posting lists scored with bounds, stopping once no other file can place a line
    /// among the best (`postings.rs`).
    Early,
}

/// Runs a ranked search over a corpus.
pub(crate) fn search(
    s: &Searcher<'_>,
    scope: &Scope,
    req: &SearchRequest,
) -> Result<SearchOutcome, Error> {
    search_with(s, scope, req, Scorer::Early)
}

/// Runs a ranked search over a corpus with the given line scorer.
pub(crate) fn search_with(
    s: &Searcher<'_>,
    scope: &Scope,
    req: &SearchRequest,
    scorer: Scorer,
) -> Result<SearchOutcome, Error> {
    let tok = Tokenizer::new();
    let query = Query::parse(&req.pattern);
    let terms = Terms::new(&query, &tok);
    if terms.ranked.is_empty() && query.filters.is_empty() {
        if !query.excluded.is_empty() {
            return Err(Error::Invalid(
                "a search needs something to look for besides -exclusions: add a word, a \"phrase\" or a filter such as type:project".to_string(),
            ));
        }
        return Ok(SearchOutcome::default());
    }
    let (index, all) = fresh_index(s, &tok, false)?;
    let (query, terms, tok, all): (&Query, &Terms, &Tokenizer, &[FileRef]) =
        (&query, &terms, &tok, &all);
    let out = (|| {
        let conn = &index.conn;
        // One read transaction for every query below (a posting list, a file's first row, a
        // line's text, by the hundred): outside one, each statement takes and drops SQLite's
        // shared lock itself, which cost more than the lookup.
        let _read = if conn.is_autocommit() {
            Some(conn.unchecked_transaction().map_err(db_err)?)
        } else {
            None
        };

        // Files in scope (and meeting the frontmatter filters).
        let keeps = |f: &FileRef| {
            scope.keeps(&f.rel, f.date)
                && (query.filters.is_empty()
                    || note_meta(f)
                        .is_some_and(|m| query.filters.iter().all(|q| q.keeps(&f.rel, &m))))
        };
        if terms.ranked.is_empty() {
            return Ok(filtered_notes(
                all.iter().filter(|f| keeps(f)).collect(),
                req,
            ));
        }
        let listed = index.files()?;
        let totals = postings::Totals::of(&listed);
        let ids = by_id(all, &listed, keeps);
        // One hit per file needs every matching line to count the files; otherwise the best
        // CANDIDATES lines by their own score are enough.
        let keep = if req.files { None } else { Some(CANDIDATES) };
        let early = match scorer {
            Scorer::Early => EarlyTerms::new(conn, terms)?,
            Scorer::Full => None,
        };
        let (mut cands, doc_score) = match early {
            Some(e) => {
                let found = postings::top_lines(conn, &e.query(), &ids, totals, keep)?;
                let cands = found
                    .lines
                    .into_iter()
                    .map(|c| Cand {
                        file_id: c.file_id,
                        line: c.line,
                        rowid: c.rowid,
                        score: c.score,
                        text: None,
                    })
                    .collect();
                (cands, found.doc_score)
            }
            None => full_lines(conn, terms, &ids, all.len(), keep)?,
        };
        if !terms.phrases.is_empty() {
            fill_texts(conn, cands.iter_mut())?;
            cands.retain(|c| terms.phrases_in(c.text.as_deref().unwrap_or(""), tok));
        }
        let line_score: FxHashMap<(i64, i64), f64> = cands
            .iter()
            .map(|c| ((c.file_id, c.line), c.score))
            .collect();
        let near = |id: i64, line: i64| {
            let at = |l: i64| line_score.get(&(id, l)).copied().unwrap_or(0.0);
            at(line - 1) + at(line + 1)
        };
        let mut scored = Vec::new();
        for c in cands {
            let Some(place) = ids.get(&c.file_id) else {
                continue;
            };
            let f = &all[place.at as usize];
            let why = Why {
                keyword: c.score,
                neighbour: W_NEAR * near(c.file_id, c.line),
                day: W_DOC * doc_score.get(&c.file_id).copied().unwrap_or(0.0),
                ..Why::default()
            };
            let score = why.keyword + why.neighbour + why.day;
            scored.push((score, f, c, why, place.rank));
        }
        // A superseded note ranks below its successor.
        crate::current::demote(&mut scored, all, |t| (t.1, &mut t.0, Some(&mut t.3)));
        // Best first; ties in path and line order so output is stable (the rank is the place
        // of the file's path among the index's paths).
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.4.cmp(&b.4))
                .then_with(|| a.2.line.cmp(&b.2.line))
        });
        // Only the lines that can be shown need their text: `finish` shows at most `limit` lines
        // (in files mode, the first line of at most `limit` files) and only counts the rest.
        let limit = req.limit.unwrap_or(DEFAULT_RANKED_LIMIT);
        let mut shown_files = std::collections::HashSet::new();
        let mut shown = 0;
        fill_texts(
            conn,
            scored.iter_mut().filter_map(|(_, f, c, _, _)| {
                let show = if req.files {
                    shown_files.len() < limit && shown_files.insert(f.rel.as_str())
                } else {
                    shown < limit
                };
                shown += 1;
                show.then_some(c)
            }),
        )?;
        let ranked = scored.into_iter().map(|(score, f, c, why, _)| {
            (
                f,
                u64::try_from(c.line).unwrap_or(0),
                c.text.unwrap_or_default(),
                score,
                Some(why),
            )
        });
        Ok(super::vector::finish(ranked, req))
    })();
    // Only a search that succeeded hands its connection back; after an error it is closed.
    if out.is_ok()
        && let Some((kept, root)) = kept(s)
    {
        kept.keep(root, index);
    }
    out
}

/// A candidate line: its file, line number, row in `lines`, own score, and text once read.
struct Cand {
    file_id: i64,
    line: i64,
    rowid: i64,
    score: f64,
    text: Option<String>,
}

/// Reads the text of every candidate given that has none yet, from `lines` by rowid.
fn fill_texts<'c>(
    conn: &rusqlite::Connection,
    cands: impl Iterator<Item = &'c mut Cand>,
) -> Result<(), Error> {
    let mut st = conn
        .prepare_cached("SELECT text FROM lines WHERE rowid = ?1")
        .map_err(db_err)?;
    for c in cands {
        if c.text.is_none() {
            c.text = Some(st.query_row([c.rowid], |r| r.get(0)).map_err(db_err)?);
        }
    }
    Ok(())
}

/// The files of the index that are in `all` and that `keeps` keeps, by id: where each is in
/// `all`, and in the index's path order. Both lists are normally in path order (the index's
/// by SQLite's byte order, which is `str`'s) and list the same files, so one merge finds them
/// without hashing a path. A match the merge finds is always right; when it misses one of the
/// index's files (`all` out of order, or without that file), a map of paths matches instead.
fn by_id(
    all: &[FileRef],
    listed: &[Listed],
    keeps: impl Fn(&FileRef) -> bool,
) -> FxHashMap<i64, postings::InScope> {
    let mut found: Vec<(usize, usize)> = Vec::with_capacity(listed.len());
    let mut at = 0;
    for (rank, l) in listed.iter().enumerate() {
        while all
            .get(at)
            .is_some_and(|f| f.rel.as_str() < l.path.as_str())
        {
            at += 1;
        }
        if all.get(at).is_some_and(|f| f.rel == l.path) {
            found.push((rank, at));
        }
    }
    if found.len() < listed.len() {
        let place: FxHashMap<&str, usize> = all
            .iter()
            .enumerate()
            .map(|(at, f)| (f.rel.as_str(), at))
            .collect();
        found = listed
            .iter()
            .enumerate()
            .filter_map(|(rank, l)| Some((rank, *place.get(l.path.as_str())?)))
            .collect();
    }
    let mut out = FxHashMap::with_capacity_and_hasher(found.len(), Default::default());
    for (rank, at) in found {
        if keeps(&all[at]) {
            let l = &listed[rank];
            out.insert(l.id, postings::InScope::of(rank, at, l));
        }
    }
    out
}

/// The reference scorer: FTS5's `bm25()` over every line matching the query in the files of
/// `ids`, the best `keep` kept (ties in path and line order), and `bm25(docs)` of the files.
fn full_lines(
    conn: &rusqlite::Connection,
    terms: &Terms,
    ids: &FxHashMap<i64, postings::InScope>,
    corpus_files: usize,
    keep: Option<usize>,
) -> Result<(Vec<Cand>, FxHashMap<i64, f64>), Error> {
    let expr = or_of(&terms.ranked);
    let line_expr = terms.line_expr();
    let narrowed = ids.len() < corpus_files;
    if narrowed {
        conn.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS scope(id INTEGER PRIMARY KEY); DELETE FROM scope;",
        )
        .map_err(db_err)?;
        let mut st = conn
            .prepare("INSERT INTO scope(id) VALUES (?1)")
            .map_err(db_err)?;
        for id in ids.keys() {
            st.execute([id]).map_err(db_err)?;
        }
    }
    let filter = if narrowed {
        "AND file_id IN (SELECT id FROM scope)"
    } else {
        ""
    };

    let mut doc_score: FxHashMap<i64, f64> = FxHashMap::default();
    {
        let sql = format!("SELECT file_id, bm25(docs) FROM docs WHERE docs MATCH ?1 {filter}");
        let mut st = conn.prepare(&sql).map_err(db_err)?;
        let rows = st
            .query_map([&expr], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)))
            .map_err(db_err)?;
        for row in rows {
            let (id, s) = row.map_err(db_err)?;
            doc_score.insert(id, -s);
        }
    }

    let sql = format!(
        "SELECT file_id, line, text, bm25(lines, {W_BODY}, {W_SPEAKER}) AS s, rowid
         FROM lines WHERE lines MATCH ?1 {filter}
         ORDER BY s, (SELECT path FROM files WHERE files.id = file_id), line LIMIT ?2"
    );
    let mut st = conn.prepare(&sql).map_err(db_err)?;
    let limit = keep.map_or(-1, |k| i64::try_from(k).unwrap_or(i64::MAX));
    let rows = st
        .query_map(params![line_expr, limit], |r| {
            Ok(Cand {
                file_id: r.get(0)?,
                line: r.get(1)?,
                text: Some(r.get(2)?),
                score: -r.get::<_, f64>(3)?,
                rowid: r.get(4)?,
            })
        })
        .map_err(db_err)?;
    let mut cands = Vec::new();
    for row in rows {
        let c = row.map_err(db_err)?;
        if ids.contains_key(&c.file_id) {
            cands.push(c);
        }
    }
    Ok((cands, doc_score))
}

/// A query's terms as FTS5's own tokens, for the early-stopping scorer; `None` when a term is
/// more or less than one FTS5 token (FTS5 matches it as a phrase of its tokens), where the
/// reference scorer answers instead.
struct EarlyTerms {
    ranked: Vec<String>,
    phrases: Vec<String>,
    excluded: Vec<String>,
}

impl EarlyTerms {
    fn new(conn: &rusqlite::Connection, terms: &Terms) -> Result<Option<EarlyTerms>, Error> {
        let mut probe = Probe::default();
        let mut map =
            |list: &mut dyn Iterator<Item = &String>| -> Result<Option<Vec<String>>, Error> {
                let mut out = Vec::new();
                let mut one = Vec::new();
                for t in list {
                    one.clear();
                    probe.tokens_into(conn, t, &mut one)?;
                    match one.as_slice() {
                        [t] => out.push(t.clone()),
                        _ => return Ok(None),
                    }
                }
                Ok(Some(out))
            };
        let Some(ranked) = map(&mut terms.ranked.iter())? else {
            return Ok(None);
        };
        let Some(phrases) = map(&mut terms.phrases.iter().flatten())? else {
            return Ok(None);
        };
        let Some(excluded) = map(&mut terms.excluded.iter())? else {
            return Ok(None);
        };
        Ok(Some(EarlyTerms {
            ranked,
            phrases,
            excluded,
        }))
    }

    fn query(&self) -> postings::LineQuery<'_> {
        postings::LineQuery {
            scored: self
                .ranked
                .iter()
                .chain(&self.phrases)
                .map(String::as_str)
                .collect(),
            any: &self.ranked,
            all: self.phrases.iter().map(String::as_str).collect(),
            none: &self.excluded,
            doc_scored: &self.ranked,
            weights: (W_BODY, W_SPEAKER),
        }
    }
}

/// The notes a filter-only query (`type:project`, no words) keeps, in path order, each shown by
/// the first line of its body.
fn filtered_notes(mut files: Vec<&FileRef>, req: &SearchRequest) -> SearchOutcome {
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let shown = files.into_iter().filter_map(|f| {
        let bytes = match &f.held {
            Some(h) => h.bytes.clone(),
            None => std::fs::read(&f.abs).ok()?,
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let note = Note::parse(&text);
        let (offset, line) = note
            .body
            .lines()
            .enumerate()
            .find(|(_, l)| !l.trim().is_empty())
            .map_or((0, ""), |(i, l)| (i, l));
        let line_no = u64::try_from(note.body_line + offset).unwrap_or(0);
        Some((
            f,
            line_no.max(1),
            super::grep::line_text(line.as_bytes()),
            0.0,
            None,
        ))
    });
    super::vector::finish(shown, req)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Corpus, EmbedderSlot};
    use memdir_store::store::Store;

    /// A small deterministic generator (xorshift), so every run checks the same cases.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// A few words in most lines (so the 1,000-line cut and its ties matter), rarer ones, stop
    /// words, and words FTS5's tokenizer splits or folds differently from ours.
    const COMMON: &[&str] = &["coffee", "meeting", "garden", "train", "paint", "river"];
    const RARE: &[&str] = &[
        "zeppelin", "quartz", "mandolin", "ocelot", "saffron", "tundra", "vellum", "wombat",
    ];
    const STOP: &[&str] = &["the", "and", "of", "to", "was"];
    const ODD: &[&str] = &[
        "café",
        "naïve",
        "straße",
        "İstanbul",
        "Ⓐbc",
        "x²",
        "ǅemal",
        "σοφός",
    ];
    const SPEAKERS: &[&str] = &["Caroline", "Melanie", "coffee", "Jon"];

    /// Writes a generated memory: dated logs of `- HH:MM [Dn:m] Speaker: words` lines (some
    /// blank, some only a marker), and notes, one of them a project.
    fn corpus(rng: &mut Rng, files: usize, lines: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for f in 0..files {
            let mut text = String::new();
            let path = if f % 5 == 4 {
                format!("notes/n{f}.md")
            } else {
                format!("log/2026-11-{:02}.md", f % 28 + 1)
            };
            if path.starts_with("notes/") {
                let kind = if f % 2 == 0 { "project" } else { "person" };
                text.push_str(&format!("---\ntype: {kind}\n---\n# Note {f}\n"));
            }
            for l in 0..lines {
                match rng.below(20) {
                    0 => text.push('\n'),
                    1 => text.push_str("- 10:00 [D1:1]\n"),
                    _ => {
                        let speaker = rng.pick(SPEAKERS);
                        text.push_str(&format!("- 10:{:02} [D{f}:{l}] {speaker}: ", l % 60));
                        for _ in 0..1 + rng.below(8) {
                            let w = match rng.below(10) {
                                0..=5 => rng.pick(COMMON),
                                6 => rng.pick(RARE),
                                7 | 8 => rng.pick(STOP),
                                _ => rng.pick(ODD),
                            };
                            text.push_str(w);
                            text.push(' ');
                        }
                        text.push('\n');
                    }
                }
            }
            out.push((path, text));
        }
        out.sort();
        out.dedup_by(|a, b| a.0 == b.0);
        out
    }

    fn query(rng: &mut Rng) -> SearchRequest {
        let words: Vec<&str> = COMMON.iter().chain(RARE).chain(ODD).copied().collect();
        let mut parts = Vec::new();
        for _ in 0..1 + rng.below(4) {
            parts.push(rng.pick(&words).to_string());
        }
        if rng.below(6) == 0 {
            parts.push(format!("\"{} {}\"", rng.pick(COMMON), rng.pick(COMMON)));
        }
        if rng.below(6) == 0 {
            parts.push(format!("-{}", rng.pick(COMMON)));
        }
        if rng.below(10) == 0 {
            parts.push("type:project".to_string());
        }
        if rng.below(12) == 0 {
            parts = vec![rng.pick(STOP).to_string()];
        }
        let mut req = SearchRequest::new(parts.join(" "));
        req.mode = crate::Mode::Ranked;
        req.limit = match rng.below(4) {
            0 => None,
            1 => Some(1 + rng.below(3)),
            2 => Some(10),
            _ => Some(50 + rng.below(1200)),
        };
        req.files = rng.below(5) == 0;
        if rng.below(4) == 0 {
            req.since = Some(jiff::civil::date(2026, 11, 1 + rng.below(20) as i8));
        }
        if rng.below(6) == 0 {
            req.until = Some(jiff::civil::date(2026, 11, 15 + rng.below(10) as i8));
        }
        if rng.below(6) == 0 {
            req.path_glob = Some(["log", "notes/**", "*.md"][rng.below(3)].to_string());
        }
        if rng.below(8) == 0 {
            req.max_bytes = Some(200);
        }
        req
    }

    /// Runs `req` with both scorers and checks they agree to the bit; returns the hit count.
    fn check(corpus: Corpus<'_>, req: &SearchRequest) -> usize {
        let embedder = EmbedderSlot::default();
        let searcher = Searcher {
            corpus,
            today: jiff::civil::date(2026, 11, 30),
            warm: None,
            embedder: &embedder,
            vectors: None,
        };
        let scope = Scope::new(req).unwrap();
        let run = |s| search_with(&searcher, &scope, req, s);
        match (run(Scorer::Full), run(Scorer::Early)) {
            (Ok(full), Ok(early)) => {
                let key = |o: &SearchOutcome| {
                    o.hits
                        .iter()
                        .map(|h| {
                            (
                                h.path.clone(),
                                h.line,
                                h.text.clone(),
                                h.score.map(f64::to_bits),
                            )
                        })
                        .collect::<Vec<_>>()
                };
                assert_eq!(key(&full), key(&early), "query {:?}", req.pattern);
                assert_eq!(full.omitted, early.omitted, "query {:?}", req.pattern);
                full.hits.len()
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string());
                0
            }
            (a, b) => panic!(
                "query {:?}: {:?} against {:?}",
                req.pattern,
                a.err(),
                b.err()
            ),
        }
    }

    #[test]
    fn early_scorer_gives_the_full_scorers_answers_on_a_folder() {
        for seed in [1u64, 7, 42] {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
            let dir = tempfile::tempdir().unwrap();
            // Enough lines that common words match well over 1,000 of them.
            for (path, text) in corpus(&mut rng, 40, 120) {
                let abs = dir.path().join(&path);
                std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
                std::fs::write(abs, text).unwrap();
            }
            let mut found = 0;
            for _ in 0..150 {
                found += check(Corpus::Folder(dir.path()), &query(&mut rng));
            }
            assert!(
                found > 1000,
                "the queries found too little to test: {found}"
            );
        }
    }

    #[test]
    fn early_scorer_gives_the_full_scorers_answers_on_a_store() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let store = memdir_store::InMemoryStore::new();
        for (path, text) in corpus(&mut rng, 12, 60) {
            let p = memdir_core::path::MemPath::parse(&path).unwrap();
            store.write(&p, text.as_bytes()).unwrap();
        }
        for _ in 0..60 {
            check(
                Corpus::Store {
                    store: memdir_store::store::Reader::of(&store),
                    cache: None,
                },
                &query(&mut rng),
            );
        }
    }

    #[test]
    fn files_are_found_by_id_in_path_order_or_out_of_it() {
        let held = |rel: &str| FileRef {
            rel: rel.to_string(),
            abs: std::path::PathBuf::new(),
            date: None,
            held: Some(std::sync::Arc::new(crate::walk::Held::new(
                format!("- {rel} coffee\n").into_bytes(),
            ))),
        };
        let paths = [
            "a.md",
            "b/c.md",
            "b/d.md",
            "b.md",
            "log/2026-11-02.md",
            "z.md",
        ];
        let mut index = Index::open(None).unwrap();
        let files: Vec<FileRef> = paths.iter().map(|p| held(p)).collect();
        index.sync(&files, &Tokenizer::new()).unwrap();
        let listed = index.files().unwrap();
        // What the search sees: the index's files and a new one, one left out by the scope.
        let mut all: Vec<FileRef> = paths.iter().map(|p| held(p)).collect();
        all.push(held("new.md"));
        all.sort_by(|a, b| a.rel.cmp(&b.rel));
        let keeps = |f: &FileRef| f.rel != "b/d.md";
        let found = |all: &[FileRef]| {
            let mut v: Vec<(String, u32)> = by_id(all, &listed, keeps)
                .values()
                .map(|s| (all[s.at as usize].rel.clone(), s.rank))
                .collect();
            v.sort();
            v
        };
        // Byte order: '.' comes before '/'.
        let want = |from: usize| -> Vec<(String, u32)> {
            [
                ("a.md", 0),
                ("b.md", 1),
                ("b/c.md", 2),
                ("log/2026-11-02.md", 4),
                ("z.md", 5),
            ]
            .into_iter()
            .skip(from)
            .map(|(p, r)| (p.to_string(), r))
            .collect()
        };
        // In order (the merge), out of order, and without one of the index's files (the map).
        assert_eq!(found(&all), want(0));
        all.reverse();
        assert_eq!(found(&all), want(0));
        all.reverse();
        all.remove(0);
        assert_eq!(found(&all), want(1));
    }

    #[test]
    fn early_scorer_follows_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log/2026-11-02.md");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(&log, "- coffee garden\n- coffee\n").unwrap();
        let mut req = SearchRequest::new("coffee garden");
        req.mode = crate::Mode::Ranked;
        assert_eq!(check(Corpus::Folder(dir.path()), &req), 2);
        // A different size, so the sync re-reads it at once.
        std::fs::write(
            &log,
            "- train\n\n- coffee river garden\n- coffee\n- garden\n",
        )
        .unwrap();
        assert_eq!(check(Corpus::Folder(dir.path()), &req), 3);
    }

    /// The lines a warm searcher's ranked search finds for `pattern`, as `path:line`.
    fn warm_hits(root: &std::path::Path, warm: &crate::Warm, pattern: &str) -> Vec<String> {
        let embedder = EmbedderSlot::default();
        let searcher = Searcher {
            corpus: Corpus::Folder(root),
            today: jiff::civil::date(2026, 11, 30),
            warm: Some(warm),
            embedder: &embedder,
            vectors: None,
        };
        let mut req = SearchRequest::new(pattern);
        req.mode = crate::Mode::Ranked;
        let scope = Scope::new(&req).unwrap();
        let mut hits: Vec<String> = search(&searcher, &scope, &req)
            .unwrap()
            .hits
            .iter()
            .map(|h| format!("{}:{}", h.path, h.line))
            .collect();
        hits.sort();
        hits
    }

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let abs = root.join(rel);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }

    #[test]
    fn a_kept_index_follows_another_process_rebuilding_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "- coffee one\n");
        write(root, "b.md", "- coffee two\n");
        let (ours, theirs) = (crate::Warm::default(), crate::Warm::default());
        let both = vec!["a.md:1".to_string(), "b.md:1".to_string()];
        assert_eq!(warm_hits(root, &ours, "coffee"), both);
        // A changed a.md is indexed again under a new id, after b.md's.
        write(root, "a.md", "- coffee three, longer\n");
        assert_eq!(warm_hits(root, &ours, "coffee"), both);
        // Another memory (another process) rebuilds the index: every file gets a new id, in
        // path order, and no file changed, so this memory's warm copy does not sync.
        let embedder = EmbedderSlot::default();
        let other = Searcher {
            corpus: Corpus::Folder(root),
            today: jiff::civil::date(2026, 11, 30),
            warm: Some(&theirs),
            embedder: &embedder,
            vectors: None,
        };
        assert_eq!(other.rebuild_keyword_index().unwrap(), 2);
        assert_eq!(warm_hits(root, &ours, "coffee"), both);
    }

    #[test]
    fn a_kept_index_deleted_under_it_is_opened_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "- coffee one\n");
        let warm = crate::Warm::default();
        assert_eq!(warm_hits(root, &warm, "coffee"), ["a.md:1"]);
        let index = super::super::keyword::index_path(root);
        std::fs::remove_file(&index).unwrap();
        let _ = std::fs::remove_file(index.with_extension("sqlite-wal"));
        assert_eq!(warm_hits(root, &warm, "coffee"), ["a.md:1"]);
        assert!(index.exists(), "the search made a new index file");
    }

    #[test]
    fn forgetting_closes_the_kept_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.md", "- coffee one\n");
        let warm = crate::Warm::default();
        assert_eq!(warm_hits(root, &warm, "coffee"), ["a.md:1"]);
        let embedder = EmbedderSlot::default();
        let searcher = Searcher {
            corpus: Corpus::Folder(root),
            today: jiff::civil::date(2026, 11, 30),
            warm: Some(&warm),
            embedder: &embedder,
            vectors: None,
        };
        searcher.forget_indexes(&["a.md".to_string()]).unwrap();
        // No descriptor of this process still points at a deleted index file (whose bytes
        // would stay on disk while it is open).
        let open_deleted = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|t| t.starts_with(root) && t.to_string_lossy().ends_with("(deleted)"))
            .count();
        assert_eq!(open_deleted, 0);
    }
}
