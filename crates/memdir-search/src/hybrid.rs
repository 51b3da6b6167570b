//! Hybrid mode: keyword (ranked mode's BM25, with its day-level credit) and dense (cosine to the
//! query's embedding) scores of the same lines, merged.
//!
//! The default fusion puts both scores on one scale that does not depend on the model: each is
//! turned into a z-score (how many standard deviations above the mean of its kind it lies),
//! over every chunk in scope for the cosines and over every line in scope for the keyword score
//! (a line with no query word scores 0). A model whose cosines sit in a narrow band (e5-style,
//! 0.66-0.88) then separates lines as well as one whose cosines spread from 0 to 1, which
//! dividing by the best cosine did not give. Three kinds of context are added on the same scale:
//!
//! - the neighbours: a line gets a share of the better dense score of the chunks just before
//!   and after it, as ranked mode does for keywords, so an answer that only makes sense after
//!   its question still ranks;
//! - the day: a line gets a share of how well its file (for a daily log, its day) matches as a
//!   whole, the mean of its best three cosines compared across files;
//! - the dates the query names ("on 9 November, 2022", "in May 2023", "last week"): a line of a
//!   dated file inside those days, or within a week of them, gets a bonus.
//!
//! Two kinds of question get a prior on the lines that answer them, both the same bonus
//! whatever the model:
//!
//! - a question that names a speaker of the folder ("What did Caroline research?") credits
//!   that speaker's lines: in a log of conversations, what a person did is mostly in what
//!   they said;
//! - a question that asks when ("When did ...", "what year ...") credits lines that tell a
//!   time ("yesterday", "last week", "in May"), what such a question is answered by.
//!
//! A line found by meaning alone (no query word) is listed only if it is nearer to the query
//! than the average line (its score without the keyword part is above 0 on this scale, the
//! neighbours', day and date credits counted): every chunk has a cosine, so a small memory
//! would otherwise list every line it holds, down to the unrelated ones.
//!
//! Pseudo-relevance feedback (a second keyword pass for the terms of the first pass's best
//! lines, and Rocchio's update of the query vector towards theirs) was measured and did not help
//! on LoCoMo (BENCHMARKS.md); it is not kept.
//! Max-normalised fusion (the earlier default) and reciprocal rank fusion are kept for
//! comparison (see BENCHMARKS.md).

use super::walk::{FileRef, Scope};
use super::{SearchOutcome, SearchRequest, Why, ranked, vector};
use crate::Searcher;
use crate::error::Error;
use memdir_core::dates::{asks_when, names_time, query_days};
use memdir_core::tokenize::{split_line, words};
use std::collections::HashMap;

/// Keyword results taken before fusion.
const KEYWORD_CANDIDATES: usize = 300;
/// Dense results taken before fusion.
const DENSE_CANDIDATES: usize = 300;
/// The rank offset of reciprocal rank fusion.
const RRF_K: f64 = 60.0;
/// How many of a file's best cosines make its day score.
const DAY_TOP: usize = 3;

/// How keyword and dense results are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fusion {
    /// A weighted sum of z-scores: scale-free, the default.
    #[default]
    ZScore,
    /// A weighted sum of scores divided by the best of their kind (the earlier default).
    Max,
    /// Reciprocal rank fusion, `1/(60 + rank)` summed over both lists (no context credits).
    Rrf,
}

/// How hybrid search weighs its parts; [`HybridOptions::default`] is what `--mode hybrid`
/// runs. The weights are in units of the fusion's scale (standard deviations for
/// [`Fusion::ZScore`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridOptions {
    /// How the two lists are merged.
    pub fusion: Fusion,
    /// The weight of the dense score; the keyword score gets the rest.
    pub w_dense: f64,
    /// The share of the better neighbouring chunk's dense score a line gets.
    pub w_near: f64,
    /// The weight of the line's file (day) score.
    pub w_day: f64,
    /// The bonus of a line on a day the query names.
    pub w_date: f64,
    /// The bonus of a line whose speaker the query names ("What did Caroline research?").
    pub w_speaker: f64,
    /// The bonus of a line that tells a time ("yesterday", "last week") when the query asks
    /// when.
    pub w_when: f64,
    /// Leave out lines found by meaning alone that are no nearer to the query than the average
    /// line ([`Fusion::ZScore`] only; the other fusions have no average).
    pub floor: bool,
}

