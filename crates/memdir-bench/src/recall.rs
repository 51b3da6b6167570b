//! Recall per prompt (`memdir hook user-prompt`) against `search --limit 5` on LoCoMo dev: each
//! conversation becomes a memory folder as for `memdir-bench locomo`; every question with
//! evidence goes through the hook's own code ([`memdir_mcp::recall`]:
//! the lines it finds and the text it renders within `recall_max_chars`) and through
//! [`Memory::search`] with the same mode and `--limit 5`. A question counts when the text shown
//! holds one of its evidence ids. Then 50 prompts unrelated to any conversation go to the hook
//! on each folder: how many inject anything.
//!
//! With an embedding model (`--model-dir` or `MEMDIR_MODEL_DIR`) both sides run hybrid, as the
//! hook does when an embedder is configured; without one, ranked.

use crate::locomo::{Question, build_folder, default_data};
use anyhow::Context as _;
use memdir::search::{Mode, SearchRequest};
use memdir::{Clock, Memory};
use memdir_mcp::recall::Floor;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

/// Options of `memdir-bench recall`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The LoCoMo JSON [default: ../shared/data/locomo/locomo-dev.json from the repository].
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// The local embedding model: both the hook and search run hybrid with it, ranked without.
    #[arg(long, value_name = "DIR", env = "MEMDIR_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Run ranked even when a model is given.
    #[arg(long)]
    pub ranked: bool,
    /// Print each question the hook and search disagree on.
    #[arg(long)]
    pub diff: bool,
    /// Also run recall with other floors, each `KEY=V/KEY=V` of `lines` (most lines shown),
    /// `top` (search's first lines shown whatever terms they hold), `terms` (terms each other
    /// line holds) and `share` (the gate); unset keys keep the hook's.
    #[arg(long, value_delimiter = ',')]
    pub floors: Vec<String>,
}

/// A floor from `lines=7/top=5/terms=2/share=0.34`.
fn parse_floor(spec: &str) -> anyhow::Result<Floor> {
    let mut f = Floor::default();
    for kv in spec.split('/').filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("floor {kv:?}: use KEY=VALUE"))?;
        let bad = || format!("floor {kv:?}: not a number");
        match k {
            "lines" => f.max_lines = v.parse().with_context(bad)?,
            "top" => f.search_top = v.parse().with_context(bad)?,
            "terms" => f.min_terms = v.parse().with_context(bad)?,
            "share" => f.min_share = v.parse().with_context(bad)?,
            _ => anyhow::bail!("floor {kv:?}: the keys are lines, top, terms and share"),
        }
    }
    Ok(f)
}

/// Prompts about programming and general knowledge that no LoCoMo conversation is about.
pub const UNRELATED: [&str; 50] = [
    "How do I reverse a linked list in Rust without cloning nodes?",
    "Write a bash one-liner that renames every .jpeg file to .jpg",
    "What is the time complexity of heapsort in the worst case?",
    "Explain the difference between TCP and UDP",
    "Fix the borrow checker error in this closure that captures self mutably",
    "Convert this JSON schema to a TypeScript interface",
    "How do I configure nginx as a reverse proxy for port 8080?",
    "What does the HTTP 429 status code mean?",
    "Write a SQL query that finds duplicate emails in the users table",
    "Why does my Docker build cache get invalidated on every commit?",
    "Explain Raft leader election in two paragraphs",
    "How do I set up a GitHub Actions matrix for three Python versions?",
    "What's the difference between a mutex and a semaphore?",
    "Refactor this function to return a Result instead of panicking",
    "How many bytes is a UUID?",
    "Generate a regular expression for IPv4 addresses",
    "What is the derivative of x squared times sine x?",
    "Translate 'the invoice is overdue' into German",
    "How do I undo the last git commit but keep the changes?",
    "Explain what a Bloom filter is and when to use one",
    "Benchmark this loop with criterion",
    "Why is my Kubernetes pod stuck in CrashLoopBackOff?",
    "Write a Makefile target that runs the linter before tests",
    "What is the capital of Australia?",
    "How does TLS certificate pinning work?",
    "Sort this array of structs by two keys in Go",
    "What are the SOLID principles?",
    "Set the PostgreSQL statement timeout for one session",
    "How do I profile memory allocations in a Rust binary?",
    "Explain eventual consistency with an example",
    "Compute the SHA-256 of a file in Python",
    "What is the difference between git merge and git rebase?",
    "How do I read environment variables in Node.js?",
    "Rename the column customer_id to account_id in the migration",
    "What is a monad, briefly?",
    "Write unit tests for the tokenizer edge cases",
    "Which HTTP methods are idempotent?",
    "Add pagination to this REST endpoint",
    "How do I enable gzip compression in Express?",
    "What does the CAP theorem say?",
    "Parse an ISO 8601 duration in JavaScript",
    "How do I mount an S3 bucket as a filesystem?",
    "Explain backpressure in streaming systems",
    "What is the default port of Redis?",
    "Make this CSS grid responsive for phones",
    "How does garbage collection work in the JVM?",
    "Write a cron expression for every weekday at 7am",
    "Why is floating point 0.1 + 0.2 not 0.3?",
    "Estimate the cost of 10 million Lambda invocations",
    "Explain the visitor pattern with a compiler example",
];

