//! Speed benchmark: a generated year of memory (365 daily logs, 2,000+ notes, about 20 MB), and
//! `memdir search` wall time next to `grep -rniF` and `rg -niF` on the same folder and pattern,
//! plus in-process [`Memory::search`] latency on about 10 MB.

use anyhow::Context as _;
use memdir::search::SearchRequest;
use memdir::{Clock, Memory};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Options of `memdir-bench speed`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memdir binary [default: `memdir` next to this program].
    #[arg(long, value_name = "PATH")]
    pub memdir: Option<PathBuf>,
    /// Timed runs per command (after one warm-up run).
    #[arg(long, default_value_t = 15)]
    pub runs: usize,
    /// Keep the generated folder here instead of a temp dir.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// A small deterministic generator (SplitMix64), so every run searches the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &str = "the a to of and in we for on with it that is was about team meeting \
review deploy release customer invoice billing database migration index query latency error \
fix bug test build pipeline cache server client request response token budget plan roadmap \
design doc note idea follow up call email sync standup retro sprint ticket issue priority \
decided agreed blocked waiting shipped merged reverted rollback incident alert page oncall \
metrics dashboard report quarter goal hire interview offer contract vendor price cost saving \
postgres redis kafka queue worker job schedule cron backup restore snapshot disk memory cpu \
network dns certificate renew expiry security audit access key rotate password login session \
user account profile settings feature flag experiment launch beta feedback survey churn growth";

const PEOPLE: [&str; 8] = [
    "Priya", "Marco", "Aiko", "Tomas", "Lena", "Omar", "Sofia", "Chen",
];

fn sentence(rng: &mut Rng, words: &[&str]) -> String {
    let n = 8 + rng.below(14);
    let mut s = String::from(PEOPLE[rng.below(PEOPLE.len())]);
    for _ in 0..n {
        s.push(' ');
        s.push_str(words[rng.below(words.len())]);
    }
    // Rare and special markers the timed patterns look for.
    match rng.below(4000) {
        0 => s.push_str(" before the kubernetes upgrade"),
        1 => s.push_str(" the C++ build needs a price ($5) bump"),
        _ => {}
    }
    s
}

/// Writes `days` daily logs and `notes` notes under `root`; returns the bytes written.
pub(crate) fn generate(
    root: &Path,
    days: usize,
    notes: usize,
    log_bytes: usize,
    note_bytes: usize,
) -> anyhow::Result<u64> {
    let clock = Clock::fixed("2026-12-31T12:00:00Z".parse()?, jiff::tz::TimeZone::UTC);
    Memory::init(root, clock)?;
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut rng = Rng(42);
    let mut total = 0u64;
    let start = jiff::civil::date(2026, 1, 1);
    for d in 0..days {
        let day = start.checked_add(jiff::Span::new().days(d as i64))?;
        let mut text = String::new();
        let mut minute = 8 * 60;
        while text.len() < log_bytes {
            minute = (minute + 1 + rng.below(3)) % (24 * 60);
            text.push_str(&format!(
                "- {:02}:{:02} {}\n",
                minute / 60,
                minute % 60,
                sentence(&mut rng, &words)
            ));
        }
        let path = root.join(memdir_core::log::log_path(day));
        std::fs::write(&path, &text)?;
        total += text.len() as u64;
    }
    for n in 0..notes {
        let dir = root.join(format!("notes/topic-{:02}", n % 40));
        std::fs::create_dir_all(&dir)?;
        let mut text = format!("# Note {n}\n\n");
        while text.len() < note_bytes {
            text.push_str(&sentence(&mut rng, &words));
            text.push_str(".\n");
        }
        std::fs::write(dir.join(format!("note-{n:04}.md")), &text)?;
        total += text.len() as u64;
    }
    Ok(total)
}

/// Children's CPU time so far (user + system), from `/proc/self/stat`, in clock ticks of 10 ms.
fn children_cpu_ticks() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the command name (which may hold spaces) start after ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // cutime and cstime are fields 16 and 17 of the line: 13 and 14 after ')'.
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    get(13) + get(14)
}

/// Median wall time of `runs` runs (after a warm-up), mean CPU time of the children, and the
/// number of lines the command printed.
///
/// The output goes through a pipe that is read to the end, as an agent's tool harness or a
/// terminal reads it. Never `/dev/null`: GNU grep notices that its output is `/dev/null` and
/// then stops reading each file at its first match (as with `-q`), so it would be timed doing
/// less work than the others.
fn time_cmd(
    mut make: impl FnMut() -> Command,
    runs: usize,
) -> anyhow::Result<(Duration, Duration, usize)> {
    use std::io::Read as _;
    let mut all = Vec::new();
    let mut cpu0 = 0;
    let mut out = Vec::new();
    for i in 0..=runs {
        if i == 1 {
            cpu0 = children_cpu_ticks();
        }
        let mut c = make();
        c.stdout(Stdio::piped()).stderr(Stdio::null());
        out.clear();
        let t0 = Instant::now();
        let mut child = c.spawn().context("cannot run the command")?;
        child
            .stdout
            .take()
            .context("no pipe for the command's output")?
            .read_to_end(&mut out)?;
        child.wait()?;
        if i > 0 {
            all.push(t0.elapsed());
        }
    }
    let cpu = Duration::from_millis((children_cpu_ticks() - cpu0) * 10 / runs.max(1) as u64);
    all.sort();
    let lines = out.iter().filter(|&&b| b == b'\n').count();
    Ok((all[all.len() / 2], cpu, lines))
}

