//! Races: concurrent appenders, and a folder flipped to a symlink while writes run. These run
//! without git so they measure the files alone; `provenance.rs` stresses writers with git.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::Fixture;
use std::collections::HashSet;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn eight_processes_times_500_appends_lose_and_tear_nothing() {
    let f = Fixture::new_no_git();
    let root = f.root();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let root = root.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    let st = Command::new(common::bin())
                        .env_clear()
                        .env("MEMDIR_ROOT", &root)
                        .env("MEMDIR_NOW", common::NOW)
                        .env("TZ", "UTC")
                        .args(["log", &format!("writer {w} entry {i} {}", "x".repeat(300))])
                        .output()
                        .unwrap();
                    assert!(
                        st.status.success(),
                        "{}",
                        String::from_utf8_lossy(&st.stderr)
                    );
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let log = f.get("log/2026-11-30.md");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 4000);
    let mut seen = HashSet::new();
    for l in &lines {
        let rest = l
            .strip_prefix("- 09:15 writer ")
            .unwrap_or_else(|| panic!("torn line: {l:?}"));
        assert!(rest.ends_with(&"x".repeat(300)), "torn line: {l:?}");
        assert!(seen.insert(rest.to_string()), "duplicate line: {l:?}");
    }
}

#[test]
fn a_folder_swapped_for_an_outside_symlink_never_receives_a_byte() {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    let f = Fixture::new_no_git();
    let root = f.root();
    let outside = f.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::create_dir(root.join("d")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("d_swap")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, root) = (stop.clone(), root.clone());
        std::thread::spawn(move || {
            let (a, b) = (root.join("d"), root.join("d_swap"));
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
                flips += 1;
            }
            flips
        })
    };
    let mut ok = 0;
    for i in 0..300 {
        let cmd = if i % 2 == 0 { "write" } else { "mv" };
        let out = match cmd {
            "write" => Command::new(common::bin())
                .env_clear()
                .env("MEMDIR_ROOT", &root)
                .args(["write", &format!("d/f{i}.md"), "payload"])
                .output()
                .unwrap(),
            _ => Command::new(common::bin())
                .env_clear()
                .env("MEMDIR_ROOT", &root)
                .args(["mv", "core.md", &format!("d/core{i}.md")])
                .output()
                .unwrap(),
        };
        if out.status.success() {
            ok += 1;
            if cmd == "mv" {
                // Put core.md back for the next round if the move landed inside.
                let _ = Command::new(common::bin())
                    .env_clear()
                    .env("MEMDIR_ROOT", &root)
                    .args(["mv", &format!("d/core{i}.md"), "core.md"])
                    .output();
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 100, "the flipper barely ran: {flips}");
    let leaked: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        leaked.is_empty(),
        "bytes landed outside the root: {leaked:?} ({ok} writes succeeded)"
    );
}
