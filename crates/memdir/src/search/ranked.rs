//! Ranked mode: BM25 over lines, each line also credited with the BM25 score of its whole file
//! (for a daily log, its day), so a line in the conversation the question is about beats an
//! equally good line elsewhere.
//!
//! The speaker of a line (`Caroline:` in `- 13:56 [D1:3] Caroline: ...`) is indexed apart from
//! its body and weighs little: a name that starts half the lines says little about any of them.
//! A line also gets a share of the scores of the lines just before and after it, so an answer
//! that only makes sense after its question still ranks.

use super::index::{Index, db_err};
use super::walk::{FileRef, Scope};
use super::{Corpus, SearchOutcome, SearchRequest};
use crate::error::Error;
use crate::memory::Memory;
use memdir_core::note::{Meta, Note, is_note_path};
use memdir_core::query::{Query, contains_run};
use memdir_core::tokenize::{Tokenizer, split_line};
use rusqlite::params;
use std::collections::HashMap;

/// Weights of the `body` and `speaker` columns in a line's BM25.
const W_BODY: f64 = 1.0;
const W_SPEAKER: f64 = 0.2;

/// How much of its neighbours' line scores a line gets.
const W_NEAR: f64 = 0.3;

/// How much of the file's (the day's) score each line gets.
const W_DOC: f64 = 0.6;

/// Lines taken from the line index before file scores are added and the best are kept.
const CANDIDATES: usize = 1000;

/// Opens the index of `root` and brings it up to date; with `rebuild`, from scratch. A warm
/// memory skips the sync when no file changed since its last one (and the index still lists
/// every file: a deleted index is refilled).
pub(crate) fn fresh_index(
    mem: &Memory,
    corpus: Corpus<'_>,
    tok: &Tokenizer,
    rebuild: bool,
) -> Result<(Index, std::sync::Arc<Vec<FileRef>>), Error> {
    let (all, generation) = mem.corpus_files(corpus, &Scope::everything())?;
    let mut index = Index::open(corpus.cache_root())?;
    if rebuild {
        index.clear()?;
    }
    let warm = mem.warm.as_deref().zip(generation);
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
    if !is_note_path(&f.rel) {
        return None;
    }
    let bytes = match &f.held {
        Some(h) => std::borrow::Cow::Borrowed(h.bytes.as_slice()),
        None => std::borrow::Cow::Owned(std::fs::read(&f.abs).ok()?),
    };
    Some(Note::parse(&String::from_utf8_lossy(&bytes)).meta)
}

/// Runs a ranked search over a corpus.
pub(crate) fn search(
    mem: &Memory,
    corpus: Corpus<'_>,
    scope: &Scope,
    req: &SearchRequest,
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
    let (index, all) = fresh_index(mem, corpus, &tok, false)?;
    let conn = &index.conn;

    // Files in scope (and meeting the frontmatter filters), by id.
    let in_scope: HashMap<&str, &FileRef> = all
        .iter()
        .filter(|f| scope.keeps(&f.rel, f.date))
        .filter(|f| {
            query.filters.is_empty()
                || note_meta(f).is_some_and(|m| query.filters.iter().all(|q| q.keeps(&f.rel, &m)))
        })
        .map(|f| (f.rel.as_str(), f))
        .collect();
    if terms.ranked.is_empty() {
        return Ok(filtered_notes(in_scope.into_values().collect(), req));
    }
    let expr = or_of(&terms.ranked);
    let line_expr = terms.line_expr();
    let mut ids: HashMap<i64, &FileRef> = HashMap::new();
    {
        let mut st = conn.prepare("SELECT id, path FROM files").map_err(db_err)?;
        let rows = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(db_err)?;
        for row in rows {
            let (id, path) = row.map_err(db_err)?;
            if let Some(f) = in_scope.get(path.as_str()) {
                ids.insert(id, f);
            }
        }
    }
    let narrowed = ids.len() < all.len();
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

    let mut doc_score: HashMap<i64, f64> = HashMap::new();
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
        "SELECT file_id, line, text, bm25(lines, {W_BODY}, {W_SPEAKER}) AS s
         FROM lines WHERE lines MATCH ?1 {filter} ORDER BY s LIMIT ?2"
    );
    let mut st = conn.prepare(&sql).map_err(db_err)?;
    // One hit per file needs every matching line to count the files; otherwise the best
    // CANDIDATES lines by their own score are enough.
    let candidates = if req.files { -1 } else { CANDIDATES as i64 };
    let rows = st
        .query_map(params![line_expr, candidates], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, f64>(3)?,
            ))
        })
        .map_err(db_err)?;
    let mut cands = Vec::new();
    for row in rows {
        let (id, line, text, s) = row.map_err(db_err)?;
        if ids.contains_key(&id) && terms.phrases_in(&text, &tok) {
            cands.push((id, line, text, -s));
        }
    }
    let line_score: HashMap<(i64, i64), f64> = cands
        .iter()
        .map(|(id, line, _, s)| ((*id, *line), *s))
        .collect();
    let near = |id: i64, line: i64| {
        let at = |l: i64| line_score.get(&(id, l)).copied().unwrap_or(0.0);
        at(line - 1) + at(line + 1)
    };
    let mut scored = Vec::new();
    for (id, line, text, s) in cands {
        let Some(f) = ids.get(&id) else { continue };
        let score =
            s + W_NEAR * near(id, line) + W_DOC * doc_score.get(&id).copied().unwrap_or(0.0);
        scored.push((score, *f, line, text));
    }
    // Best first; ties in path and line order so output is stable.
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.rel.cmp(&b.1.rel))
            .then_with(|| a.2.cmp(&b.2))
    });
    let ranked = scored
        .into_iter()
        .map(|(score, f, line, text)| (f, u64::try_from(line).unwrap_or(0), text, score));
    Ok(super::vector::finish(ranked, req))
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
        ))
    });
    super::vector::finish(shown, req)
}