/// Fails unless `other` printed as many lines as memdir: the tools must have done the same work
/// for their times to compare.
fn same_lines(pat: &str, other: &str, theirs: usize, ours: usize) -> anyhow::Result<()> {
    anyhow::ensure!(
        theirs == ours,
        "`{pat}`: {other} printed {theirs} lines, memdir {ours}: the timings would not compare"
    );
    Ok(())
}

fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs the benchmark.
pub fn run(a: Args) -> anyhow::Result<()> {
    let memdir = crate::memdir_bin(a.memdir.clone())?;
    let tmp = tempfile::tempdir()?;
    let base = a.keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let year = base.join("year");
    let half = base.join("half");
    let _ = std::fs::remove_dir_all(&year);
    let _ = std::fs::remove_dir_all(&half);
    let bytes = generate(&year, 365, 2100, 30_000, 4_500)?;
    let half_bytes = generate(&half, 182, 1050, 30_000, 4_500)?;
    println!(
        "generated {} files, {:.1} MB (year); {:.1} MB (half); {} cores",
        365 + 2100,
        bytes as f64 / 1e6,
        half_bytes as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let rg = have("rg");
    if !rg {
        println!("rg not found: install ripgrep (apt-get install -y ripgrep) for the rg column");
    }
    println!(
        "\n| pattern | matches | memdir search | grep -rniF | rg -niF | memdir/grep | memdir/rg | CPU memdir / grep / rg |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for pat in [
        "kubernetes upgrade",
        "price ($5)",
        "rollback",
        "no-such-words-anywhere",
    ] {
        let found = Memory::open(&year, Clock::system(jiff::tz::TimeZone::UTC))?
            .search(&SearchRequest::new(pat))?;
        let (m, mc, ml) = time_cmd(
            || {
                let mut c = Command::new(&memdir);
                c.env_clear()
                    .env("MEMDIR_ROOT", &year)
                    .args(["search", "--", pat]);
                c
            },
            a.runs,
        )?;
        let (g, gc, gl) = time_cmd(
            || {
                let mut c = Command::new("grep");
                c.arg("-rniF").arg("--").arg(pat).arg(&year);
                c
            },
            a.runs,
        )?;
        same_lines(pat, "grep", gl, ml)?;
        anyhow::ensure!(
            ml == found.hits.len(),
            "`{pat}`: memdir search printed {ml} lines, the engine found {}",
            found.hits.len()
        );
        let (r, rr, rc) = if rg {
            let (r, rc, rl) = time_cmd(
                || {
                    let mut c = Command::new("rg");
                    c.arg("-niF").arg("--").arg(pat).arg(&year);
                    c
                },
                a.runs,
            )?;
            same_lines(pat, "rg", rl, ml)?;
            (
                format!("{:.1} ms", ms(r)),
                format!("{:.2}x", ms(m) / ms(r)),
                format!("{:.0} ms", ms(rc)),
            )
        } else {
            ("-".into(), "-".into(), "-".into())
        };
        println!(
            "| `{pat}` | {} | {:.1} ms | {:.1} ms | {r} | {:.2}x | {rr} | {:.0} / {:.0} / {rc} |",
            found.hits.len(),
            ms(m),
            ms(g),
            ms(m) / ms(g),
            ms(mc),
            ms(gc)
        );
    }
    // In-process latency: the engine call the MCP server makes, on about 10 MB, from a fresh
    // memory (reads the disk on every call) and from a warm one (the MCP server's).
    let cold = Memory::open(&half, Clock::system(jiff::tz::TimeZone::UTC))?;
    let warm = cold.with_warm_search();
    println!(
        "\nin-process Memory::search on {:.1} MB ({} runs each, after a warm-up call):",
        half_bytes as f64 / 1e6,
        a.runs * 4
    );
    for (kind, mem) in [("cold", &cold), ("warm", &warm)] {
        for pat in ["kubernetes upgrade", "rollback"] {
            let mut req = SearchRequest::new(pat);
            req.max_bytes = Some(memdir::search::DEFAULT_AGENT_MAX_BYTES);
            mem.search(&req)?;
            let mut t = Vec::new();
            for _ in 0..a.runs * 4 {
                let t0 = Instant::now();
                mem.search(&req)?;
                t.push(t0.elapsed());
            }
            t.sort();
            println!(
                "  {kind}, `{pat}` (agent budget {} bytes): p50 {:.2} ms, p95 {:.2} ms",
                memdir::search::DEFAULT_AGENT_MAX_BYTES,
                ms(t[t.len() / 2]),
                ms(t[t.len() * 95 / 100])
            );
        }
    }
    Ok(())
}
