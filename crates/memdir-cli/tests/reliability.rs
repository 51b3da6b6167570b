//! Issue 13: lockouts, torn or duplicated data and hostile inputs, each reproduced through the
//! real binary. Every command that could hang runs under a timeout, so a regression fails
//! instead of stalling the suite.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::Fixture;
use std::time::Duration;

/// Long enough for a slow debug build, short enough that a hang fails the test.
const LIMIT: Duration = Duration::from_secs(20);

/// A file named after one of memdir's own locks (`git`, `index`) is edited under its own lock,
/// not the history's, so the edit neither waits on itself nor blocks other writers.
#[test]
fn issue13_a_file_named_like_a_lock_is_edited_without_deadlock() {
    let f = Fixture::new();
    for name in ["git", "index", "core", "state.md"] {
        f.cmd()
            .args(["write", name, "aaa"])
            .timeout(LIMIT)
            .assert()
            .success();
        f.cmd()
            .args(["edit", name, "--old", "aaa", "--new", "bbb"])
            .timeout(LIMIT)
            .assert()
            .success();
        assert_eq!(f.get(name), "bbb", "{name}");
    }
    f.cmd()
        .args(["write", "notes/after.md", "still writable"])
        .timeout(LIMIT)
        .assert()
        .success();
}
