//! Two processes append 500 lines each to the same day's log on S3, at the same time: every
//! line arrives whole and none is lost. The processes are this test binary run again with
//! `--child` (so it needs no harness: `harness = false` in Cargo.toml).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use memdir_core::path::MemPath;
use memdir_store::Store;
use std::process::Command;

const LINES: usize = 500;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], &args[i + 2], &args[i + 3], &args[i + 4]);
        return;
    }
    // `cargo test -- NAME` filters: run unless filtered out by a name that is not ours.
    if args
        .iter()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"two_processes_append_500_lines_each".contains(a.as_str()))
    {
        return;
    }
    let Some(bucket) = common::TestBucket::new() else {
        return;
    };
    let log = "log/2026-12-01.md";
    // The tenant exists before the children race to append.
    drop(bucket.store("shared"));
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|w| {
            Command::new(&exe)
                .args(["--child", &bucket.endpoint, &bucket.bucket, log, w])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a child process failed");
    }
    let text = String::from_utf8(
        bucket
            .store("shared")
            .read(&MemPath::parse(log).unwrap())
            .unwrap(),
    )
    .unwrap();
    let mut got: Vec<&str> = text.lines().collect();
    assert_eq!(got.len(), 2 * LINES, "lines were lost or torn");
    got.sort_unstable();
    let mut want: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|w| {
            (0..LINES).map(move |i| format!("- 09:{:02} writer {w} entry {i:03}", i % 60))
        })
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
    println!("two_processes_append_500_lines_each: 1000 lines, none lost");
}

fn child(endpoint: &str, bucket: &str, log: &str, writer: &str) {
    let b = common::TestBucket {
        endpoint: endpoint.to_string(),
        bucket: bucket.to_string(),
    };
    let s = b.store("shared");
    let path = MemPath::parse(log).unwrap();
    for i in 0..LINES {
        let line = format!("- 09:{:02} writer {writer} entry {i:03}\n", i % 60);
        s.append(&path, line.as_bytes()).unwrap();
    }
}