impl Default for HybridOptions {
    fn default() -> Self {
        // The dense weight and the neighbour share were set before any run (as ranked mode's
        // 0.3 for neighbours); the day and date weights are round values from a coarse sweep
        // on the LoCoMo dev split where a range of values gives about the same result. The
        // speaker and "when" bonuses are one standard deviation each (0.5 to 2 all help on
        // both models there).
        HybridOptions {
            fusion: Fusion::ZScore,
            w_dense: 0.5,
            w_near: 0.3,
            w_day: 0.1,
            w_date: 2.0,
            w_speaker: 1.0,
            w_when: 1.0,
            floor: true,
        }
    }
}

impl HybridOptions {
    /// Plain fusion of the two lists, no neighbour, day or date credit.
    pub fn plain(fusion: Fusion) -> Self {
        HybridOptions {
            fusion,
            w_near: 0.0,
            w_day: 0.0,
            w_date: 0.0,
            w_speaker: 0.0,
            w_when: 0.0,
            ..HybridOptions::default()
        }
    }
}

/// One line under consideration.
#[derive(Default)]
struct Cand {
    keyword: Option<(usize, f64)>,
    /// The rank in the dense list of the chunk holding the line.
    dense: Option<usize>,
    text: String,
}

/// Mean and standard deviation of `n` values given by their sum and sum of squares (values not
/// listed count as 0); a flat list gets a deviation of 1 so nothing is divided by zero.
fn moments(sum: f64, sum_sq: f64, n: usize) -> (f64, f64) {
    let n = n.max(1) as f64;
    let mean = sum / n;
    let var = (sum_sq / n - mean * mean).max(0.0);
    let sd = var.sqrt();
    (mean, if sd > 1e-12 { sd } else { 1.0 })
}

/// Puts raw scores on the fusion's scale.
struct Scale {
    fusion: Fusion,
    /// `(mean, deviation)` for z-scores, `(0, best)` for max-normalisation.
    keyword: (f64, f64),
    dense: (f64, f64),
}

impl Scale {
    fn new(fusion: Fusion, keyword: &[f64], dense: &[f64], population: usize) -> Scale {
        match fusion {
            Fusion::ZScore => {
                let s =
                    |v: &[f64], n: usize| moments(v.iter().sum(), v.iter().map(|x| x * x).sum(), n);
                Scale {
                    fusion,
                    keyword: s(keyword, population.max(keyword.len())),
                    dense: s(dense, dense.len()),
                }
            }
            Fusion::Max | Fusion::Rrf => {
                let best = |v: &[f64]| v.iter().copied().fold(f64::MIN_POSITIVE, f64::max);
                Scale {
                    fusion,
                    keyword: (0.0, best(keyword)),
                    dense: (0.0, best(dense)),
                }
            }
        }
    }

    fn keyword(&self, s: Option<f64>) -> f64 {
        let s = s.unwrap_or(0.0);
        match self.fusion {
            Fusion::ZScore => (s - self.keyword.0) / self.keyword.1,
            _ => (s / self.keyword.1).max(0.0),
        }
    }

    fn dense(&self, s: Option<f64>) -> f64 {
        match (self.fusion, s) {
            (Fusion::ZScore, Some(s)) => (s - self.dense.0) / self.dense.1,
            // A chunk with no vector counts as an average one.
            (Fusion::ZScore, None) => 0.0,
            (_, s) => (s.unwrap_or(0.0) / self.dense.1).max(0.0),
        }
    }
}

