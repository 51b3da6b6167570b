//! `memdir-bench forget-crash`: SIGKILL `memdir forget` at random points of its history
//! rewrite and check that the repository is never broken.
//!
//! A template memory (commits whose log lines and note hold a secret, part of it packed by
//! `git gc`, with a tag, an annotated tag and a second branch) is copied for each trial; the
//! real binary runs `forget --match` on the copy and is killed after a random delay within
//! the time an unkilled forget takes. Right after the kill the harness checks:
//! - `git fsck --strict` is clean (no missing or corrupt object, every ref resolves);
//! - history is the old one (`HEAD` unmoved) or the new one (no version holds the secret);
//!
//! and then that running forget again finishes the job: `git log -p --all`,
//! `git cat-file --batch-all-objects --batch` and the raw files of `.git` hold no trace,
//! `git fsck --unreachable` lists nothing, and the next write succeeds.
//!
//! ```text
//! cargo build --release -p memdir-cli -p memdir-bench
//! target/release/memdir-bench forget-crash --trials 100
//! ```

use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Options of `forget-crash`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Kill trials to run.
    #[arg(long, default_value_t = 100)]
    trials: usize,
    /// Commits in the template memory.
    #[arg(long, default_value_t = 60)]
    commits: usize,
    /// The memdir binary [default: next to this one].
    #[arg(long)]
    memdir: Option<PathBuf>,
    /// Seed of the random kill points.
    #[arg(long, default_value_t = 34)]
    seed: u64,
}

const SECRET: &str = "12 Elm Street";

fn memdir(bin: &Path, root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("MEMDIR_ROOT", root)
        .env("TZ", "UTC")
        .env("HOME", root.parent().unwrap_or(root))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn ok(bin: &Path, root: &Path, args: &[&str]) -> anyhow::Result<()> {
    let out = memdir(bin, root, args).output()?;
    if !out.status.success() {
        bail!(
            "memdir {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<(bool, String)> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

/// True when any file under `dir` holds `needle`, byte for byte.
fn raw_trace(dir: &Path, needle: &[u8]) -> anyhow::Result<Option<PathBuf>> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)?
                .windows(needle.len())
                .any(|w| w == needle)
            {
                return Ok(Some(p));
            }
        }
    }
    Ok(None)
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    let st = Command::new("cp").arg("-a").arg(from).arg(to).status()?;
    anyhow::ensure!(st.success(), "cp -a failed");
    Ok(())
}

fn template(bin: &Path, root: &Path, commits: usize) -> anyhow::Result<()> {
    ok(bin, root, &["init"])?;
    for i in 0..commits {
        match i % 3 {
            0 => ok(bin, root, &["log", &format!("visit {i} to {SECRET}")])?,
            1 => ok(
                bin,
                root,
                &[
                    "write",
                    "notes/me.md",
                    &format!("name: Ann\naddress: {SECRET} {i}\n"),
                ],
            )?,
            _ => ok(bin, root, &["log", &format!("plain entry {i}")])?,
        }
        if i == commits / 2 {
            for args in [
                &["gc", "-q"][..],
                &["tag", "v1"][..],
                &["tag", "-a", "v2", "-m", "a release"][..],
                &["branch", "side"][..],
            ] {
                let (good, out) = git(root, args)?;
                anyhow::ensure!(good, "git {args:?}: {out}");
            }
        }
    }
    Ok(())
}

/// Runs the trials.
pub fn run(a: Args) -> anyhow::Result<()> {
    let bin = crate::memdir_bin(a.memdir.clone())?;
    let dir = tempfile::tempdir()?;
    let tpl = dir.path().join("template");
    std::fs::create_dir_all(&tpl)?;
    let tpl_root = tpl.join("mem");
    template(&bin, &tpl_root, a.commits)?;
    let old_head = git(&tpl_root, &["rev-parse", "HEAD"])?.1;

    // How long an unkilled forget takes: the kills land within it.
    let probe = dir.path().join("probe");
    std::fs::create_dir_all(&probe)?;
    copy_dir(&tpl_root, &probe)?;
    let start = Instant::now();
    ok(&bin, &probe.join("mem"), &["forget", "--match", SECRET])?;
    let full = start.elapsed();
    std::fs::remove_dir_all(&probe)?;
    println!(
        "template: {} commits; an unkilled forget takes {:.1} ms",
        a.commits + 1,
        full.as_secs_f64() * 1000.0
    );

    let mut rng = a.seed.max(1);
    let mut next = || {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let (mut old, mut new, mut finished, mut failures) = (0, 0, 0, Vec::new());
    for trial in 0..a.trials {
        let t = dir.path().join(format!("t{trial}"));
        std::fs::create_dir_all(&t)?;
        copy_dir(&tpl_root, &t)?;
        let root = t.join("mem");
        let delay = Duration::from_micros(next() % (full.as_micros() as u64 + 1).max(1));
        let mut child = memdir(&bin, &root, &["forget", "--match", SECRET]).spawn()?;
        let begun = Instant::now();
        let mut done = false;
        while begun.elapsed() < delay {
            if child.try_wait()?.is_some() {
                done = true;
                break;
            }
            std::hint::spin_loop();
        }
        if !done {
            child.kill()?;
        }
        let status = child.wait()?;
        let mut fail = |what: String| failures.push(format!("trial {trial} ({delay:?}): {what}"));

        let (clean, out) = git(&root, &["fsck", "--strict", "--no-progress"])?;
        if !clean {
            fail(format!("git fsck after the kill: {}", out.trim()));
        }
        let head = git(&root, &["rev-parse", "HEAD"])?.1;
        let (_, log) = git(&root, &["log", "-p", "--all"])?;
        if head == old_head {
            old += 1;
        } else if !log.contains(SECRET) {
            if done && status.success() {
                finished += 1;
            } else {
                new += 1;
            }
        } else {
            fail(format!(
                "HEAD moved but history still holds it ({})",
                head.trim()
            ));
        }

        // Running forget again finishes what the kill cut short.
        if let Err(e) = ok(&bin, &root, &["forget", "--match", SECRET]) {
            fail(format!("forget again: {e}"));
        }
        let (_, log) = git(&root, &["log", "-p", "--all"])?;
        if log.contains(SECRET) {
            fail("git log -p --all still shows it".into());
        }
        let (_, objects) = git(&root, &["cat-file", "--batch-all-objects", "--batch"])?;
        if objects.contains(SECRET) {
            fail("an object still holds it".into());
        }
        let (clean, unreachable) = git(
            &root,
            &["fsck", "--unreachable", "--strict", "--no-progress"],
        )?;
        if !clean || !unreachable.trim().is_empty() {
            fail(format!("git fsck --unreachable: {}", unreachable.trim()));
        }
        if let Some(p) = raw_trace(&root.join(".git"), SECRET.as_bytes())? {
            fail(format!("{} holds it", p.display()));
        }
        if let Err(e) = ok(&bin, &root, &["log", "after the trial"]) {
            fail(format!("the next write: {e}"));
        }
        std::fs::remove_dir_all(&t).with_context(|| format!("removing {}", t.display()))?;
    }
    println!(
        "{} trials: killed with the old history {old}, killed with the new one {new}, finished {finished}; {} failures",
        a.trials,
        failures.len()
    );
    for f in &failures {
        println!("  {f}");
    }
    if !failures.is_empty() {
        bail!("{} of {} trials failed", failures.len(), a.trials);
    }
    Ok(())
}
