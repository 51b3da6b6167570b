//! `memdir-bench crash`: SIGKILL the real `memdir` binary at random points of every kind of
//! write, with and without git, and check after each kill what a crash may never do.
//!
//! After each killed (or finished) command the harness checks:
//! - every whole file memdir wrote holds its old or its new content, never a mix (torn file);
//! - every log line is one whole entry (torn line), and every append that exited 0 is there
//!   (lost acknowledged append);
//! - the next write succeeds within a time limit (lockout), and recovers what the kill left;
//! - `MEMORY.md` is what `memdir index` would generate;
//! - with git: `git fsck` is clean, the change was committed by its real writer (no
//!   `hand-edit` commit ever appears: the harness never edits by hand), and no temp file of a
//!   killed write is left once the next write ran.
//!
//! ```text
//! cargo build --release -p memdir-cli -p memdir-bench
//! target/release/memdir-bench crash --trials 1000
//! ```

use anyhow::bail;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Options of `crash`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kill trials to run (split between a folder with git and one without).
    #[arg(long, default_value_t = 200)]
    trials: usize,
    /// The memdir binary [default: next to this one].
    #[arg(long)]
    memdir: Option<PathBuf>,
    /// Seed of the random kill points and operations.
    #[arg(long, default_value_t = 13)]
    seed: u64,
    /// Where to keep the folders (a temp dir by default, removed at the end).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// xorshift64*: a seeded, reproducible stream; no need for a crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    LogSmall,
    LogLarge,
    Write,
    WriteLarge,
    Edit,
    NoteNew,
    Scratch,
    Core,
}

const KINDS: [Kind; 8] = [
    Kind::LogSmall,
    Kind::LogLarge,
    Kind::Write,
    Kind::WriteLarge,
    Kind::Edit,
    Kind::NoteNew,
    Kind::Scratch,
    Kind::Core,
];

#[derive(Debug, Default)]
struct Tally {
    trials: usize,
    killed: usize,
    finished: usize,
    torn_files: usize,
    torn_lines: usize,
    lost_appends: usize,
    lockouts: usize,
    fsck_failures: usize,
    stale_index: usize,
    hand_edit_commits: usize,
    leftover_temps: usize,
    failures: Vec<String>,
}

struct Folder {
    root: PathBuf,
    git: bool,
    /// Each whole file the harness wrote, with the contents it may hold now (`None`: absent).
    files: BTreeMap<String, Vec<Option<String>>>,
    /// Every log entry (its text) whose append exited 0.
    acked: Vec<String>,
}

struct Runner {
    memdir: PathBuf,
    home: PathBuf,
}

