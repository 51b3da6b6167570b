//! Commit overhead per change on a big folder: the whole-tree staging memdir used before (a
//! status walk, then every changed path staged) against staging only the paths the change
//! touched, in one run, on the same repository, turn about; then a long-lived process's
//! history that follows the folder's change feed (hand edits found from the paths inotify
//! names, not a status walk).
//!
//! Each change is timed in its two git steps, as the engine runs them under the change lock:
//! `prepare` (commit hand edits: a status walk of the whole folder for the first two, the
//! feed's paths for the third) and `commit` (record the change). The change itself is one log
//! append (that they record the same history is the claim of
//! `crates/memdir-cli/tests/git_history.rs` and `crates/memdir/tests/history_feed.rs`). A last
//! column times a whole `Memory::log` (journal, lock, append, both git steps) through each.

use memdir::history::{Change, GitHistory, History};
use memdir::{Actor, Backend, Clock, FolderStore, Memory, Store};
use memdir_core::path::MemPath;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Options of `memdir-bench git`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder sizes to measure, in files.
    #[arg(long, value_delimiter = ',', default_value = "2400,100000")]
    pub files: Vec<usize>,
    /// Changes timed per variant and size.
    #[arg(long, default_value_t = 30)]
    pub changes: usize,
    /// Where to generate the folders (default: the system's temp folder).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

fn clock() -> Clock {
    Clock::fixed(
        "2026-12-31T12:00:00Z".parse().unwrap_or_default(),
        jiff::tz::TimeZone::UTC,
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| ms(*d))
}

/// `n` files of a few hundred bytes, 100 to a folder, as notes and logs of a large memory.
fn generate(root: &Path, n: usize) -> anyhow::Result<()> {
    for i in 0..n {
        let dir = root.join(format!("topics/t{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir)?;
        }
        let mut f = std::fs::File::create(dir.join(format!("f{i:06}.md")))?;
        writeln!(
            f,
            "---\nname: f{i:06}\ndescription: generated file {i}\n---\nline one of {i}\nline two, \
             some words about topic {}\n",
            i / 100
        )?;
    }
    Ok(())
}

struct Row {
    prepare: Vec<Duration>,
    commit: Vec<Duration>,
    log: Vec<Duration>,
}

/// Runs `memdir-bench git`.
pub fn run(a: Args) -> anyhow::Result<()> {
    println!(
        "| files | staging | prepare (hand edits) p50 | commit p50 | prepare + commit p50 | `Memory::log` p50 |"
    );
    println!("|---:|---|---:|---:|---:|---:|");
    for &n in &a.files {
        let tmp = match &a.dir {
            Some(d) => tempfile::tempdir_in(d)?,
            None => tempfile::tempdir()?,
        };
        let root = tmp.path().join("mem");
        std::fs::create_dir_all(&root)?;
        let t = Instant::now();
        generate(&root, n)?;
        let generated = t.elapsed();
        let t = Instant::now();
        drop(Memory::init(&root, clock())?);
        eprintln!(
            "{n} files: generated in {:.1} s, first commit in {:.1} s",
            generated.as_secs_f64(),
            t.elapsed().as_secs_f64()
        );
        let store = FolderStore::open(&root)?;
        let touched = store.touched();
        let store: Arc<dyn Store> = Arc::new(store);
        let before: Arc<dyn History> = Arc::new(GitHistory::new(&root));
        let after: Arc<dyn History> =
            Arc::new(GitHistory::new(&root).with_touched(touched.clone()));
        // A long-lived process's history, following the folder's change feed. It runs on its
        // own after the other two: their commits change git's index under it, which makes it
        // compare the whole tree, as another process's commits would.
        let feed = Arc::new(GitHistory::new(&root).with_touched(touched));
        feed.follow_changes();
        let fed: Arc<dyn History> = feed.clone();
        let actor = Actor::default();
        let log = MemPath::parse_file("log/2026-12-31.md")?;
        let mut rows: [Row; 3] = std::array::from_fn(|_| Row {
            prepare: vec![],
            commit: vec![],
            log: vec![],
        });
        let at = clock().now().timestamp();
        // One warm-up change each, then the first two take turns; the feed goes last.
        let turns = (0..(a.changes + 1) * 2).map(|i| (i, i % 2, i >= 2));
        let fed_turns = (0..=a.changes).map(|i| (i, 2, i >= 1));
        for (i, which, timed) in turns.chain(fed_turns) {
            let h = [&before, &after, &fed][which];
            let t0 = Instant::now();
            h.prepare(at)?;
            let t1 = Instant::now();
            store.append(&log, format!("- 12:00 change {which} {i}\n").as_bytes())?;
            let t2 = Instant::now();
            let id = h.commit(&Change {
                op: "log",
                path: log.as_str(),
                reason: None,
                actor: &actor,
                at,
                via: None,
                whole_tree: false,
            })?;
            let t3 = Instant::now();
            anyhow::ensure!(id.is_some(), "change {i} recorded no commit");
            if timed {
                rows[which].prepare.push(t1 - t0);
                rows[which].commit.push(t3 - t2);
            }
        }
        eprintln!(
            "{n} files: the feed's history compared the whole tree {} times in {} changes",
            feed.whole_tree_comparisons(),
            a.changes + 1
        );
        // Whole changes through the engine, one history then the other.
        for (which, h) in [&before, &after, &fed].into_iter().enumerate() {
            let mem = Memory::open_backend(
                Backend {
                    store: store.clone(),
                    history: Some(h.clone()),
                    vectors: None,
                },
                clock(),
            )?;
            for i in 0..=a.changes {
                let t = Instant::now();
                mem.log(&format!("engine change {i}"))?;
                if i > 0 {
                    rows[which].log.push(t.elapsed());
                }
            }
        }
        for (name, r) in [
            "whole tree (before)",
            "touched paths",
            "touched paths + change feed",
        ]
        .into_iter()
        .zip(rows)
        {
            let total: Vec<Duration> = r
                .prepare
                .iter()
                .zip(&r.commit)
                .map(|(p, c)| *p + *c)
                .collect();
            println!(
                "| {n} | {name} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms |",
                median(r.prepare),
                median(r.commit),
                median(total),
                median(r.log)
            );
        }
    }
    Ok(())
}
