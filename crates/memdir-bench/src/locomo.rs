//! LoCoMo retrieval benchmark, per `shared/data/locomo/README.md`: each conversation becomes a
//! memory folder of daily logs, each question goes as raw text through [`Memory::search`] (the
//! code the CLI and MCP use), and a returned line is a hit when it holds an evidence id.

use anyhow::{Context as _, bail};
use memdir::search::{Mode, SearchRequest};
use memdir::{Clock, Memory};
use memdir_core::tokenize::Tokenizer;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Options of `memdir-bench locomo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The LoCoMo JSON [default: ../shared/data/locomo/locomo-dev.json from the repository].
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// Result lines per question.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Only these methods (grep, grep-or, ranked, semantic, hybrid, hybrid-rrf), comma-separated.
    /// `hybrid:KEY=V/KEY=V` is a hybrid variant: `fusion=z|max|rrf`, `dense=W`, `near=W`,
    /// `day=W`, `date=W`, `speaker=W`, `when=W`, `floor=on|off` (unset keys keep the shipped
    /// defaults).
    #[arg(long, value_delimiter = ',', default_value = "grep,grep-or,ranked")]
    pub methods: Vec<String>,
    /// Keep the generated memory folders here instead of a temp dir.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// The local embedding model for the semantic, hybrid and hybrid-rrf methods (a BERT encoder
    /// or a Model2Vec static model, by its config.json).
    #[arg(long, value_name = "DIR", env = "MEMDIR_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Write every question's keyword and dense candidate lists (line id and score) to this
    /// JSON-lines file, for studying fusion offline.
    #[arg(long, value_name = "PATH")]
    pub dump: Option<PathBuf>,
}

/// Methods that need the vector index.
fn is_vector(method: &str) -> bool {
    matches!(method, "semantic" | "hybrid" | "hybrid-rrf") || method.starts_with("hybrid:")
}

/// The hybrid options a method names, `None` for a method that is not a hybrid variant.
fn hybrid_options(method: &str) -> anyhow::Result<Option<memdir::search::HybridOptions>> {
    use memdir::search::{Fusion, HybridOptions};
    if method == "hybrid-rrf" {
        return Ok(Some(HybridOptions::plain(Fusion::Rrf)));
    }
    let Some(spec) = method.strip_prefix("hybrid:") else {
        return Ok(None);
    };
    let mut o = HybridOptions::default();
    for kv in spec.split('/').filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("hybrid variant {kv:?}: use KEY=VALUE"))?;
        let num = || {
            v.parse::<f64>()
                .with_context(|| format!("hybrid variant {kv:?}: not a number"))
        };
        match k {
            "fusion" => {
                o.fusion = match v {
                    "z" => Fusion::ZScore,
                    "max" => Fusion::Max,
                    "rrf" => Fusion::Rrf,
                    _ => bail!("hybrid variant {kv:?}: fusion is z, max or rrf"),
                }
            }
            "dense" => o.w_dense = num()?,
            "near" => o.w_near = num()?,
            "day" => o.w_day = num()?,
            "date" => o.w_date = num()?,
            "speaker" => o.w_speaker = num()?,
            "when" => o.w_when = num()?,
            "floor" => {
                o.floor = match v {
                    "on" => true,
                    "off" => false,
                    _ => bail!("hybrid variant {kv:?}: floor is on or off"),
                }
            }
            _ => bail!(
                "hybrid variant {kv:?}: keys are fusion, dense, near, day, date, speaker, when, floor"
            ),
        }
    }
    Ok(Some(o))
}

pub(crate) fn default_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/locomo/locomo-dev.json")
}

pub(crate) struct Question {
    pub(crate) text: String,
    pub(crate) category: u64,
    pub(crate) evidence: HashSet<String>,
}

/// `"D8:6; D9:17"`, `"D:11:26"`, `"D30:05"` -> `D8:6`, `D9:17`, `D11:26`, `D30:5`.
fn evidence_ids(raw: &str) -> Vec<String> {
    raw.split(';')
        .filter_map(|p| {
            let p: String = p.chars().filter(|c| !c.is_whitespace()).collect();
            let p = p.strip_prefix('D')?;
            let p = p.strip_prefix(':').unwrap_or(p);
            let (s, t) = p.split_once(':')?;
            let (s, t) = (s.parse::<u32>().ok()?, t.parse::<u32>().ok()?);
            Some(format!("D{s}:{t}"))
        })
        .collect()
}

/// The `[D1:3]` id in a log line.
fn line_id(text: &str) -> Option<&str> {
    let start = text.find("[D")?;
    let end = text[start..].find(']')?;
    Some(&text[start + 1..start + end])
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Writes one conversation as daily logs under `root`, returns its questions.
pub(crate) fn build_folder(conv: &Value, root: &Path) -> anyhow::Result<Vec<Question>> {
    let c = &conv["conversation"];
    let clock = Clock::fixed("2030-01-01T00:00:00Z".parse()?, jiff::tz::TimeZone::UTC);
    Memory::init(root, clock)?;
    let obj = c.as_object().context("conversation is not an object")?;
    for n in 1.. {
        let Some(when) = obj.get(&format!("session_{n}_date_time")) else {
            break;
        };
        let Some(turns) = obj.get(&format!("session_{n}")).and_then(Value::as_array) else {
            continue;
        };
        let when = when.as_str().context("session date is not text")?;
        let dt = jiff::civil::DateTime::strptime("%I:%M %p on %d %B, %Y", when.trim())
            .with_context(|| format!("bad session date {when:?}"))?;
        let mut text = String::new();
        for t in turns {
            let id = t["dia_id"].as_str().unwrap_or_default();
            let speaker = t["speaker"].as_str().unwrap_or_default();
            let said = one_line(t["text"].as_str().unwrap_or_default());
            text.push_str(&format!(
                "- {} [{id}] {speaker}: {said}",
                dt.strftime("%H:%M")
            ));
            if let Some(cap) = t.get("blip_caption").and_then(Value::as_str) {
                text.push_str(&format!(" [image: {}]", one_line(cap)));
            }
            text.push('\n');
        }
        let path = root.join(memdir_core::log::log_path(dt.date()));
        if path.exists() {
            bail!(
                "two sessions on {}: the protocol expects one per day",
                dt.date()
            );
        }
        std::fs::write(path, text)?;
    }
    let mut qs = Vec::new();
    for q in conv["qa"].as_array().context("qa is not a list")? {
        let evidence: HashSet<String> = q["evidence"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .flat_map(evidence_ids)
            .collect();
        if evidence.is_empty() {
            continue;
        }
        qs.push(Question {
            text: q["question"].as_str().unwrap_or_default().to_string(),
            category: q["category"].as_u64().unwrap_or(0),
            evidence,
        });
    }
    Ok(qs)
}

#[derive(Default, Clone)]
struct Tally {
    n: usize,
    hit5: usize,
    hit10: usize,
    all10: usize,
    rr: f64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.n += o.n;
        self.hit5 += o.hit5;
        self.hit10 += o.hit10;
        self.all10 += o.all10;
        self.rr += o.rr;
    }
    fn pct(&self, x: usize) -> f64 {
        100.0 * x as f64 / self.n.max(1) as f64
    }
}

/// A search request for a question under a method.
fn request(method: &str, question: &str, k: usize, tok: &Tokenizer) -> SearchRequest {
    let mut req = SearchRequest::new(question);
    req.limit = Some(k);
    match method {
        "ranked" => req.mode = Mode::Ranked,
        "semantic" => req.mode = Mode::Semantic,
        m if m.starts_with("hybrid") => req.mode = Mode::Hybrid,
        "grep-or" => {
            // An unranked keyword OR, in file order: what an agent gets from grep -E 'a|b|c'.
            let words: Vec<String> = question
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| {
                    !w.is_empty() && !memdir_core::tokenize::is_stop_word(&w.to_lowercase())
                })
                .map(str::to_lowercase)
                .collect();
            let _ = tok;
            req.regex = true;
            req.pattern = format!(r"\b({})\b", words.join("|"));
        }
        _ => {}
    }
    req
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Runs the benchmark.
pub fn run(a: Args) -> anyhow::Result<()> {
    let data = a.data.clone().unwrap_or_else(default_data);
    let raw = std::fs::read_to_string(&data).with_context(|| {
        format!(
            "cannot read {}: pass --data PATH to the LoCoMo JSON",
            data.display()
        )
    })?;
    let convs: Vec<Value> = serde_json::from_str(&raw)?;
    let tmp = tempfile::tempdir()?;
    let base = a.keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let tok = Tokenizer::new();
    let clock = Clock::fixed("2030-01-01T00:00:00Z".parse()?, jiff::tz::TimeZone::UTC);

    // method -> category -> tally
    let mut tallies: BTreeMap<String, BTreeMap<u64, Tally>> = BTreeMap::new();
    let mut times: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
    let mut build = Duration::ZERO;
    let embedder: Option<std::sync::Arc<dyn memdir::embed::Embedder>> = if a
        .methods
        .iter()
        .any(|m| is_vector(m))
    {
        let dir = a.model_dir.as_deref().context(
                "semantic and hybrid methods need --model-dir DIR or MEMDIR_MODEL_DIR (all-MiniLM-L6-v2 or potion-base-8M)",
            )?;
        // The folder's config.json picks the kind: a BERT encoder or a Model2Vec static model.
        let config = memdir::embed::EmbedConfig::Local {
            model_dir: dir.to_path_buf(),
        };
        let t0 = Instant::now();
        let e = memdir::embed::open(&config)?.context("no embedder for the model directory")?;
        println!("model load: {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        Some(std::sync::Arc::from(e))
    } else {
        None
    };
    let variants = a
        .methods
        .iter()
        .map(|m| Ok((m.clone(), hybrid_options(m)?)))
        .collect::<anyhow::Result<std::collections::HashMap<_, _>>>()?;
    let (mut vector_build, mut chunks) = (Duration::ZERO, 0usize);
    let mut n_lines = 0usize;
    let mut dump = match &a.dump {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => None,
    };
    for (ci, conv) in convs.iter().enumerate() {
        let root = base.join(format!("conv-{ci}"));
        let _ = std::fs::remove_dir_all(&root);
        let qs = build_folder(conv, &root)?;
        let mem = Memory::open(&root, clock.clone())?;
        let t0 = Instant::now();
        mem.rebuild_search_index()?;
        build += t0.elapsed();
        let mem = match &embedder {
            Some(e) => {
                let mem = mem.with_embedder(std::sync::Arc::clone(e));
                let t0 = Instant::now();
                chunks += mem.rebuild_vector_index(&|_, _| {})?.chunks_total;
                vector_build += t0.elapsed();
                mem
            }
            None => mem,
        };
        for e in std::fs::read_dir(root.join("log"))? {
            n_lines += std::fs::read_to_string(e?.path())?.lines().count();
        }
        if let Some(out) = dump.as_mut() {
            dump_conversation(out, ci, &mem, &root, &qs, embedder.is_some())?;
        }
        for method in &a.methods {
            for q in &qs {
                let req = request(method, &q.text, a.k, &tok);
                let t0 = Instant::now();
                let found = match &variants[method] {
                    Some(o) => mem.search_hybrid(&req, o)?,
                    None => mem.search(&req)?,
                };
                times.entry(method.clone()).or_default().push(t0.elapsed());
                let ranks: Vec<bool> = found
                    .hits
                    .iter()
                    .take(a.k)
                    .map(|h| line_id(&h.text).is_some_and(|id| q.evidence.contains(id)))
                    .collect();
                let seen: HashSet<&str> = found
                    .hits
                    .iter()
                    .take(10)
                    .filter_map(|h| line_id(&h.text))
                    .collect();
                let first = ranks.iter().position(|x| *x);
                let t = tallies
                    .entry(method.clone())
                    .or_default()
                    .entry(q.category)
                    .or_default();
                t.n += 1;
                t.hit5 += usize::from(first.is_some_and(|r| r < 5));
                t.hit10 += usize::from(first.is_some_and(|r| r < 10));
                t.all10 += usize::from(q.evidence.iter().all(|e| seen.contains(e.as_str())));
                t.rr += first.map_or(0.0, |r| 1.0 / (r as f64 + 1.0));
            }
        }
    }

    println!(
        "LoCoMo retrieval ({} conversations, {} turns; {} result lines per question)\n",
        convs.len(),
        n_lines,
        a.k
    );
    println!("| method | category | questions | hit@5 | hit@10 | all-evidence@10 | MRR |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let names = [
        (1, "1 multi-hop"),
        (2, "2 temporal"),
        (3, "3 open-domain"),
        (4, "4 single-hop"),
        (5, "5 adversarial"),
    ];
    for (method, cats) in &tallies {
        let mut head = Tally::default();
        for (c, name) in names {
            if let Some(t) = cats.get(&c) {
                row(method, name, t);
                if c <= 4 {
                    head.add(t);
                }
            }
        }
        row(method, "**1-4**", &head);
    }
    println!(
        "\nindex build (all conversations, ranked): {:.0} ms",
        build.as_secs_f64() * 1e3
    );
    if embedder.is_some() {
        println!(
            "vector index build (all conversations, {chunks} chunks): {:.1} s, {:.0} chunks/s",
            vector_build.as_secs_f64(),
            chunks as f64 / vector_build.as_secs_f64().max(1e-9)
        );
    }
    for (method, t) in &mut times {
        t.sort();
        println!(
            "query latency {method}: p50 {:.2} ms, p95 {:.2} ms",
            percentile(t, 0.5).as_secs_f64() * 1e3,
            percentile(t, 0.95).as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// Writes one conversation's lines and, per question, the keyword and dense candidate lists.
fn dump_conversation(
    out: &mut impl std::io::Write,
    ci: usize,
    mem: &Memory,
    root: &Path,
    qs: &[Question],
    dense: bool,
) -> anyhow::Result<()> {
    let mut lines = serde_json::Map::new();
    let mut logs: Vec<_> = std::fs::read_dir(root.join("log"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    logs.sort();
    for p in logs {
        let date = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        for (n, l) in std::fs::read_to_string(&p)?.lines().enumerate() {
            if let Some(id) = line_id(l) {
                lines.insert(id.to_string(), serde_json::json!([date, n + 1, l]));
            }
        }
    }
    writeln!(out, "{}", serde_json::json!({"conv": ci, "lines": lines}))?;
    let list = |mode: Mode, q: &str| -> anyhow::Result<Vec<Value>> {
        let mut req = SearchRequest::new(q);
        req.mode = mode;
        req.limit = Some(if mode == Mode::Ranked { 1000 } else { 100_000 });
        Ok(mem
            .search(&req)?
            .hits
            .iter()
            .filter_map(|h| Some(serde_json::json!([line_id(&h.text)?, h.score?])))
            .collect())
    };
    for q in qs {
        let mut ev: Vec<&String> = q.evidence.iter().collect();
        ev.sort();
        let kw = list(Mode::Ranked, &q.text)?;
        let dn = if dense {
            list(Mode::Semantic, &q.text)?
        } else {
            Vec::new()
        };
        writeln!(
            out,
            "{}",
            serde_json::json!({"conv": ci, "cat": q.category, "q": q.text, "ev": ev, "kw": kw, "dense": dn})
        )?;
    }
    Ok(())
}

fn row(method: &str, name: &str, t: &Tally) {
    println!(
        "| {method} | {name} | {} | {:.1}% | {:.1}% | {:.1}% | {:.3} |",
        t.n,
        t.pct(t.hit5),
        t.pct(t.hit10),
        t.pct(t.all10),
        t.rr / t.n.max(1) as f64
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_evidence_ids_are_repaired() {
        assert_eq!(evidence_ids("D8:6; D9:17"), ["D8:6", "D9:17"]);
        assert_eq!(evidence_ids("D:11:26"), ["D11:26"]);
        assert_eq!(evidence_ids("D30:05"), ["D30:5"]);
        assert!(evidence_ids("nonsense").is_empty());
        assert_eq!(line_id("- 13:56 [D1:3] Caroline: hi"), Some("D1:3"));
    }
}
