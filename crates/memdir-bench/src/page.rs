//! The person's page on a generated year of memory (365 daily logs and 2,100 notes, the corpus
//! of `speed`), plus one log of 1 MB: each view's time to a full response (p50 and p95 over
//! loopback, from a real `memdir serve`) and the size of its HTML.

use crate::tenants::cpu_of;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Options of `memdir-bench page`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memdir binary [default: `memdir` next to this program].
    #[arg(long, value_name = "PATH")]
    pub memdir: Option<PathBuf>,
    /// Timed requests per view (after two warm-up requests).
    #[arg(long, default_value_t = 30)]
    pub runs: usize,
    /// Only the views whose name holds this (e.g. `ranked`), to profile one view alone.
    #[arg(long, value_name = "TEXT")]
    pub view: Option<String>,
}

/// A `memdir serve` killed when dropped.
struct Serve(std::process::Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let memdir = crate::memdir_bin(a.memdir.clone())?;
    let tmp = tempfile::tempdir()?;
    let year = tmp.path().join("year");
    crate::speed::generate(&year, 365, 2100, 30_000, 4_500)?;
    // One log of 1 MB, the largest a day is likely to get.
    let big = year.join("log/2026-12-31.md");
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 1 << 20 {
        text.push_str(&format!(
            "- {:02}:{:02} entry {i} of a very busy day, with enough words to be a real line\n",
            (i / 60) % 24,
            i % 60
        ));
        i += 1;
    }
    std::fs::write(&big, &text)?;
    let mut child = Command::new(&memdir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MEMDIR_ROOT", &year)
        .env("HOME", tmp.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut err = BufReader::new(
        child
            .stderr
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stderr"))?,
    );
    let pid = child.id();
    let _serve = Serve(child);
    let mut line = String::new();
    let link = loop {
        line.clear();
        anyhow::ensure!(err.read_line(&mut line)? > 0, "memdir serve exited: {line}");
        if let Some(rest) = line.split("sign in at ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let base = link.split("/ui/").next().unwrap_or_default().to_string();
    let code = link.rsplit("code=").next().unwrap_or_default();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let r = agent
        .post(format!("{base}/ui/signin"))
        .header("Origin", &base)
        .send_form([("code", code)])?;
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .ok_or_else(|| anyhow::anyhow!("sign-in gave no cookie"))?
        .to_string();
    println!(
        "generated 365 logs + 2,100 notes + one 1 MB log; {} timed requests per view; {} cores",
        a.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("\n| view | p50 ms | p95 ms | server CPU ms/request | HTML bytes |");
    println!("|---|---:|---:|---:|---:|");
    for (name, path) in [
        ("context", "/ui/"),
        ("files (root)", "/ui/files/"),
        ("notes folder (by type/tag)", "/ui/files/notes"),
        ("a note", "/ui/files/notes/topic-07/note-0007.md"),
        ("a day's log (30 KB)", "/ui/files/log/2026-06-01.md"),
        ("a 1 MB log (first section)", "/ui/files/log/2026-12-31.md"),
        (
            "a 1 MB log (at line 10,000)",
            "/ui/files/log/2026-12-31.md?lines=1&at=10000",
        ),
        ("edit core", "/ui/edit/core.md"),
        ("search (grep)", "/ui/search?q=rollback"),
        ("search (ranked)", "/ui/search?q=rollback+plan&mode=ranked"),
        ("history", "/ui/history"),
        ("history of core", "/ui/history?path=core.md"),
        ("blame of core", "/ui/blame/core.md"),
        ("lint (first page)", "/ui/lint"),
        ("review", "/ui/review"),
    ] {
        if a.view.as_deref().is_some_and(|v| !name.contains(v)) {
            continue;
        }
        let url = format!("{base}{path}");
        let mut size = 0;
        let mut times = Vec::with_capacity(a.runs);
        let mut cpu0 = 0.0;
        for n in 0..a.runs + 2 {
            if n == 2 {
                cpu0 = cpu_of(pid).unwrap_or(0.0);
            }
            let t0 = Instant::now();
            let mut resp = agent.get(&url).header("Cookie", &cookie).call()?;
            anyhow::ensure!(resp.status() == 200, "{path}: {}", resp.status());
            let body = resp
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()?;
            let took = t0.elapsed();
            size = body.len();
            if n >= 2 {
                times.push(took);
            }
        }
        // The server's own CPU time (utime + stime): on a shared, busy machine wall times
        // measure the neighbours too.
        let cpu = (cpu_of(pid).unwrap_or(0.0) - cpu0) * 1000.0 / a.runs.max(1) as f64;
        times.sort();
        println!(
            "| {name} | {:.1} | {:.1} | {cpu:.1} | {size} |",
            pct(&times, 0.5),
            pct(&times, 0.95)
        );
    }
    Ok(())
}
