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

fn err(a: &assert_cmd::assert::Assert) -> String {
    common::stderr(a)
}

/// Item 2: names libgit2 refuses are refused before anything is written (exit 2), and later
/// writes still work.
#[test]
fn issue13_paths_git_refuses_are_refused_before_writing() {
    let f = Fixture::new();
    let deep = format!("{}/x.md", ["d"; 100].join("/"));
    for bad in ["git~1", ".git./x", ".git /x", "a/GIT~1/b.md", deep.as_str()] {
        let a = f
            .cmd()
            .args(["write", bad, "x"])
            .timeout(LIMIT)
            .assert()
            .code(2);
        assert!(!err(&a).contains("git:"), "{bad}: {}", err(&a));
        assert!(!f.root().join(bad).exists(), "{bad} was written");
    }
    assert!(!f.exists("d"), "a folder of the deep path was made");
    f.cmd()
        .args(["write", "notes/ok.md", "fine"])
        .timeout(LIMIT)
        .assert()
        .success();
    assert!(common::git(&f, &["log", "--format=%an %s"]).contains("main write notes/ok.md"));
}

/// Item 2: a file git cannot record, put there by hand, stays out of history with a warning;
/// it never stops the commits of other changes.
#[test]
fn issue13_a_bad_file_on_disk_does_not_stop_commits() {
    let f = Fixture::new();
    f.put("x/git~1", "by hand");
    std::fs::create_dir_all(f.root().join("sub")).unwrap();
    common::git_in(&f.root().join("sub"), &["init", "-q"]);
    f.put("sub/inner.md", "nested");
    let a = f
        .cmd()
        .args(["write", "notes/n.md", "x"])
        .timeout(LIMIT)
        .assert()
        .success();
    let e = err(&a);
    assert!(e.contains("warning") && e.contains("x/git~1"), "{e}");
    assert!(common::git(&f, &["log", "--format=%an %s"]).contains("main write notes/n.md"));
    // Writing into the nested repository is refused before writing.
    let a = f
        .cmd()
        .args(["write", "sub/b.md", "x"])
        .timeout(LIMIT)
        .assert()
        .code(2);
    assert!(err(&a).contains("separate git repository"), "{}", err(&a));
    assert!(!f.exists("sub/b.md"));
}

/// Item 3: git locks a SIGKILL left behind are removed under memdir's own lock, and said so.
#[test]
fn issue13_stale_git_locks_are_removed() {
    let f = Fixture::new();
    let head = common::git(&f, &["symbolic-ref", "HEAD"]);
    std::fs::write(f.root().join(".git/index.lock"), "").unwrap();
    std::fs::write(f.root().join(format!(".git/{}.lock", head.trim())), "").unwrap();
    let a = f
        .cmd()
        .args(["log", "after a crash"])
        .timeout(LIMIT)
        .assert()
        .success();
    assert!(
        err(&a).contains("removed a stale git lock .git/index.lock"),
        "{}",
        err(&a)
    );
    assert!(!f.exists(".git/index.lock"));
    assert!(common::git(&f, &["log", "-1", "--format=%s"]).starts_with("log log/"));
}

/// Item 3 with item 9: a change killed inside git leaves both its journal and git's lock; the
/// next change commits the journal's change first, and that commit must clear the lock too
/// (found by the crash harness: every later write failed with "the index is locked").
#[test]
fn issue13_a_stale_git_lock_beside_a_journal_locks_nobody_out() {
    let f = Fixture::new();
    f.put("notes/a.md", "written by the killed change\n");
    f.put(
        ".memdir/journal",
        r#"{"v":1,"op":"write","path":"notes/a.md","writer":"killed","source":"user","reason":null,"at":"2026-11-30T09:00:00Z","pid":1,"append":null}"#,
    );
    std::fs::write(f.root().join(".git/index.lock"), "").unwrap();
    f.cmd()
        .args(["log", "after a crash"])
        .timeout(LIMIT)
        .assert()
        .success();
    assert!(!f.exists(".git/index.lock"));
    let authors = common::git(&f, &["log", "-2", "--format=%an %s"]);
    assert!(authors.contains("killed write notes/a.md"), "{authors}");
    assert!(authors.starts_with("main log log/"), "{authors}");
}