pub(crate) fn search(
    searcher: &Searcher<'_>,
    scope: &Scope,
    req: &SearchRequest,
    options: &HybridOptions,
    progress: vector::Progress<'_>,
) -> Result<SearchOutcome, Error> {
    let (all, generation) = searcher.corpus_files(&Scope::everything())?;
    let by_path: HashMap<&str, &FileRef> = all.iter().map(|f| (f.rel.as_str(), f)).collect();
    let mut kw_req = req.clone();
    kw_req.limit = Some(KEYWORD_CANDIDATES);
    kw_req.max_bytes = None;
    // Lines are fused first; grouping by file (if asked) happens on the fused list.
    kw_req.files = false;
    // The keyword search runs on another core while the model loads and embeds the query (and
    // the vector index catches up), the slow half.
    let (dense, keyword) = std::thread::scope(|s| {
        let keyword = s.spawn(|| ranked::search(searcher, scope, &kw_req));
        let dense =
            vector::dense_scores(searcher, (&all, generation), scope, &req.pattern, progress);
        let keyword = keyword
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (dense, keyword)
    });
    let dense = dense?;
    let keyword = keyword?.hits;

    // Chunk starts per file, in line order, with their dense rank: to give a keyword line inside
    // a note section its chunk's score, and to find a chunk's neighbours.
    let mut chunk_of: HashMap<&str, Vec<(u64, usize)>> = HashMap::new();
    for (rank, (f, line, _, _)) in dense.iter().enumerate() {
        chunk_of
            .entry(f.rel.as_str())
            .or_default()
            .push((*line, rank));
    }
    chunk_of.values_mut().for_each(|v| v.sort_unstable());
    // The index of each dense rank in its file's chunk list.
    let mut place = vec![0usize; dense.len()];
    for starts in chunk_of.values() {
        for (i, (_, rank)) in starts.iter().enumerate() {
            place[*rank] = i;
        }
    }

    let mut cands: HashMap<(&str, u64), Cand> = HashMap::new();
    for (rank, (f, line, text, _)) in dense.iter().enumerate().take(DENSE_CANDIDATES) {
        let c = cands.entry((f.rel.as_str(), *line)).or_default();
        c.dense = Some(rank);
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
                c.dense = Some(starts[i - 1].1);
            }
        }
    }

    let kw_scores: Vec<f64> = keyword.iter().filter_map(|h| h.score).collect();
    let cosines: Vec<f64> = dense.iter().map(|d| f64::from(d.3)).collect();
    // Every chunk in scope is scored, so the dense list is also the count of places a keyword
    // line could be; lines without a query word score 0 there.
    let scale = Scale::new(options.fusion, &kw_scores, &cosines, dense.len());
    let dense_at = |rank: usize| scale.dense(cosines.get(rank).copied());
    let near = |rank: usize| {
        let f = dense[rank].0.rel.as_str();
        let starts = &chunk_of[f];
        let i = place[rank];
        let before = i.checked_sub(1).map(|j| dense_at(starts[j].1));
        let after = starts.get(i + 1).map(|s| dense_at(s.1));
        before.into_iter().chain(after).reduce(f64::max)
    };
    let day = day_scores(&dense, &chunk_of);
    let days = (options.w_date != 0.0)
        .then(|| query_days(&req.pattern, searcher.today))
        .flatten();
    let when = options.w_when != 0.0 && asks_when(&req.pattern);
    let speakers = if options.w_speaker != 0.0 {
        named_speakers(&req.pattern, cands.values().map(|c| c.text.as_str()))
    } else {
        Vec::new()
    };

    let mut scored: Vec<vector::Ranked<'_>> = cands
        .into_iter()
        .filter_map(|((path, line), c)| {
            let f = by_path.get(path)?;
            let (score, why) = match options.fusion {
                Fusion::Rrf => {
                    let rr = |r: Option<usize>| r.map_or(0.0, |r| 1.0 / (RRF_K + r as f64 + 1.0));
                    (rr(c.dense) + rr(c.keyword.map(|k| k.0)), None)
                }
                Fusion::ZScore | Fusion::Max => {
                    let w = options.w_dense;
                    let d = c.dense.map_or_else(|| scale.dense(None), dense_at);
                    // Everything but the keyword part first: what the floor compares. The
                    // parts are summed in the order the score always was, so it is the same
                    // to the bit.
                    let mut why = Why {
                        meaning: w * d,
                        ..Why::default()
                    };
                    let mut s = why.meaning;
                    if options.w_near != 0.0
                        && let Some(n) = c.dense.and_then(near)
                    {
                        why.neighbour = options.w_near * w * n;
                        s += why.neighbour;
                    }
                    why.day = options.w_day * day.get(path).copied().unwrap_or(0.0);
                    s += why.day;
                    if let (Some(days), Some(date)) = (days, f.date) {
                        let bonus = options.w_date * days.closeness(date);
                        why.hint += bonus;
                        s += bonus;
                    }
                    if when && names_time(split_line(&c.text).body) {
                        why.hint += options.w_when;
                        s += options.w_when;
                    }
                    if !speakers.is_empty() && speakers.contains(&speaker_key(&c.text)) {
                        why.hint += options.w_speaker;
                        s += options.w_speaker;
                    }
                    // A line found by meaning alone is a result only if it is nearer to the
                    // query than the average line, its neighbours' and the day's credit
                    // counted: every chunk has a cosine, so without this floor a small memory
                    // lists every line it holds. A line with a query word stays, as in ranked
                    // mode.
                    if options.floor
                        && options.fusion == Fusion::ZScore
                        && c.keyword.is_none()
                        && s < 0.0
                    {
                        return None;
                    }
                    why.keyword = (1.0 - w) * scale.keyword(c.keyword.map(|k| k.1));
                    (s + why.keyword, Some(why))
                }
            };
            Some((*f, line, c.text, score, why))
        })
        .collect();
    // A superseded note ranks below its successor (the keyword half was demoted already; the
    // fused score is demoted again, so meaning alone cannot lift it back).
    crate::current::demote(&mut scored, &all, |t| (t.0, &mut t.3, t.4.as_mut()));
    scored.sort_by(|a, b| {
        b.3.total_cmp(&a.3)
            .then_with(|| a.0.rel.cmp(&b.0.rel))
            .then(a.1.cmp(&b.1))
    });
    Ok(vector::finish(scored.into_iter(), req))
}