impl Runner {
    fn cmd(&self, f: &Folder, args: &[&str], stdin: bool) -> Command {
        let mut c = Command::new(&self.memdir);
        c.env_clear()
            .env("MEMDIR_ROOT", &f.root)
            .env("MEMDIR_NOW", "2026-11-30T09:15:00Z")
            .env("TZ", "UTC")
            .env("HOME", &self.home)
            .env("MEMDIR_WRITER", "agent7")
            .args(["--reason", "crash trial"])
            .args(args)
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    /// Runs to the end, at most `limit`; `None` when it did not end in time (a lockout).
    fn run(&self, f: &Folder, args: &[&str], limit: Duration) -> anyhow::Result<Option<bool>> {
        let mut child = self.cmd(f, args, false).spawn()?;
        let start = Instant::now();
        loop {
            if let Some(st) = child.try_wait()? {
                return Ok(Some(st.success()));
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Starts `args` and kills it with SIGKILL after `delay`; true when it finished with exit
    /// 0 first (the change was acknowledged).
    fn kill_after(&self, f: &Folder, op: &Op, delay: Duration) -> anyhow::Result<(bool, bool)> {
        let args = to_refs(&op.args);
        let mut child = self.cmd(f, &args, op.stdin.is_some()).spawn()?;
        let start = Instant::now();
        if let (Some(text), Some(mut pipe)) = (&op.stdin, child.stdin.take()) {
            use std::io::Write;
            // The whole body goes in before the clock of the kill starts.
            let _ = pipe.write_all(text.as_bytes());
        }
        while start.elapsed() < delay {
            if let Some(st) = child.try_wait()? {
                return Ok((st.success(), false));
            }
            std::hint::spin_loop();
        }
        if let Some(st) = child.try_wait()? {
            return Ok((st.success(), false));
        }
        child.kill()?;
        child.wait()?;
        Ok((false, true))
    }
}

fn payload(rng: &mut Rng, tag: &str, len: usize) -> String {
    let alphabet = b"abcdefghijklmnopqrstuvwxyz";
    let body: String = (0..len)
        .map(|_| alphabet[rng.below(26) as usize] as char)
        .collect();
    // The length is part of the text, so a cut-short copy is recognisable.
    format!("{tag}-{len}-{body}")
}

/// True when `text` is a whole payload: `tag-len-body` with exactly `len` body bytes.
fn whole(text: &str) -> bool {
    let mut parts = text.splitn(3, '-');
    let (Some(_), Some(len), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    len.parse::<usize>().is_ok_and(|n| n == body.len())
}

/// Runs the trials and prints the tally; fails when any check failed.
pub fn run(a: Args) -> anyhow::Result<()> {
    let memdir = crate::memdir_bin(a.memdir.clone())?;
    let temp = tempfile::tempdir()?;
    let base = a.dir.clone().unwrap_or_else(|| temp.path().to_path_buf());
    std::fs::create_dir_all(&base)?;
    let runner = Runner {
        memdir,
        home: base.clone(),
    };
    let mut rng = Rng(a.seed.max(1));
    let mut folders = Vec::new();
    for git in [true, false] {
        let root = base.join(if git { "with-git" } else { "no-git" });
        let _ = std::fs::remove_dir_all(&root);
        let f = Folder {
            root,
            git,
            // `init` writes an empty core.md.
            files: BTreeMap::from([("core.md".to_string(), vec![Some(String::new())])]),
            acked: Vec::new(),
        };
        let init: &[&str] = if git {
            &["init"]
        } else {
            &["init", "--no-git"]
        };
        if runner.run(&f, init, Duration::from_secs(30))? != Some(true) {
            bail!("memdir init failed in {}", f.root.display());
        }
        folders.push(f);
    }
    // How long each kind takes when left alone: kills land anywhere in that window.
    let mut took: BTreeMap<Kind, Duration> = BTreeMap::new();
    for kind in KINDS {
        let start = Instant::now();
        let f = &mut folders[0];
        let args = op_args(kind, f, &mut rng, 0);
        runner.kill_after(f, &args, Duration::from_secs(30))?;
        took.insert(kind, start.elapsed());
        settle(f, &args, true);
    }
    let mut tally = Tally::default();
    let mut per_kind: BTreeMap<Kind, (usize, usize)> = BTreeMap::new();
    for trial in 1..=a.trials {
        let fi = trial % 2;
        let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
        let window = took
            .get(&kind)
            .copied()
            .unwrap_or(Duration::from_millis(20));
        let delay = Duration::from_micros(rng.below(window.as_micros() as u64 * 12 / 10 + 1));
        let f = &mut folders[fi];
        let op = op_args(kind, f, &mut rng, trial);
        let (acked, killed) = runner.kill_after(f, &op, delay)?;
        tally.trials += 1;
        let k = per_kind.entry(kind).or_default();
        k.0 += 1;
        if killed {
            tally.killed += 1;
            k.1 += 1;
        } else {
            tally.finished += 1;
        }
        settle(f, &op, acked);
        check(&runner, f, trial, &mut tally)?;
    }
    for f in &folders {
        if f.git {
            fsck(f, usize::MAX, &mut tally);
        }
    }
    println!(
        "crash trials: {} ({} killed, {} finished before the kill)",
        tally.trials, tally.killed, tally.finished
    );
    for (kind, (n, killed)) in &per_kind {
        println!(
            "  {kind:?}: {n} trials, {killed} killed (window {:?})",
            took[kind]
        );
    }
    println!("torn files: {}", tally.torn_files);
    println!("torn log lines: {}", tally.torn_lines);
    println!("lost acknowledged appends: {}", tally.lost_appends);
    println!("lockouts (next write failed or hung): {}", tally.lockouts);
    println!("git fsck failures: {}", tally.fsck_failures);
    println!(
        "MEMORY.md stale after the next write: {}",
        tally.stale_index
    );
    println!(
        "hand-edit commits (provenance lost): {}",
        tally.hand_edit_commits
    );
    println!(
        "temp files left after the next write: {}",
        tally.leftover_temps
    );
    for line in tally.failures.iter().take(20) {
        println!("  {line}");
    }
    let bad = tally.torn_files
        + tally.torn_lines
        + tally.lost_appends
        + tally.lockouts
        + tally.fsck_failures
        + tally.stale_index
        + tally.hand_edit_commits
        + tally.leftover_temps;
    if bad > 0 {
        bail!("{bad} checks failed");
    }
    Ok(())
}

struct Op {
    args: Vec<String>,
    /// The body, given on stdin (`-`), for bodies too large for an argument.
    stdin: Option<String>,
    /// A whole file this op writes, and its new content.
    file: Option<(String, String)>,
    /// A log entry this op appends.
    entry: Option<String>,
}

fn to_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn op_args(kind: Kind, f: &Folder, rng: &mut Rng, trial: usize) -> Op {
    let tag = format!("t{trial}");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    match kind {
        Kind::LogSmall | Kind::LogLarge => {
            let len = if kind == Kind::LogLarge {
                200_000 + rng.below(300_000) as usize
            } else {
                20 + rng.below(200) as usize
            };
            let text = payload(rng, &tag, len);
            Op {
                args: s(&["log", "-"]),
                stdin: Some(text.clone()),
                file: None,
                entry: Some(text),
            }
        }
        Kind::Write | Kind::WriteLarge | Kind::Core => {
            let len = if kind == Kind::WriteLarge {
                500_000 + rng.below(1_500_000) as usize
            } else {
                10 + rng.below(2000) as usize
            };
            let path = match kind {
                Kind::Core => "core.md".to_string(),
                _ => format!("docs/w{}.md", rng.below(4)),
            };
            let len = if kind == Kind::Core {
                len.min(1500)
            } else {
                len
            };
            let text = payload(rng, &tag, len);
            Op {
                args: s(&["write", &path, "-"]),
                stdin: Some(text.clone()),
                file: Some((path, text)),
                entry: None,
            }
        }
        Kind::Edit => {
            let path = "docs/e.md".to_string();
            let current = f
                .files
                .get(&path)
                .and_then(|v| v.first())
                .cloned()
                .flatten();
            match current {
                Some(old) => {
                    let len = 10 + rng.below(500) as usize;
                    let new = payload(rng, &tag, len);
                    Op {
                        args: s(&["edit", &path, "--old", &old, "--new", &new]),
                        stdin: None,
                        file: Some((path, new)),
                        entry: None,
                    }
                }
                None => {
                    let new = payload(rng, &tag, 40);
                    Op {
                        args: s(&["write", &path, &new]),
                        stdin: None,
                        file: Some((path, new)),
                        entry: None,
                    }
                }
            }
        }
        Kind::NoteNew => {
            let name = format!("n{}", rng.below(6));
            let desc = payload(rng, &tag, 12);
            Op {
                args: s(&["note", "new", &name, "-d", &desc, "--force", "body"]),
                stdin: None,
                file: None,
                entry: None,
            }
        }
        Kind::Scratch => {
            let len = 10 + rng.below(1000) as usize;
            let body = payload(rng, &tag, len);
            Op {
                args: s(&["scratch", "s1", &body, "--ttl", "1d"]),
                stdin: None,
                file: None,
                entry: None,
            }
        }
    }
}

/// Updates the model after an op: an acknowledged change is what the file must hold now; a
/// killed one may or may not have happened.
fn settle(f: &mut Folder, op: &Op, acked: bool) {
    if let Some((path, new)) = &op.file {
        let old = f.files.get(path).cloned().unwrap_or(vec![None]);
        let mut allowed = vec![Some(new.clone())];
        if !acked {
            allowed.extend(old);
        }
        f.files.insert(path.clone(), allowed);
    }
    if let (Some(e), true) = (&op.entry, acked) {
        f.acked.push(e.clone());
    }
}

fn check(r: &Runner, f: &mut Folder, trial: usize, t: &mut Tally) -> anyhow::Result<()> {
    // The next write must go through, and finishes what the kill left.
    let after = format!("a{trial}-3-abc");
    match r.run(f, &["log", &after], Duration::from_secs(30))? {
        Some(true) => f.acked.push(after),
        Some(false) | None => {
            t.lockouts += 1;
            let out = r.cmd(f, &["log", &after], false).output()?;
            t.failures.push(format!(
                "trial {trial}: the next write failed or hung in {}: {}",
                f.root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return Ok(());
        }
    }
    // Whole files: old or new, never a mix. The model then knows which one is there.
    for (path, allowed) in f.files.iter_mut() {
        let now = std::fs::read_to_string(f.root.join(path)).ok();
        match now {
            now if allowed.contains(&now) => *allowed = vec![now],
            other => {
                t.torn_files += 1;
                t.failures.push(format!(
                    "trial {trial}: {path} holds {} bytes that are neither the old nor the new content",
                    other.map_or(0, |s| s.len())
                ));
            }
        }
    }
    // Logs: every line whole, every acknowledged entry present.
    let log = std::fs::read_to_string(f.root.join("log/2026-11-30.agent7.md")).unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    for line in log.lines() {
        let Some(text) = line.strip_prefix("- 09:15 ") else {
            t.torn_lines += 1;
            t.failures.push(format!(
                "trial {trial}: log line not an entry: {:.60}",
                line
            ));
            continue;
        };
        if !whole(text) {
            t.torn_lines += 1;
            t.failures
                .push(format!("trial {trial}: torn log line: {:.60}", text));
        }
        seen.insert(text.to_string());
    }
    if !log.is_empty() && !log.ends_with('\n') {
        t.torn_lines += 1;
        t.failures
            .push(format!("trial {trial}: the log ends in a fragment"));
    }
    for e in &f.acked {
        if !seen.contains(e) {
            t.lost_appends += 1;
            t.failures.push(format!(
                "trial {trial}: acknowledged entry {:.30} is lost",
                e
            ));
        }
    }
    // MEMORY.md is what the notes say: `memdir index` changes nothing.
    let index = f.root.join("MEMORY.md");
    let before = std::fs::read(&index).ok();
    if r.run(f, &["index"], Duration::from_secs(30))? != Some(true) {
        t.lockouts += 1;
        t.failures
            .push(format!("trial {trial}: memdir index failed"));
    }
    if std::fs::read(&index).ok() != before {
        t.stale_index += 1;
        t.failures.push(format!(
            "trial {trial}: MEMORY.md was stale after the next write"
        ));
    }
    // Temp files of the killed write are gone (the next write cleaned its folder).
    for dir in ["", "docs", "log", "scratch", "notes", ".memdir"] {
        if let Ok(rd) = std::fs::read_dir(f.root.join(dir)) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && name.ends_with(".tmp") {
                    t.leftover_temps += 1;
                    t.failures
                        .push(format!("trial {trial}: temp file {dir}/{name} left"));
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    if f.git {
        let authors = git(&f.root, &["log", "--format=%an"])?;
        let hand = authors.lines().filter(|a| *a == "hand-edit").count();
        if hand > t.hand_edit_commits {
            t.failures.push(format!(
                "trial {trial}: a change was committed as hand-edit"
            ));
            t.hand_edit_commits = hand;
        }
        fsck(f, trial, t);
    }
    Ok(())
}

fn fsck(f: &Folder, trial: usize, t: &mut Tally) {
    if trial != usize::MAX && !trial.is_multiple_of(25) {
        return;
    }
    let ok = Command::new("git")
        .arg("-C")
        .arg(&f.root)
        .args(["fsck", "--no-progress", "--no-dangling"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        t.fsck_failures += 1;
        t.failures.push(format!(
            "after trial {trial}: git fsck failed in {}",
            f.root.display()
        ));
    }
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
