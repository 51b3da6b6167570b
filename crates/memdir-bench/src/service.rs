//! A bounded load test of the multi-tenant service: two `memdir serve` instances on one
//! PostgreSQL database, many concurrent clients (each a tenant's agent, half on each instance)
//! mixing appends, writes, edits and searches for a fixed time, loopback only. It then reads
//! every tenant's log back and fails when an acknowledged append is missing or doubled, or when
//! any request got a server error.

use crate::tenants::status_kib;
use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Options.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The PostgreSQL server, without a database (a throwaway one is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
    pub pg: String,
    /// Concurrent clients.
    #[arg(long, default_value_t = 50)]
    pub clients: usize,
    /// Tenants the clients share (client i is tenant i mod N).
    #[arg(long, default_value_t = 10)]
    pub tenants: usize,
    /// How long the load runs.
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// The memdir binary (default: beside this one).
    #[arg(long)]
    pub memdir: Option<PathBuf>,
}

struct Instance {
    child: Child,
    base: String,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Tally {
    latencies: HashMap<&'static str, Vec<Duration>>,
    server_errors: u64,
    tool_errors: HashMap<&'static str, u64>,
    /// Acknowledged appends, by tenant.
    appended: HashMap<usize, Vec<String>>,
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e3
}

/// Runs the load and prints the table; fails on a lost append or a server error.
pub fn run(a: Args) -> anyhow::Result<()> {
    let memdir = crate::memdir_bin(a.memdir.clone())?;
    let db = format!("memdir_bench_service_{}", std::process::id());
    let store = format!("{}/{db}", a.pg.trim_end_matches('/'));
    let result = load(&a, &memdir, &store);
    let _ = memdir_store_pg::testing::admin(
        &a.pg,
        "postgres",
        &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
    );
    result
}

fn load(a: &Args, memdir: &std::path::Path, store: &str) -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let cmd = |cache: &str| {
        let mut c = Command::new(memdir);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", home.path().join(cache))
            .env("TZ", "UTC")
            .env("MEMDIR_STORE", store);
        c
    };
    let mut tokens = Vec::new();
    for t in 0..a.tenants {
        let out = cmd("cache")
            .args(["tenant", "add", &format!("t{t}")])
            .output()?;
        if !out.status.success() {
            bail!("tenant add: {}", String::from_utf8_lossy(&out.stderr));
        }
        tokens.push(String::from_utf8(out.stdout)?.trim().to_string());
    }
    let config = home.path().join("service.toml");
    // Rate limits well above what the clients ask for, so the run measures the service.
    std::fs::write(
        &config,
        "[limits]\nrate_per_sec = 100000\nrate_burst = 100000\n",
    )?;
    let mut instances = Vec::new();
    for i in 0..2 {
        let mut child = cmd(&format!("cache{i}"))
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut err = BufReader::new(child.stderr.take().context("no stderr")?);
        let mut line = String::new();
        let base = loop {
            line.clear();
            if err.read_line(&mut line)? == 0 {
                bail!("memdir serve exited before it listened");
            }
            if let Some(rest) = line.split("memory on ").nth(1) {
                break rest.split(' ').next().unwrap_or_default().to_string();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        instances.push(Instance { child, base });
    }
    let tally = Arc::new(Mutex::new(Tally::default()));
    let deadline = Instant::now() + Duration::from_secs(a.seconds);
    let started = Instant::now();
    let mut threads = Vec::new();
    for c in 0..a.clients {
        let base = instances[c % 2].base.clone();
        let tenant = c % a.tenants;
        let token = tokens[tenant].clone();
        let tally = tally.clone();
        threads.push(std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                .build()
                .into();
            let mut mine: Tally = Tally::default();
            let mut n = 0u64;
            let mut seed = (c as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let note = format!("notes/c{c}.md");
            while Instant::now() < deadline {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                n += 1;
                let id = format!("c{c}-n{n}");
                let (op, tool, args): (&'static str, &str, Value) = match seed % 10 {
                    0..=3 => (
                        "append",
                        "memory_log",
                        json!({"text": format!("entry {id}")}),
                    ),
                    4 => (
                        "write",
                        "memory_write",
                        json!({"path": note, "content": format!("# c{c}\n\n{id}\n")}),
                    ),
                    5 => (
                        "edit",
                        "memory_edit",
                        json!({"path": note, "append": format!("- {id}")}),
                    ),
                    6..=7 => (
                        "grep",
                        "memory_search",
                        json!({"pattern": format!("c{c}-n")}),
                    ),
                    _ => (
                        "ranked",
                        "memory_search",
                        json!({"pattern": "entry", "mode": "ranked", "limit": 5}),
                    ),
                };
                let t0 = Instant::now();
                let resp = agent
                    .post(&format!("{base}/v1/tools/{tool}"))
                    .header("Authorization", &format!("Bearer {token}"))
                    .send(args.to_string().as_bytes());
                let took = t0.elapsed();
                let ok = match resp {
                    Ok(mut r) if r.status().as_u16() == 200 => {
                        let v: Value = r.body_mut().read_json().unwrap_or(Value::Null);
                        if v["is_error"].as_bool() == Some(false) {
                            true
                        } else {
                            *mine.tool_errors.entry(op).or_default() += 1;
                            false
                        }
                    }
                    _ => {
                        mine.server_errors += 1;
                        false
                    }
                };
                mine.latencies.entry(op).or_default().push(took);
                if ok && op == "append" {
                    mine.appended.entry(tenant).or_default().push(id);
                }
            }
            let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
            for (k, v) in mine.latencies {
                t.latencies.entry(k).or_default().extend(v);
            }
            for (k, v) in mine.tool_errors {
                *t.tool_errors.entry(k).or_default() += v;
            }
            t.server_errors += mine.server_errors;
            for (k, v) in mine.appended {
                t.appended.entry(k).or_default().extend(v);
            }
        }));
    }
    for t in threads {
        let _ = t.join();
    }
    let wall = started.elapsed();
    let rss: Vec<(u64, u64)> = instances
        .iter()
        .map(|i| {
            (
                status_kib(i.child.id(), "VmRSS:"),
                status_kib(i.child.id(), "VmHWM:"),
            )
        })
        .collect();
    let mut tally = Arc::try_unwrap(tally)
        .map_err(|_| anyhow::anyhow!("clients still running"))?
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    // Every acknowledged append is in its tenant's log exactly once (read through instance 0).
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut lost = 0usize;
    let mut doubled = 0usize;
    let mut acked = 0usize;
    let today = jiff::tz::TimeZone::UTC
        .to_datetime(jiff::Timestamp::now())
        .date();
    for (tenant, ids) in &tally.appended {
        let mut text = String::new();
        // A run across midnight spreads over two days' logs.
        for day in [today.yesterday().ok(), Some(today)].into_iter().flatten() {
            let mut r = agent
                .get(&format!("{}/v1/files/log/{day}.md", instances[0].base))
                .header("Authorization", &format!("Bearer {}", tokens[*tenant]))
                .call()?;
            if r.status().as_u16() == 200 {
                text.push_str(&r.body_mut().read_to_string()?);
            }
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for l in text.lines() {
            if let Some(id) = l.rsplit("entry ").next() {
                *seen.entry(id.trim()).or_default() += 1;
            }
        }
        for id in ids {
            acked += 1;
            match seen.get(id.as_str()).copied().unwrap_or(0) {
                0 => lost += 1,
                1 => {}
                _ => doubled += 1,
            }
        }
    }
    let total: usize = tally.latencies.values().map(Vec::len).sum();
    println!(
        "{} clients over 2 instances, {} tenants, one PostgreSQL, {:.0} s: {total} requests ({:.0}/s)",
        a.clients,
        a.tenants,
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64()
    );
    println!();
    println!("| operation | requests | tool errors | p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|");
    for op in ["append", "write", "edit", "grep", "ranked"] {
        let errors = tally.tool_errors.get(op).copied().unwrap_or(0);
        let v = tally.latencies.entry(op).or_default();
        let count = v.len();
        println!(
            "| {op} | {count} | {errors} | {:.1} | {:.1} |",
            pct(v, 0.5),
            pct(v, 0.99)
        );
    }
    println!();
    for (i, (now, peak)) in rss.iter().enumerate() {
        println!(
            "instance {i}: RSS {:.1} MiB at the end, peak {:.1} MiB",
            *now as f64 / 1024.0,
            *peak as f64 / 1024.0
        );
    }
    println!(
        "appends acknowledged {acked}, lost {lost}, doubled {doubled}; server errors {}",
        tally.server_errors
    );
    if lost > 0 || doubled > 0 || tally.server_errors > 0 {
        bail!("the service lost or doubled appends, or answered with server errors");
    }
    Ok(())
}
