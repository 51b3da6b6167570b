//! MCP tool-call round trips over stdio: `memdir mcp` as a child process, spoken to with raw
//! JSON-RPC lines (so the client adds next to nothing), on a generated 10 MB memory folder.
//! Prints p50/p99 per call kind; the numbers go to BENCHMARKS.md.
//!
//! ```text
//! cargo build --release -p memdir-cli
//! MEMDIR_BIN=$CARGO_TARGET_DIR/release/memdir cargo bench -p memdir-mcp --bench mcp_stdio
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const WORDS: [&str; 48] = [
    "deploy",
    "staging",
    "postgres",
    "migration",
    "latency",
    "budget",
    "review",
    "customer",
    "invoice",
    "refund",
    "schema",
    "index",
    "cache",
    "queue",
    "worker",
    "retry",
    "timeout",
    "config",
    "release",
    "branch",
    "merge",
    "test",
    "flaky",
    "metric",
    "alert",
    "oncall",
    "backup",
    "restore",
    "quota",
    "tenant",
    "region",
    "replica",
    "vacuum",
    "shard",
    "token",
    "session",
    "memory",
    "context",
    "summary",
    "decision",
    "meeting",
    "priya",
    "omar",
    "lena",
    "kafka",
    "redis",
    "grafana",
    "terraform",
];

/// A tiny deterministic generator, so every run measures the same folder.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn word(&mut self) -> &'static str {
        WORDS[(self.next() % WORDS.len() as u64) as usize]
    }
}

/// About 10 MB: a year of daily logs plus notes, with one rare marker line to find.
fn generate(root: &Path) -> u64 {
    let mut rng = Lcg(42);
    let mut total = 0u64;
    std::fs::create_dir_all(root.join("log")).unwrap();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::create_dir_all(root.join("scratch")).unwrap();
    std::fs::write(
        root.join("core.md"),
        "- user: Priya, staff engineer\n- prefers short answers\n",
    )
    .unwrap();
    let start: jiff::civil::Date = "2025-12-01".parse().unwrap();
    for d in 0..365 {
        let date = start.checked_add(jiff::Span::new().days(d)).unwrap();
        let mut s = String::new();
        for i in 0..330 {
            s.push_str(&format!("- {:02}:{:02} ", (i / 14) % 24, i % 60));
            for _ in 0..10 {
                s.push_str(rng.word());
                s.push(' ');
            }
            if d == 200 && i == 100 {
                s.push_str("zebracorn-marker");
            }
            s.push('\n');
        }
        total += s.len() as u64;
        std::fs::write(root.join(format!("log/{date}.md")), s).unwrap();
    }
    for n in 0..100 {
        let mut s = format!("# note {n}\n\n");
        for _ in 0..120 {
            for _ in 0..9 {
                s.push_str(rng.word());
                s.push(' ');
            }
            s.push('\n');
        }
        total += s.len() as u64;
        std::fs::write(root.join(format!("notes/note-{n:03}.md")), s).unwrap();
    }
    total
}

struct Rpc {
    child: Child,
    out: BufReader<ChildStdout>,
    id: u64,
}

impl Rpc {
    fn start(bin: &Path, root: &Path) -> Rpc {
        let mut child = Command::new(bin)
            .arg("mcp")
            .env_clear()
            .env("MEMDIR_ROOT", root)
            .env("TZ", "UTC")
            .env("MEMDIR_NOW", "2026-11-30T09:15:00Z")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut rpc = Rpc { child, out, id: 0 };
        rpc.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        );
        rpc.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rpc
    }

    fn send(&mut self, msg: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            self.out.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    fn call(&mut self, name: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        assert_eq!(r["result"]["isError"], false, "{name}: {r}");
        r
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn measure(rpc: &mut Rpc, label: &str, n: usize, name: &str, args: Value) {
    for _ in 0..n / 10 {
        rpc.call(name, args.clone());
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        rpc.call(name, args.clone());
        times.push(t.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {label:<44} | {n:>5} | {:>8.3} | {:>8.3} | {:>8.3} |",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(times[times.len() - 1])
    );
}

fn main() {
    let bin: PathBuf = std::env::var_os("MEMDIR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("target"));
            target.join("release/memdir")
        });
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mem");
    let bytes = generate(&root);
    println!(
        "memory folder: {:.1} MB in {} files; binary: {}",
        bytes as f64 / 1e6,
        365 + 100 + 1,
        bin.display()
    );
    let mut rpc = Rpc::start(&bin, &root);
    println!(
        "| call                                         |     n | p50 (ms) | p99 (ms) | max (ms) |"
    );
    println!(
        "|----------------------------------------------|------:|---------:|---------:|---------:|"
    );
    measure(
        &mut rpc,
        "memory_read core.md",
        2000,
        "memory_read",
        json!({"path": "core.md"}),
    );
    measure(
        &mut rpc,
        "memory_read log (28 KB) lines 100-150",
        2000,
        "memory_read",
        json!({"path": "log/2026-06-19.md", "start_line": 100, "end_line": 150}),
    );
    measure(
        &mut rpc,
        "memory (Anthropic) view a log file",
        1000,
        "memory",
        json!({"command": "view", "path": "/memories/log/2026-06-19.md"}),
    );
    measure(
        &mut rpc,
        "memory_search grep, rare word (1 hit)",
        200,
        "memory_search",
        json!({"pattern": "zebracorn-marker"}),
    );
    measure(
        &mut rpc,
        "memory_search grep, common word (budgeted)",
        200,
        "memory_search",
        json!({"pattern": "postgres"}),
    );
    measure(
        &mut rpc,
        "memory_search grep, last 7 days (since)",
        200,
        "memory_search",
        json!({"pattern": "postgres", "since": "2026-11-23"}),
    );
    measure(
        &mut rpc,
        "memory_search ranked, 3-word question",
        50,
        "memory_search",
        json!({"pattern": "postgres migration timeout", "mode": "ranked"}),
    );
    measure(
        &mut rpc,
        "memory_search ranked, 3 words, last 7 days",
        50,
        "memory_search",
        json!({"pattern": "postgres migration timeout", "mode": "ranked", "since": "2026-11-23"}),
    );
    measure(
        &mut rpc,
        "memory_search ranked, rare + common word",
        50,
        "memory_search",
        json!({"pattern": "zebracorn postgres", "mode": "ranked"}),
    );
    measure(
        &mut rpc,
        "memory_search ranked, 3 words, 50 lines",
        50,
        "memory_search",
        json!({"pattern": "postgres migration timeout", "mode": "ranked", "limit": 50}),
    );
    measure(
        &mut rpc,
        "memory_context",
        1000,
        "memory_context",
        json!({}),
    );
    // The same machine, the same moment: a whole `grep -rF` process over the folder, for scale.
    let mut times = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let out = Command::new("grep")
            .args(["-rF", "zebracorn-marker"])
            .arg(&root)
            .output()
            .unwrap();
        times.push(t.elapsed());
        assert!(out.status.success());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {:<44} | {:>5} | {:>8.3} | {:>8.3} | {:>8.3} |",
        "(reference) grep -rF rare word, whole process",
        50,
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(times[times.len() - 1])
    );
}
