//! Hybrid mode: keyword (ranked mode's BM25, with its day-level credit) and dense (cosine to the
//! query's embedding) scores of the same lines, merged.
//!
//! The default fusion is a weighted sum of the two scores, each divided by its best value in
//! this search, so both lie in `[0, 1]`. Reciprocal rank fusion is kept for comparison: on
//! LoCoMo it throws away how far apart scores are and does worse (see BENCHMARKS.md).

use super::walk::{FileRef, Scope};
use super::{SearchOutcome, SearchRequest, ranked, vector};
use crate::error::Error;
use crate::memory::Memory;
use std::collections::HashMap;

/// Keyword results taken before fusion.
const KEYWORD_CANDIDATES: usize = 300;
/// Dense results taken before fusion.
const DENSE_CANDIDATES: usize = 300;
/// The weight of the dense score in the weighted sum (the keyword score gets the rest).
const W_DENSE: f64 = 0.5;
/// The rank offset of reciprocal rank fusion.
const RRF_K: f64 = 60.0;

/// How keyword and dense results are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fusion {
    /// A weighted sum of max-normalised scores (the default).
    #[default]
    Weighted,
    /// Reciprocal rank fusion, `1/(60 + rank)` summed over both lists.
    Rrf,
}

impl Memory {
    /// A hybrid search with the given fusion (`search` with `Mode::Hybrid` uses
    /// [`Fusion::Weighted`]); for benchmarks that compare fusions.
    pub fn search_hybrid(
        &self,
        req: &SearchRequest,
        fusion: Fusion,
    ) -> Result<SearchOutcome, Error> {
        let scope = Scope::new(req)?;
        search(self, self.corpus(), &scope, req, fusion)
    }
}

/// One line under consideration.
#[derive(Default)]
struct Cand {
    keyword: Option<(usize, f64)>,
    dense: Option<(usize, f64)>,
    text: String,
}

pub(crate) fn search(
    mem: &Memory,
    corpus: super::Corpus<'_>,
    scope: &Scope,
    req: &SearchRequest,
    fusion: Fusion,
) -> Result<SearchOutcome, Error> {
    let (all, generation) = mem.corpus_files(corpus, &Scope::everything())?;
    let by_path: HashMap<&str, &FileRef> = all.iter().map(|f| (f.rel.as_str(), f)).collect();
    let mut kw_req = req.clone();
    kw_req.limit = Some(KEYWORD_CANDIDATES);
    kw_req.max_bytes = None;
    // Lines are fused first; grouping by file (if asked) happens on the fused list.
    kw_req.files = false;
    // The keyword search runs on another core while the query goes through the encoder, the
    // slow half.
    let (dense, keyword) = std::thread::scope(|s| {
        let keyword = s.spawn(|| ranked::search(mem, corpus, scope, &kw_req));
        let dense = vector::dense_scores(mem, corpus, (&all, generation), scope, &req.pattern);
        let keyword = keyword
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (dense, keyword)
    });
    let mut dense = dense?;
    let keyword = keyword?.hits;
    dense.sort_by(|a, b| {
        b.3.total_cmp(&a.3)
            .then_with(|| a.0.rel.cmp(&b.0.rel))
            .then(a.1.cmp(&b.1))
    });

    // Chunk starts per file, to give a keyword line inside a note section its chunk's score.
    let mut chunk_of: HashMap<&str, Vec<(u64, usize)>> = HashMap::new();
    for (rank, (f, line, _, _)) in dense.iter().enumerate() {
        chunk_of
            .entry(f.rel.as_str())
            .or_default()
            .push((*line, rank));
    }
    chunk_of.values_mut().for_each(|v| v.sort_unstable());

    let mut cands: HashMap<(&str, u64), Cand> = HashMap::new();
    for (rank, (f, line, text, _)) in dense.iter().enumerate().take(DENSE_CANDIDATES) {
        let c = cands.entry((f.rel.as_str(), *line)).or_default();
        c.dense = Some((rank, f64::from(dense[rank].3)));
        c.text.clone_from(text);
    }
    for (rank, hit) in keyword.iter().enumerate() {
        let Some(f) = by_path.get(hit.path.as_str()) else {
            continue;
        };
        let c = cands.entry((f.rel.as_str(), hit.line)).or_default();
        c.keyword = Some((rank, hit.score.unwrap_or(0.0)));
        c.text.clone_from(&hit.text);
        if c.dense.is_none()
            && let Some(starts) = chunk_of.get(f.rel.as_str())
        {
            let i = starts.partition_point(|(l, _)| *l <= hit.line);
            if i > 0 {
                let r = starts[i - 1].1;
                c.dense = Some((r, f64::from(dense[r].3)));
            }
        }
    }

    let max_dense = dense
        .first()
        .map_or(0.0, |d| f64::from(d.3))
        .max(f64::MIN_POSITIVE);
    let max_kw = keyword
        .iter()
        .filter_map(|h| h.score)
        .fold(f64::MIN_POSITIVE, f64::max);
    let mut scored: Vec<(&FileRef, u64, String, f64)> = cands
        .into_iter()
        .filter_map(|((path, line), c)| {
            let f = by_path.get(path)?;
            let score = match fusion {
                Fusion::Weighted => {
                    let d = c.dense.map_or(0.0, |(_, s)| (s / max_dense).max(0.0));
                    let k = c.keyword.map_or(0.0, |(_, s)| (s / max_kw).max(0.0));
                    W_DENSE * d + (1.0 - W_DENSE) * k
                }
                Fusion::Rrf => {
                    let rr = |x: Option<(usize, f64)>| {
                        x.map_or(0.0, |(r, _)| 1.0 / (RRF_K + r as f64 + 1.0))
                    };
                    rr(c.dense) + rr(c.keyword)
                }
            };
            Some((*f, line, c.text, score))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.3.total_cmp(&a.3)
            .then_with(|| a.0.rel.cmp(&b.0.rel))
            .then(a.1.cmp(&b.1))
    });
    Ok(vector::finish(scored.into_iter(), req))
}
