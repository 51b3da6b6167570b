//! Per-operation latency on each store: the same generated 10 MB memory on a folder, in S3
//! (an S3-compatible endpoint such as moto on loopback) and, when a URL is given, in
//! PostgreSQL, through the same `Memory` calls; and on S3 a repeat grep on the unchanged memory
//! with the requests it sent (the cache's claim: one listing, no object reads).

use memdir::search::{Mode, SearchRequest};
use memdir::{Backend, Clock, Memory};
use memdir_store_s3::{S3Config, S3Store};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `memdir-bench stores`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The S3-compatible endpoint (e.g. moto: `moto_server -H 127.0.0.1 -p 5055`).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:5055")]
    pub s3: String,
    /// The bucket to use (created when the server takes unsigned bucket creation, as moto does).
    #[arg(long, default_value = "memdir-bench")]
    pub bucket: String,
    /// A PostgreSQL server to measure too, e.g. postgres://postgres@127.0.0.1/memdir_bench.
    #[arg(long, value_name = "URL")]
    pub pg: Option<String>,
    /// Timed runs per operation.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
}

fn clock() -> Clock {
    Clock::fixed(
        "2026-12-31T12:00:00Z".parse().unwrap_or_default(),
        jiff::tz::TimeZone::UTC,
    )
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn time(runs: usize, mut f: impl FnMut(usize) -> anyhow::Result<()>) -> anyhow::Result<f64> {
    f(usize::MAX)?;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let t = Instant::now();
        f(i)?;
        times.push(t.elapsed());
    }
    Ok(median(times))
}

/// The median milliseconds of each operation on `mem`.
fn operations(mem: &Memory, runs: usize) -> anyhow::Result<Vec<(&'static str, f64)>> {
    let grep = SearchRequest::new("kubernetes");
    let mut ranked = SearchRequest::new("kubernetes upgrade");
    ranked.mode = Mode::Ranked;
    mem.write("notes/bench.md", "line one\nline two\n")?
        .done()
        .map_err(anyhow::Error::msg)?;
    Ok(vec![
        (
            "read",
            time(runs, |_| mem.read("core.md").map(drop).map_err(Into::into))?,
        ),
        (
            "write",
            time(runs, |i| {
                mem.write("notes/bench.md", &format!("line one\nline {i}\n"))
                    .map(drop)
                    .map_err(Into::into)
            })?,
        ),
        (
            "append (log)",
            time(runs, |i| {
                mem.log(&format!("bench entry {i}"))
                    .map(drop)
                    .map_err(Into::into)
            })?,
        ),
        (
            "edit",
            time(runs, |i| {
                let old = String::from_utf8_lossy(&mem.read("notes/bench.md")?).into_owned();
                let line = old.lines().nth(1).unwrap_or_default().to_string();
                mem.edit("notes/bench.md", &line, &format!("line edit {i}"))
                    .map(drop)
                    .map_err(Into::into)
            })?,
        ),
        (
            "context",
            time(runs, |_| mem.context().map(drop).map_err(Into::into))?,
        ),
        (
            "grep",
            time(runs, |_| mem.search(&grep).map(drop).map_err(Into::into))?,
        ),
        (
            "ranked",
            time(runs.min(5), |_| {
                mem.search(&ranked).map(drop).map_err(Into::into)
            })?,
        ),
    ])
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("mem");
    let bytes = crate::speed::generate(&root, 182, 1050, 30_000, 4_500)?;
    println!("memory: {:.1} MB", bytes as f64 / 1e6);
    let folder = Memory::open(&root, clock())?;

    // moto creates buckets unsigned; elsewhere make the bucket first.
    let _ = ureq::put(&format!("{}/{}", a.s3.trim_end_matches('/'), a.bucket)).send_empty();
    let tenant = format!("bench{}", jiff::Timestamp::now().as_second());
    let config = |cache: Option<PathBuf>| -> anyhow::Result<S3Config> {
        let mut c = S3Config::new(&format!("s3://{}/memories?tenant={tenant}", a.bucket))?
            .with_aws("AWS_ACCESS_KEY_ID", "bench")
            .with_aws("AWS_SECRET_ACCESS_KEY", "bench")
            .with_aws("AWS_REGION", "us-east-1")
            .with_aws("AWS_ENDPOINT_URL", &a.s3);
        if let Some(d) = cache {
            c = c.with_cache_dir(d);
        }
        Ok(c)
    };
    let s3 = Arc::new(S3Store::create(config(None)?)?);
    let t = Instant::now();
    let copied = memdir::copy(folder.store().as_ref(), s3.as_ref())?;
    println!(
        "import into S3: {} files in {:.1} s",
        copied.files,
        t.elapsed().as_secs_f64()
    );
    let s3_mem = Memory::init_backend(
        Backend {
            store: s3.clone(),
            history: Some(Arc::new(s3.history())),
            vectors: None,
        },
        clock(),
        true,
    )?;
    // The keyword and vector indexes of stores that are not folders live in a cache folder,
    // as the CLI, `memdir mcp` and `memdir serve` give them.
    let search_cache = tempfile::tempdir()?;
    let s3_mem = s3_mem.with_search_cache(search_cache.path().join("s3"));
    let mut table = vec![("folder", operations(&folder, a.runs)?)];
    if let Some(url) = &a.pg {
        let pg = memdir_store_pg::PgStore::create(&format!("{url}?tenant={tenant}"))?;
        memdir::copy(folder.store().as_ref(), &pg)?;
        let pg_mem = Memory::init_backend(pg.backend(), clock(), true)?
            .with_search_cache(search_cache.path().join("pg"));
        table.push(("postgresql", operations(&pg_mem, a.runs)?));
    }
    table.push(("s3 (moto)", operations(&s3_mem, a.runs)?));

    print!("\n| operation (median ms) |");
    for (name, _) in &table {
        print!(" {name} |");
    }
    print!("\n|---|");
    for _ in &table {
        print!("---:|");
    }
    println!();
    for (i, (op, _)) in table[0].1.iter().enumerate() {
        print!("| {op} |");
        for (_, ops) in &table {
            print!(" {:.1} |", ops[i].1);
        }
        println!();
    }

    // A repeat grep on the unchanged memory, by a fresh process-like reader with a disk cache.
    let cache = tempfile::tempdir()?;
    let reader = || -> anyhow::Result<(Arc<S3Store>, Memory)> {
        let s = Arc::new(S3Store::open(config(Some(cache.path().to_path_buf()))?)?);
        let m = Memory::open_backend(Backend::store_only(s.clone()), clock())?;
        Ok((s, m))
    };
    let grep = SearchRequest::new("kubernetes");
    println!(
        "\n| grep on the unchanged 10 MB S3 memory | ms | GET | LIST | HEAD |\n|---|---:|---:|---:|---:|"
    );
    for label in [
        "first (empty cache)",
        "repeat (new client, same cache)",
        "repeat (same client)",
    ] {
        let (s, m) = reader()?;
        if label.ends_with("(same client)") {
            m.search(&grep)?;
        }
        let before = s.requests();
        let t = Instant::now();
        let hits = m.search(&grep)?.hits.len();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let after = s.requests();
        println!(
            "| {label} ({hits} hits) | {ms:.0} | {} | {} | {} |",
            after.get - before.get,
            after.list - before.list,
            after.head - before.head
        );
    }
    Ok(())
}