/// The `[D1:3]` ids a text holds.
fn ids(text: &str) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("[D") {
        rest = &rest[i + 1..];
        if let Some(end) = rest.find(']') {
            let id = &rest[..end];
            if id.len() > 1
                && id[1..]
                    .split(':')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            {
                out.insert(id);
            }
        }
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Count {
    n: usize,
    hit: usize,
    shown: usize,
}

/// What the hook would inject for `prompt` with `floor`, or `None`.
fn hook(mem: &Memory, prompt: &str, hybrid: bool, floor: &Floor) -> anyhow::Result<Option<String>> {
    let lines = memdir_mcp::recall::recall_with(mem, prompt, hybrid, floor)?;
    Ok(memdir_mcp::recall::render(
        &lines,
        mem.config().hooks.recall_max_chars,
    ))
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
    let clock = Clock::fixed("2030-01-01T00:00:00Z".parse()?, jiff::tz::TimeZone::UTC);
    let embedder: Option<std::sync::Arc<dyn memdir::embed::Embedder>> = match &a.model_dir {
        Some(dir) if !a.ranked => {
            let config = memdir::embed::EmbedConfig::Local {
                model_dir: dir.clone(),
            };
            let e = memdir::embed::open(&config)?.context("no embedder for the model directory")?;
            Some(std::sync::Arc::from(e))
        }
        _ => None,
    };
    let hybrid = embedder.is_some();
    let mode = if hybrid { "hybrid" } else { "ranked" };
    // method -> category ("1-4" and each) -> count
    let mut tally: BTreeMap<(String, String), Count> = BTreeMap::new();
    let mut chars = Vec::new();
    let mut floors = vec![("hook".to_string(), Floor::default())];
    for spec in &a.floors {
        floors.push((format!("hook {spec}"), parse_floor(spec)?));
    }
    // floor -> prompt -> folders where it injected
    let mut unrelated: BTreeMap<String, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut folder_most: BTreeMap<String, usize> = BTreeMap::new();
    let (mut only_hook, mut only_search) = (0, 0);
    for (ci, conv) in convs.iter().enumerate() {
        let root = tmp.path().join(format!("conv-{ci}"));
        let qs: Vec<Question> = build_folder(conv, &root)?;
        let mem = Memory::open(&root, clock.clone())?;
        mem.rebuild_search_index()?;
        let mem = match &embedder {
            Some(e) => {
                let mem = mem.with_embedder(std::sync::Arc::clone(e));
                mem.rebuild_vector_index(&|_, _| {})?;
                mem
            }
            None => mem,
        };
        anyhow::ensure!(
            mem.config().hooks.recall_max_chars > 0,
            "the default recall budget is unset"
        );
        for q in &qs {
            let shown = hook(&mem, &q.text, hybrid, &floors[0].1)?;
            let hook_hit = shown
                .as_deref()
                .is_some_and(|t| ids(t).iter().any(|i| q.evidence.contains(*i)));
            if let Some(t) = &shown {
                chars.push(t.chars().count());
            }
            let mut req = SearchRequest::new(q.text.as_str());
            req.mode = if hybrid { Mode::Hybrid } else { Mode::Ranked };
            req.limit = Some(5);
            let hits = match mem.search(&req) {
                Ok(f) => f.hits,
                Err(memdir::Error::Invalid(_)) => Vec::new(),
                Err(e) => return Err(e.into()),
            };
            let search_hit = hits
                .iter()
                .any(|h| ids(&h.text).iter().any(|i| q.evidence.contains(*i)));
            if q.category <= 4 && hook_hit != search_hit {
                if hook_hit {
                    only_hook += 1;
                } else {
                    only_search += 1;
                }
                if a.diff {
                    println!(
                        "{} cat {}: {:?}",
                        if hook_hit {
                            "hook only  "
                        } else {
                            "search only"
                        },
                        q.category,
                        q.text
                    );
                }
            }
            let mut rows = vec![
                ("hook".to_string(), hook_hit, shown.is_some()),
                (
                    format!("search --mode {mode} --limit 5"),
                    search_hit,
                    !hits.is_empty(),
                ),
            ];
            for (name, floor) in &floors[1..] {
                let shown = hook(&mem, &q.text, hybrid, floor)?;
                let hit = shown
                    .as_deref()
                    .is_some_and(|t| ids(t).iter().any(|i| q.evidence.contains(*i)));
                rows.push((name.clone(), hit, shown.is_some()));
            }
            for (method, hit, any) in rows {
                let mut cats = vec![q.category.to_string()];
                if q.category <= 4 {
                    cats.push("1-4".into());
                }
                for c in cats {
                    let t = tally.entry((method.clone(), c)).or_default();
                    t.n += 1;
                    t.hit += usize::from(hit);
                    t.shown += usize::from(any);
                }
            }
        }
        for (name, floor) in &floors {
            let per = unrelated.entry(name.clone()).or_default();
            let mut here = 0;
            for p in UNRELATED {
                if hook(&mem, p, hybrid, floor)?.is_some() {
                    *per.entry(p).or_default() += 1;
                    here += 1;
                }
            }
            let most = folder_most.entry(name.clone()).or_default();
            *most = (*most).max(here);
        }
    }
    println!(
        "Recall per prompt on {} ({} conversations, {mode})\n",
        data.display(),
        convs.len()
    );
    println!("| method | category | questions | evidence in what is shown | shows anything |");
    println!("|---|---|---:|---:|---:|");
    let mut rows: Vec<_> = tally.iter().collect();
    rows.sort_by_key(|((m, c), _)| (c != "1-4", c.clone(), m.clone()));
    for ((m, c), t) in rows {
        let pct = |x: usize| 100.0 * x as f64 / t.n.max(1) as f64;
        println!(
            "| {m} | {c} | {} | {} ({:.1}%) | {:.1}% |",
            t.n,
            t.hit,
            pct(t.hit),
            pct(t.shown)
        );
    }
    println!("\ncategories 1-4: the hook alone finds {only_hook}, search alone {only_search}");
    chars.sort_unstable();
    if let Some(max) = chars.last() {
        println!(
            "injected characters: median {}, max {max}",
            chars[chars.len() / 2]
        );
    }
    for (name, per) in unrelated {
        let total: usize = per.values().sum();
        let most = folder_most.get(&name).copied().unwrap_or(0);
        println!(
            "{name}: unrelated prompts that inject anything: {total} of {} ({} folders x 50, {:.1} per folder, at most {most} in one)",
            50 * convs.len(),
            convs.len(),
            total as f64 / convs.len().max(1) as f64
        );
        let mut worst: Vec<_> = per.into_iter().collect();
        worst.sort_by_key(|(p, k)| (std::cmp::Reverse(*k), *p));
        for (p, k) in worst {
            println!("  {k}x {p}");
        }
    }
    Ok(())
}