/// How a speaker is matched: the first word of the line's speaker, lowercased.
fn speaker_key(line: &str) -> String {
    words(split_line(line).speaker).next().unwrap_or_default()
}

/// The speakers of the given lines the query names by their first name, lowercased.
fn named_speakers<'t>(query: &str, lines: impl Iterator<Item = &'t str>) -> Vec<String> {
    let asked: std::collections::HashSet<String> = words(query).collect();
    let mut named: Vec<String> = lines
        .map(speaker_key)
        .filter(|k| !k.is_empty() && asked.contains(k))
        .collect();
    named.sort_unstable();
    named.dedup();
    named
}

/// Each file's match as a whole: the mean of its best [`DAY_TOP`] cosines, as a z-score across
/// the files in scope (so it is on the same scale whatever the model). Max fusion uses it as
/// it is: a file score has no natural best to divide by.
fn day_scores<'p>(
    dense: &[(&FileRef, u64, String, f32)],
    chunk_of: &HashMap<&'p str, Vec<(u64, usize)>>,
) -> HashMap<&'p str, f64> {
    let mut raw: HashMap<&'p str, f64> = chunk_of
        .iter()
        .map(|(path, starts)| {
            let mut best: Vec<f64> = starts.iter().map(|s| f64::from(dense[s.1].3)).collect();
            best.sort_by(|a, b| b.total_cmp(a));
            best.truncate(DAY_TOP);
            (*path, best.iter().sum::<f64>() / best.len().max(1) as f64)
        })
        .collect();
    let (mean, sd) = moments(
        raw.values().sum(),
        raw.values().map(|x| x * x).sum(),
        raw.len(),
    );
    raw.values_mut().for_each(|v| *v = (*v - mean) / sd);
    raw
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Corpus, EmbedderSlot, Mode};
    use memdir_embed::{EmbedError, Embedder};
    use std::sync::Arc;

    /// A bag of hashed words in 16 dimensions, plus a component shared by every text of weight
    /// `common`: with a large one every cosine sits in a narrow band near 1, as e5-style models'
    /// do, while the order of cosines stays the same.
    struct Words {
        common: f32,
    }

    impl Embedder for Words {
        fn model_id(&self) -> &str {
            "words"
        }
        fn dimensions(&self) -> usize {
            17
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; 17];
                    for w in t
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| w.len() > 2)
                    {
                        let h = w
                            .to_lowercase()
                            .bytes()
                            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
                        v[1 + (h % 16) as usize] += 1.0;
                    }
                    memdir_embed::normalize(&mut v[1..]);
                    v[0] = self.common;
                    memdir_embed::normalize(&mut v);
                    v
                })
                .collect())
        }
    }

    /// A folder of daily logs and the embedder its searches use.
    struct Mem {
        dir: tempfile::TempDir,
        embedder: EmbedderSlot,
    }

    fn memory(logs: &[(&str, &str)], common: f32) -> Mem {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("log")).unwrap();
        for (date, text) in logs {
            std::fs::write(dir.path().join(format!("log/{date}.md")), text).unwrap();
        }
        let embedder = EmbedderSlot::preset(Arc::new(Words { common }));
        Mem { dir, embedder }
    }

    fn order(mem: &Mem, query: &str, options: &HybridOptions) -> Vec<(String, u64)> {
        let mut req = SearchRequest::new(query);
        req.mode = Mode::Hybrid;
        req.limit = Some(20);
        let searcher = Searcher {
            corpus: Corpus::Folder(mem.dir.path()),
            today: jiff::civil::date(2026, 12, 2),
            warm: None,
            embedder: &mem.embedder,
            vectors: None,
        };
        searcher
            .search_hybrid(&req, options)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| (h.path, h.line))
            .collect()
    }

    const DAY: &str = "\
- 09:00 paint the garden fence blue before the weekend
- 09:05 the fence posts need new paint and screws
- 09:10 blue paint ran out at the hardware store
- 09:15 weekend plans: garden party with neighbours
- 09:20 garden hose leaks near the fence
- 09:25 bought screws, nails and a hammer
- 09:30 neighbours asked about the party music
";

    #[test]
    fn z_score_fusion_ranks_the_same_whatever_the_cosine_band() {
        let wide = memory(&[("2026-11-30", DAY)], 0.0);
        let narrow = memory(&[("2026-11-30", DAY)], 3.0);
        let z = HybridOptions::default();
        for q in [
            "blue fence paint",
            "garden party weekend",
            "screws for the fence",
        ] {
            assert_eq!(order(&wide, q, &z), order(&narrow, q, &z), "{q}");
        }
        // Dividing by the best cosine is what a narrow band defeats.
        let max = HybridOptions::plain(Fusion::Max);
        let differs = [
            "blue fence paint",
            "garden party weekend",
            "screws for the fence",
        ]
        .iter()
        .any(|q| order(&wide, q, &max) != order(&narrow, q, &max));
        assert!(differs);
    }

    #[test]
    fn a_date_in_the_query_prefers_that_day() {
        let line = "- 10:00 we picked the green paint for the kitchen\n";
        let mem = memory(&[("2026-03-03", line), ("2026-05-05", line)], 0.0);
        let opts = HybridOptions::default();
        let first = |q: &str| order(&mem, q, &opts)[0].0.clone();
        assert_eq!(
            first("which paint did we pick on 5 May, 2026?"),
            "log/2026-05-05.md"
        );
        assert_eq!(
            first("which paint did we pick in March 2026?"),
            "log/2026-03-03.md"
        );
        // Without a date the tie goes to path order.
        assert_eq!(first("which paint did we pick?"), "log/2026-03-03.md");
        let no_dates = HybridOptions {
            w_date: 0.0,
            ..opts
        };
        assert_eq!(
            order(&mem, "which paint did we pick on 5 May, 2026?", &no_dates)[0].0,
            "log/2026-03-03.md"
        );
    }

    #[test]
    fn a_line_gets_credit_from_its_neighbours() {
        // The answer line shares no word with the question; the question line before it does.
        let day = "\
- 10:00 what colour should the kitchen walls be
- 10:01 sage, like the old house
- 10:02 the dog needs a walk
- 10:03 the car needs new tyres
- 10:04 sage is also nice in soup
";
        let mem = memory(&[("2026-11-30", day)], 0.0);
        let rank = |o: &HybridOptions| {
            order(&mem, "kitchen walls colour", o)
                .iter()
                .position(|(_, l)| *l == 2)
                .unwrap()
        };
        // The floor is off: in five lines the answer is below the average by meaning, and
        // this test is about its rank, not whether it is listed.
        let with = HybridOptions {
            floor: false,
            ..HybridOptions::default()
        };
        let plain = HybridOptions {
            w_near: 0.0,
            ..with
        };
        assert!(rank(&with) < rank(&plain));
    }

    #[test]
    fn a_line_found_by_meaning_alone_must_beat_the_average() {
        let mem = memory(&[("2026-11-30", DAY)], 0.0);
        let lines = |o: &HybridOptions| -> Vec<u64> {
            let mut l: Vec<u64> = order(&mem, "blue fence paint", o)
                .into_iter()
                .map(|(_, l)| l)
                .collect();
            l.sort_unstable();
            l
        };
        // Lines 4, 6 and 7 share no word with the query and are no nearer to it by meaning.
        assert_eq!(lines(&HybridOptions::plain(Fusion::ZScore)), [1, 2, 3, 5]);
        // Without the floor, or with max-normalised fusion (no average to beat), every line is
        // listed.
        let no_floor = HybridOptions {
            floor: false,
            ..HybridOptions::plain(Fusion::ZScore)
        };
        assert_eq!(lines(&no_floor).len(), 7);
        assert_eq!(lines(&HybridOptions::plain(Fusion::Max)).len(), 7);
    }

    /// The line number of `needle` in the hybrid order of `query`.
    fn rank_of(mem: &Mem, query: &str, options: &HybridOptions, needle: u64) -> usize {
        order(mem, query, options)
            .iter()
            .position(|(_, l)| *l == needle)
            .unwrap()
    }

    /// Lines about other things, so that the words of a test's lines are rare enough to
    /// count (in a folder of two lines every word is in half of them and weighs nothing).
    const FILLER: &str = "\
- 11:00 Al: the dog needs a walk
- 11:01 Bo: the car needs new tyres
- 11:02 Al: tickets for the concert
- 11:03 Bo: the printer is out of toner
- 11:04 Al: call the plumber about the tap
- 11:05 Bo: the cat sleeps all day
";

    #[test]
    fn a_named_speaker_prefers_their_lines() {
        // Two-letter names, which the toy embedder does not see: only the speaker bonus
        // can tell the lines apart by who said them.
        let day = "\
- 10:00 Al: the new bike has a red frame, a red bike frame
- 10:01 Bo: the new bike has a red frame
";
        let day = format!("{day}{FILLER}");
        let mem = memory(&[("2026-11-30", &day)], 0.0);
        let q = "What colour is Bo's new bike frame?";
        let speaker = HybridOptions::default();
        let without = HybridOptions {
            w_speaker: 0.0,
            ..speaker
        };
        assert_eq!(rank_of(&mem, q, &without, 1), 0);
        assert_eq!(rank_of(&mem, q, &speaker, 2), 0);
        // A query that names no speaker changes nothing.
        let q = "What colour is the new bike frame?";
        assert_eq!(rank_of(&mem, q, &speaker, 1), 0);
    }

    #[test]
    fn a_when_question_prefers_lines_that_tell_a_time() {
        let day = "\
- 10:00 Ann: we painted the fence, the whole fence, a fine fence
- 10:05 Ann: we painted the fence last week
";
        let day = format!("{day}{FILLER}");
        let mem = memory(&[("2026-11-30", &day)], 0.0);
        let when = HybridOptions::default();
        let without = HybridOptions {
            w_when: 0.0,
            ..when
        };
        let q = "When did Ann paint the fence?";
        assert_eq!(rank_of(&mem, q, &without, 1), 0);
        assert_eq!(rank_of(&mem, q, &when, 2), 0);
        // A question that does not ask when keeps the better keyword match first.
        assert_eq!(rank_of(&mem, "Did Ann paint the fence?", &when, 1), 0);
    }

    #[test]
    fn moments_of_a_flat_list_do_not_divide_by_zero() {
        assert_eq!(moments(3.0, 3.0, 3), (1.0, 1.0));
        let (m, sd) = moments(2.0, 4.0, 2);
        assert!((m - 1.0).abs() < 1e-12 && (sd - 1.0).abs() < 1e-12);
    }
}
