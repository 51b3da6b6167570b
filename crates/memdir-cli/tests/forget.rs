//! Issue 34, item 2: `memdir forget` removes a file, or every line holding a text, from the
//! files and from every version in git, so that nothing git can show still holds it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Fixture, git, stderr, stdout};

const SECRET: &str = "12 Elm Street";

fn run(f: &Fixture, args: &[&str]) -> String {
    stdout(&f.cmd().args(args).assert().success())
}

/// Every file under `.git`, byte for byte, as `grep -r` reads them.
fn grep_dot_git(f: &Fixture, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![f.root().join(".git")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

fn all_objects(f: &Fixture) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(f.root())
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The check: a folder with 200 commits touching the line (log entries, a note
/// rewritten, a reason holding it, a hand edit), part of it packed by `git gc`, with a tag, an
/// annotated tag and a second branch. Afterwards no git command finds a trace of it, and
/// history, blame and undo still work.
#[test]
fn forget_match_leaves_no_trace_in_200_commits() {
    let f = Fixture::new();
    for i in 0..200 {
        match i % 4 {
            0 | 2 => {
                run(&f, &["log", &format!("visit {i} to {SECRET}, then home")]);
            }
            1 => {
                run(
                    &f,
                    &[
                        "write",
                        "notes/me.md",
                        &format!("name: Ann\naddress: {SECRET}, flat {i}\nlikes: tea\n"),
                    ],
                );
            }
            _ => {
                run(
                    &f,
                    &[
                        "--reason",
                        &format!("moved to {SECRET}"),
                        "write",
                        &format!("notes/n{i}.md"),
                        &format!("plain note {i}\n"),
                    ],
                );
            }
        }
        if i == 100 {
            git(&f, &["gc", "-q"]);
            git(&f, &["tag", "v1"]);
            git(
                &f,
                &["tag", "-a", "v2", "-m", &format!("release at {SECRET}")],
            );
            git(&f, &["branch", "side"]);
        }
    }
    // A hand edit holding it too, recorded before the forget's own change.
    let log = std::fs::read_dir(f.root().join("log"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!("- by hand: {SECRET}\n"));
    std::fs::write(&log, text).unwrap();
    // A ranked search fills the keyword index with the line.
    run(&f, &["search", "--mode", "ranked", "Elm Street"]);
    let commits_before: usize = git(&f, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap();
    assert!(commits_before > 200);
    assert!(git(&f, &["log", "-p", "--all"]).contains(SECRET));

    // A dry run says what would go and changes nothing.
    let head = git(&f, &["rev-parse", "HEAD"]);
    let objects = all_objects(&f);
    let dry = run(&f, &["forget", "--match", SECRET, "--dry-run"]);
    assert!(dry.contains("would forget 1 line in notes/me.md"), "{dry}");
    assert!(dry.contains("would rewrite"), "{dry}");
    assert_eq!(git(&f, &["rev-parse", "HEAD"]), head);
    assert_eq!(all_objects(&f), objects, "a dry run wrote objects");
    assert!(f.get("notes/me.md").contains(SECRET));

    let out = run(
        &f,
        &["--reason", "the user asked", "forget", "--match", SECRET],
    );
    assert!(out.contains("forgot 1 line in notes/me.md"), "{out}");
    let rewritten = out.lines().filter(|l| l.contains(" -> ")).count();
    // Every commit that wrote it: the log entries, the note, the reasons, the hand edit.
    assert!(rewritten >= 200, "{rewritten} commits listed:\n{out}");

    // No trace anywhere git looks, nor in the raw files of .git.
    for args in [
        &["log", "-p", "--all"][..],
        &["log", "-g", "--all"][..],
        &["tag", "-n9"][..],
    ] {
        assert!(
            !git(&f, args).contains(SECRET),
            "git {args:?} still shows it"
        );
    }
    assert!(!all_objects(&f).contains(SECRET));
    let fsck = std::process::Command::new("git")
        .arg("-C")
        .arg(f.root())
        .args(["fsck", "--unreachable", "--strict", "--no-progress"])
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&fsck.stdout),
        "",
        "unreachable objects left"
    );
    assert_eq!(grep_dot_git(&f, SECRET), Vec::<String>::new());
    // The files, and the search index (rebuilt without it).
    assert!(!f.get("notes/me.md").contains(SECRET));
    assert!(f.get("notes/me.md").contains("likes: tea"));
    assert!(!std::fs::read_to_string(&log).unwrap().contains(SECRET));
    let found = f
        .cmd()
        .args(["search", "--mode", "ranked", "Elm Street"])
        .assert();
    assert!(!stdout(&found).contains(SECRET));
    for e in std::fs::read_dir(f.root().join(".memdir"))
        .unwrap()
        .flatten()
    {
        if e.path().is_file() {
            let b = std::fs::read(e.path()).unwrap();
            assert!(
                !b.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "{} holds it",
                e.path().display()
            );
        }
    }

    // Every ref moved: the tags and the branch are rewritten too, the history keeps its length
    // plus the forget's own change, and git's index matches HEAD.
    assert!(git(&f, &["tag"]).contains("v2"));
    assert!(git(&f, &["branch"]).contains("side"));
    // Two more: the hand edit, recorded before the forget began, and the forget itself.
    let commits_after: usize = git(&f, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(commits_after, commits_before + 2);
    assert_eq!(git(&f, &["status", "--porcelain"]), "");

    // The forget is recorded, naming how much and why, never what.
    let history = run(&f, &["history", "--limit", "3"]);
    let first = history.lines().next().unwrap();
    assert!(first.contains("forget *"), "{history}");
    assert!(
        first.contains("forgot") && first.contains("the user asked"),
        "{first}"
    );
    assert!(!history.contains(SECRET));
    // blame and undo still work on the new history.
    let blame = run(&f, &["blame", "notes/me.md"]);
    assert!(blame.contains("likes: tea"), "{blame}");
    run(&f, &["write", "notes/me.md", "name: Ann\n"]);
    run(&f, &["undo"]);
    assert!(f.get("notes/me.md").contains("likes: tea"));
    let fsck = git(&f, &["fsck", "--strict", "--no-progress"]);
    assert_eq!(fsck, "");
}

#[test]
fn forget_a_file_removes_it_from_every_version() {
    let f = Fixture::new();
    run(
        &f,
        &[
            "note",
            "new",
            "people/priya",
            "-d",
            "leads payments",
            "Priya lives at 4 Oak Road.",
        ],
    );
    run(
        &f,
        &[
            "edit",
            "notes/people/priya.md",
            "--old",
            "4 Oak Road",
            "--new",
            "5 Oak Road",
        ],
    );
    run(&f, &["log", "met priya"]);
    let out = run(&f, &["forget", "notes/people/priya.md"]);
    assert!(out.contains("forgot notes/people/priya.md"), "{out}");
    // The note's two versions, and MEMORY.md's line for it (its description).
    assert!(out.contains("rewrote 2 commits"), "{out}");
    assert!(!all_objects(&f).contains("leads payments"));
    assert!(!f.exists("people/priya.md"));
    assert_eq!(
        git(
            &f,
            &["log", "--all", "--oneline", "--", "notes/people/priya.md"]
        ),
        ""
    );
    assert!(!all_objects(&f).contains("Oak Road"));
    assert!(git(&f, &["fsck", "--unreachable", "--strict", "--no-progress"]).is_empty());
    // MEMORY.md no longer lists it.
    assert!(!f.get("MEMORY.md").contains("priya"));
    // The log line that names her is the person's to forget with --match.
    assert!(
        f.get(git(&f, &["ls-files", "log"]).trim())
            .contains("met priya")
    );
}

/// Forget by an agent (any source but `user`) is refused, changes nothing, and is recorded.
#[test]
fn an_agent_cannot_forget_and_the_refusal_is_recorded() {
    let f = Fixture::new();
    run(
        &f,
        &["write", "notes/me.md", &format!("address: {SECRET}\n")],
    );
    let head = git(&f, &["rev-parse", "HEAD"]);
    for source in ["agent", "external"] {
        let a = f
            .cmd()
            .env("MEMDIR_SOURCE", source)
            .args(["forget", "--match", SECRET])
            .assert()
            .code(2);
        let err = stderr(&a);
        assert!(err.contains("forget needs a person"), "{err}");
        assert!(err.contains("refusal is recorded"), "{err}");
    }
    assert!(f.get("notes/me.md").contains(SECRET));
    let history = run(&f, &["history", "--json", "--limit", "2"]);
    assert_eq!(history.matches("forget refused").count(), 2, "{history}");
    assert!(history.contains("\"source\":\"agent\""), "{history}");
    assert!(!history.contains(SECRET));
    // The earlier history is untouched.
    assert!(git(&f, &["log", "--format=%H"]).contains(head.trim()));
}

#[test]
fn bad_forgets_are_refused_with_one_line() {
    let f = Fixture::new();
    for args in [
        &["forget"][..],
        &["forget", "--match", "  "][..],
        &["forget", "--match", "x", "--path", "a["][..],
        &["forget", "--path", "notes/**"][..],
        &["forget", "../outside.md"][..],
    ] {
        let a = f.cmd().args(args).assert().code(2);
        assert!(!stderr(&a).trim().is_empty(), "{args:?}");
    }
    // Nothing to forget is not an error: history is still rewritten (and pruned) for it.
    let out = run(&f, &["forget", "--match", "never written"]);
    assert!(out.contains("no current file holds it"), "{out}");
}

#[test]
fn a_memory_without_git_forgets_the_files() {
    let f = Fixture::new_no_git();
    run(
        &f,
        &["write", "notes/me.md", &format!("a\naddress: {SECRET}\n")],
    );
    let out = run(&f, &["forget", "--match", SECRET]);
    assert!(out.contains("keeps no history"), "{out}");
    assert_eq!(f.get("notes/me.md"), "a\n");
    let a = f.cmd().args(["forget", "notes/none.md"]).assert().code(1);
    assert!(stderr(&a).contains("nothing to forget"));
}

/// The same on PostgreSQL: afterwards no row in any memdir table holds the bytes, as text or
/// inside a `bytea` (history deltas, pending copies, files, vectors), and history, blame and
/// undo still answer.
#[test]
fn forget_on_postgresql_leaves_no_row_holding_it() {
    let db = memdir_store_pg::pg_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    let url = db.url("ann");
    let memdir = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("memdir")
            .unwrap()
            .env_clear()
            .env("MEMDIR_STORE", &url)
            .env("MEMDIR_NOW", common::NOW)
            .env("TZ", "UTC")
            .env("HOME", tmp.path())
            .env("XDG_CACHE_HOME", tmp.path().join("cache"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let dump = || {
        let out = std::process::Command::new("pg_dump")
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "--data-only",
                "--schema=memdir",
            ])
            .arg(&db.name)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let hex: String = SECRET.bytes().map(|b| format!("{b:02x}")).collect();
    let holds = |d: &str| d.contains(SECRET) || d.contains(&hex);
    memdir(&["init"]);
    for i in 0..30 {
        if i % 2 == 0 {
            memdir(&["log", &format!("visit {i} to {SECRET}")]);
        } else {
            memdir(&[
                "--reason",
                &format!("moved to {SECRET}"),
                "write",
                "notes/me.md",
                &format!("name: Ann\naddress: {SECRET} {i}\nlikes: tea\n"),
            ]);
        }
    }
    memdir(&["search", "--mode", "ranked", "Elm Street"]);
    assert!(holds(&dump()), "the test's dump cannot see the bytes");
    let dry = memdir(&["forget", "--match", SECRET, "--dry-run"]);
    assert!(dry.contains("would rewrite 30 commits"), "{dry}");
    assert!(holds(&dump()), "a dry run changed rows");

    let out = memdir(&["forget", "--match", SECRET]);
    assert!(out.contains("rewrote 30 commits"), "{out}");
    assert!(!holds(&dump()), "a row still holds it");
    let history = memdir(&["history", "--limit", "40"]);
    assert!(
        history.lines().next().unwrap().contains("forget *"),
        "{history}"
    );
    assert!(!history.contains(SECRET));
    let blame = memdir(&["blame", "notes/me.md"]);
    assert!(blame.contains("likes: tea"), "{blame}");
    memdir(&["write", "notes/me.md", "name: Ann\n"]);
    memdir(&["undo"]);
    assert!(memdir(&["read", "notes/me.md"]).contains("likes: tea"));
    // Ranked search rebuilt its index from the files: nothing left to find.
    let found = memdir(&["search", "--mode", "ranked", "Elm Street tea"]);
    assert!(!found.contains(SECRET), "{found}");
    assert!(!holds(&dump()), "a row holds it after the search");
}