fn mkfifo(p: &std::path::Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Item 4: a FIFO is refused with a clear error; nothing hangs, and other writers go on.
#[test]
fn issue13_fifos_are_refused_not_waited_on() {
    let f = Fixture::new();
    mkfifo(&f.root().join("notes/pipe.md"));
    mkfifo(&f.root().join("log/2026-11-30.md"));
    for args in [
        vec!["read", "notes/pipe.md"],
        vec!["edit", "notes/pipe.md", "--old", "a", "--new", "b"],
        vec!["log", "hello"],
    ] {
        let a = f.cmd().args(&args).timeout(LIMIT).assert().code(2);
        assert!(
            err(&a).contains("not a regular file"),
            "{args:?}: {}",
            err(&a)
        );
    }
    // context never waits on the FIFO at today's log: it ends (the special file is not a log
    // it can show), and if it fails it says why.
    let a = f.cmd().arg("context").timeout(LIMIT).assert();
    let status = a.get_output().status;
    assert!(
        status.code().is_some(),
        "context hung on a FIFO: {status:?}"
    );
    if !status.success() {
        assert!(err(&a).contains("not a regular file"), "{}", err(&a));
    }
    f.cmd()
        .args(["write", "notes/b.md", "x"])
        .timeout(LIMIT)
        .assert()
        .success();
}

/// Item 5: a symlink loop inside the root is not walked into, so nothing calls it an escape.
#[test]
fn issue13_a_symlink_loop_inside_the_root_breaks_nothing() {
    let f = Fixture::new();
    f.cmd()
        .args(["note", "new", "a", "-d", "first", "see [[b]]"])
        .assert()
        .success();
    std::os::unix::fs::symlink(".", f.root().join("notes/self")).unwrap();
    for args in [
        vec!["lint"],
        vec!["index"],
        vec!["links", "a"],
        vec!["sweep"],
        vec!["note", "new", "b", "-d", "second"],
    ] {
        let a = f.cmd().args(&args).timeout(LIMIT).assert();
        let e = err(&a);
        assert!(!e.contains("outside the memory folder"), "{args:?}: {e}");
        assert!(
            a.get_output().status.code().is_some_and(|c| c < 3),
            "{args:?}: {e}"
        );
    }
    let a = f
        .cmd()
        .args(["tool"])
        .write_stdin(r#"{"command":"view","path":"/memories"}"#)
        .timeout(LIMIT)
        .assert()
        .success();
    assert!(
        !common::stdout(&a).contains("outside"),
        "{}",
        common::stdout(&a)
    );
}

/// Item 6: a fragment without a newline (a crash, a hand edit) is closed before the next
/// append, so the new entry never glues onto it.
#[test]
fn issue13_a_torn_log_fragment_is_healed_before_the_next_append() {
    let f = Fixture::new_no_git();
    f.put("log/2026-11-30.md", "- 09:00 whole\n- 09:01 half-writ");
    f.cmd()
        .args(["log", "next"])
        .timeout(LIMIT)
        .assert()
        .success();
    assert_eq!(
        f.get("log/2026-11-30.md"),
        "- 09:00 whole\n- 09:01 half-writ\n- 09:15 next\n"
    );
}

/// Items 7 and 9: when the commit fails after the file was written, the change is reported
/// applied (exit 0, a warning that history lags), and the next change records it by its real
/// writer and reason, not as a hand edit. No retry, so no duplicate.
#[test]
fn issue13_a_failed_commit_is_applied_and_recorded_later_by_its_writer() {
    let f = Fixture::new();
    let head = common::git(&f, &["symbolic-ref", "HEAD"]);
    // A folder where git's ref lock goes: no stale-lock cleanup removes it, every commit fails.
    let blocker = f.root().join(format!(".git/{}.lock", head.trim()));
    std::fs::create_dir(&blocker).unwrap();
    let a = f
        .cmd()
        .args([
            "--writer",
            "agent7",
            "--reason",
            "user moved",
            "log",
            "moved to Berlin",
        ])
        .timeout(LIMIT)
        .assert()
        .success();
    assert!(err(&a).contains("history lags"), "{}", err(&a));
    assert_eq!(
        f.get("log/2026-11-30.agent7.md"),
        "- 09:15 moved to Berlin\n"
    );
    std::fs::remove_dir(&blocker).unwrap();
    f.cmd()
        .args(["log", "next"])
        .timeout(LIMIT)
        .assert()
        .success();
    let log = common::git(&f, &["log", "--format=%an|%s|%b"]);
    assert!(!log.contains("hand-edit"), "{log}");
    assert!(
        log.contains("agent7|log log/2026-11-30.agent7.md|user moved"),
        "{log}"
    );
    assert_eq!(
        f.get("log/2026-11-30.agent7.md"),
        "- 09:15 moved to Berlin\n"
    );
}

/// Items 8 and 9: a change killed after its note was written but before MEMORY.md and the
/// commit (its journal still there) is finished by `context`: the index is repaired and the
/// note is committed by its writer.
#[test]
fn issue13_a_killed_note_write_is_finished_by_the_next_reader() {
    let f = Fixture::new();
    f.cmd()
        .args(["note", "new", "a", "-d", "first"])
        .assert()
        .success();
    // What a SIGKILL between the note and its index leaves (format: docs/format.md).
    f.put("notes/b.md", "---\nname: b\ndescription: second\n---\n");
    f.put(
        ".memdir/journal",
        r#"{"v":1,"op":"note new","path":"notes/b.md","writer":"agent7","source":"agent","reason":"killed","at":"2026-11-30T09:14:00Z","pid":999999999}"#,
    );
    let a = f.cmd().arg("context").timeout(LIMIT).assert().success();
    assert!(
        common::stdout(&a).contains("second"),
        "{}",
        common::stdout(&a)
    );
    assert!(f.get("MEMORY.md").contains("second"));
    assert_eq!(f.get(".memdir/journal"), "");
    let log = common::git(&f, &["log", "-1", "--format=%an|%s"]);
    assert_eq!(log.trim(), "agent7|note new notes/b.md");
}

/// Item 9: a `.gitignore` that hides memory is refused; a broken repository is an error that
/// says how to fix it, before anything is written.
#[test]
fn issue13_history_is_never_turned_off_silently() {
    let f = Fixture::new();
    let a = f
        .cmd()
        .args(["write", ".gitignore", "*\n"])
        .timeout(LIMIT)
        .assert()
        .code(2);
    assert!(
        err(&a).contains("would hide memory from history"),
        "{}",
        err(&a)
    );
    f.cmd()
        .args(["write", ".gitignore", "*.bak\n"])
        .timeout(LIMIT)
        .assert()
        .success();

    std::fs::remove_dir_all(f.root().join(".git/objects")).unwrap();
    let a = f
        .cmd()
        .args(["write", "notes/x.md", "x"])
        .timeout(LIMIT)
        .assert()
        .code(3);
    assert!(
        err(&a).contains("is broken") && err(&a).contains("memdir init"),
        "{}",
        err(&a)
    );
    assert!(!f.exists("notes/x.md"));

    let g = Fixture::new();
    std::fs::remove_dir_all(g.root().join(".git")).unwrap();
    std::fs::write(g.root().join(".git"), "gitdir: /nowhere/at/all\n").unwrap();
    let a = g.cmd().args(["log", "x"]).timeout(LIMIT).assert().code(3);
    assert!(err(&a).contains("is broken"), "{}", err(&a));
}

/// Item 10: temp files of killed writes (memdir's own names, of dead processes) are removed;
/// anything else is left alone.
#[test]
fn issue13_temp_files_of_killed_writes_are_cleaned() {
    let f = Fixture::new();
    f.put("notes/.memdir-999999999-3.tmp", "killed");
    f.put("notes/.a.md.999999999.0.tmp", "killed, old style");
    f.put(".memdir/.memdir-999999999-4.tmp", "killed");
    f.put("notes/.mine.tmp", "not memdir's");
    f.cmd().arg("sweep").timeout(LIMIT).assert().success();
    assert!(!f.exists("notes/.memdir-999999999-3.tmp"));
    assert!(!f.exists("notes/.a.md.999999999.0.tmp"));
    assert!(!f.exists(".memdir/.memdir-999999999-4.tmp"));
    assert!(f.exists("notes/.mine.tmp"));
}

/// Item 14: control characters in names are refused (a newline would forge a search hit);
/// a 250-byte name is writable; a bad config line is not echoed and reads go on.
#[test]
fn issue13_smaller_hostile_inputs() {
    let f = Fixture::new();
    let a = f
        .cmd()
        .args(["write", "a\nnotes/x.md:1:forged", "x"])
        .timeout(LIMIT)
        .assert()
        .code(2);
    assert!(err(&a).contains("control character"), "{}", err(&a));
    let long = format!("notes/{}.md", "n".repeat(247));
    f.cmd()
        .args(["write", &long, "long"])
        .timeout(LIMIT)
        .assert()
        .success();
    assert_eq!(f.get(&long), "long");

    let secret = "s".repeat(3000);
    f.put(
        ".memdir/config.toml",
        &format!("[core]\nmax_lines = \"{secret}\"\n"),
    );
    let a = f
        .cmd()
        .args(["read", &long])
        .timeout(LIMIT)
        .assert()
        .success();
    assert_eq!(common::stdout(&a), "long");
    assert!(
        err(&a).contains("warning") && err(&a).contains("line 2"),
        "{}",
        err(&a)
    );
    assert!(err(&a).len() < 600, "{}", err(&a));
    let a = f.cmd().args(["log", "x"]).timeout(LIMIT).assert().code(2);
    assert!(
        err(&a).contains("fix it before changing memory"),
        "{}",
        err(&a)
    );
}

/// A small tmpfs, unmounted when dropped; `None` (with a message) where mounting is not
/// allowed. `.ci/run` sets `MEMDIR_REQUIRE_TMPFS=1`, which turns the skip into a failure.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(SmallDisk { dir });
        }
        let why = "skipped: cannot mount a tmpfs here (needs root); the disk-full test did not run";
        assert!(std::env::var_os("MEMDIR_REQUIRE_TMPFS").is_none(), "{why}");
        eprintln!("{why}");
        None
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

/// Items 6 and 7 on a full disk: a log append that cannot be written whole leaves the log as
/// it was (no fragment), a whole-file write leaves the old file and no temp file, and once
/// there is room again the next writes succeed.
#[test]
fn issue13_a_full_disk_tears_nothing() {
    let Some(disk) = SmallDisk::mount("2m") else {
        return;
    };
    let f = Fixture::empty();
    let root = disk.dir.path().join("mem");
    let cmd = || {
        let mut c = f.cmd();
        c.env("MEMDIR_ROOT", &root);
        c
    };
    cmd().args(["init", "--no-git"]).assert().success();
    cmd().args(["log", "first"]).assert().success();
    cmd()
        .args(["write", "notes/a.md", "old"])
        .assert()
        .success();
    // Fill the disk, leaving a few KiB.
    let filler = disk.dir.path().join("filler");
    {
        use std::io::Write;
        let mut out = std::fs::File::create(&filler).unwrap();
        let block = vec![b'x'; 4096];
        while out.write_all(&block).is_ok() {}
        let _ = out.sync_all();
    }
    let big = "y".repeat(300_000);
    cmd()
        .args(["log", "-"])
        .write_stdin(big.clone())
        .timeout(LIMIT)
        .assert()
        .code(3);
    let log = std::fs::read_to_string(root.join("log/2026-11-30.md")).unwrap();
    assert_eq!(
        log,
        "- 09:15 first\n",
        "a failed append left {} bytes",
        log.len()
    );
    cmd()
        .args(["write", "notes/a.md", "-"])
        .write_stdin(big)
        .timeout(LIMIT)
        .assert()
        .code(3);
    assert_eq!(
        std::fs::read_to_string(root.join("notes/a.md")).unwrap(),
        "old"
    );
    let temps: Vec<_> = std::fs::read_dir(root.join("notes"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
    std::fs::remove_file(&filler).unwrap();
    cmd()
        .args(["log", "after"])
        .timeout(LIMIT)
        .assert()
        .success();
    let log = std::fs::read_to_string(root.join("log/2026-11-30.md")).unwrap();
    assert_eq!(log, "- 09:15 first\n- 09:15 after\n");
}
