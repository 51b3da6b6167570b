//! Issue 22, item 3: a long-lived process whose history follows the folder's change feed
//! (`Memory::with_history_feed`) finds hand edits from the paths inotify names instead of a
//! walk of the whole folder, and records exactly the history the walk records. The same
//! script of changes and hand edits runs twice, once as one long-lived process that follows
//! the feed and once as a fresh process per change (the CLI's way); `git log -p` and
//! `git status` must be equal byte for byte, commit ids included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir::history::GitHistory;
use memdir::notes::NoteRequest;
use memdir::{Actor, Backend, Clock, FolderStore, Memory};
use memdir_core::edit::EditOp;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

fn clock(min: u32) -> Clock {
    Clock::fixed(
        format!("2026-11-30T10:{min:02}:00Z").parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// How each step gets its `Memory`: the same history every time (long-lived), or a new one.
struct Process {
    root: std::path::PathBuf,
    /// The long-lived process's backend and history, when it follows the feed.
    live: Option<(Backend, Arc<GitHistory>)>,
}

impl Process {
    fn at(&self, min: u32) -> Memory {
        match &self.live {
            Some((backend, _)) => Memory::open_backend(backend.clone(), clock(min)).unwrap(),
            None => Memory::open(&self.root, clock(min)).unwrap(),
        }
    }
}

/// A long-lived process's backend whose history follows the feed, as `memdir mcp` opens it
/// (`Memory::with_history_feed`), and that history.
fn following(root: &Path) -> (Backend, Arc<GitHistory>) {
    let store = FolderStore::open(root).unwrap();
    let history = Arc::new(GitHistory::new(root).with_touched(store.touched()));
    let backend = Backend {
        store: Arc::new(store),
        history: Some(history.clone()),
        vectors: None,
    };
    drop(
        Memory::open_backend(backend.clone(), clock(0))
            .unwrap()
            .with_history_feed(),
    );
    (backend, history)
}

fn note(mem: &Memory, name: &str, description: &str, body: &str) {
    mem.note_new(&NoteRequest {
        name,
        description,
        kind: None,
        tags: &[],
        expires: None,
        body,
        force: false,
    })
    .unwrap();
}

/// The changes and hand edits of `crates/memdir-cli/tests/git_history.rs`, plus hand edits
/// the feed has to tell apart from memdir's own writes: a file memdir just wrote, edited by
/// hand before the next change; a folder of files made by hand, changed, then removed; a
/// `.gitignore` written by hand.
fn script(p: &Process) {
    let root = &p.root;
    let bot = Actor {
        writer: "bot".into(),
        source: memdir::Source::User,
    };
    p.at(1).log("started the migration").unwrap();
    note(&p.at(2), "people/priya", "leads payments", "Priya.");
    p.at(3)
        .with_actor(bot.clone())
        .write("projects/pg.md", "# PG\n\nplan\n")
        .unwrap()
        .done()
        .unwrap();
    p.at(4)
        .edit_with("projects/pg.md", &EditOp::Append("- step one"))
        .unwrap()
        .done()
        .unwrap();
    // Hand edits: a changed file, a new file in a new folder, a removed file.
    put(
        root,
        "projects/pg.md",
        "# PG\n\nplan, by hand\n- step one\n",
    );
    put(root, "inbox/idea.md", "an idea\n");
    p.at(5).log("after the hand edit").unwrap();
    // The log memdir has just appended to, edited by hand.
    let log = root.join("log/2026-11-30.md");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("- 10:05 added by hand\n");
    std::fs::write(&log, text).unwrap();
    std::fs::remove_file(root.join("inbox/idea.md")).unwrap();
    p.at(6)
        .with_reason(Some("tidy"))
        .mv("projects", "work")
        .unwrap();
    note(&p.at(7), "q4", "the freeze", "frozen");
    // A hand edit staged with git but not committed, and one left unstaged.
    put(root, "work/pg.md", "# PG\n\nstaged by hand\n");
    git(root, &["add", "work/pg.md"]);
    put(root, "core.md", "prefers short answers\n");
    p.at(8).rm("notes/q4.md").unwrap();
    p.at(9)
        .write(".gitignore", "*.bak\n")
        .unwrap()
        .done()
        .unwrap();
    put(root, "scratch.bak", "ignored\n");
    // A folder of files made by hand, two levels deep.
    put(root, "drafts/2026/one.md", "one\n");
    put(root, "drafts/2026/two.md", "two\n");
    p.at(10)
        .write("a/b/c/deep.md", "deep\n")
        .unwrap()
        .done()
        .unwrap();
    p.at(11).rm("a").unwrap();
    p.at(12).state_add("on call").unwrap();
    put(root, "drafts/2026/one.md", "one, changed\n");
    p.at(13).undo(None).unwrap();
    // A `.gitignore` changed by hand lets an ignored file in.
    put(root, ".gitignore", "*.tmp\n");
    p.at(14).scratch("plan", None, "check the build").unwrap();
    p.at(15).with_actor(bot).log("bot was here").unwrap();
    std::fs::remove_dir_all(root.join("drafts")).unwrap();
    p.at(16).log("drafts gone").unwrap();
}

fn recorded(root: &Path) -> String {
    let log = git(
        root,
        &["log", "-p", "--format=%H %an <%ae> %at%n%B", "--no-color"],
    );
    let status = git(root, &["status", "--porcelain", "--untracked-files=all"]);
    format!("{log}\n--- git status ---\n{status}")
}

#[test]
fn following_the_feed_records_the_history_the_walk_records() {
    let walked = tempfile::tempdir().unwrap();
    let followed = tempfile::tempdir().unwrap();
    let mut histories = Vec::new();
    for (dir, follow) in [(&walked, false), (&followed, true)] {
        let root = dir.path().join("mem");
        std::fs::create_dir_all(&root).unwrap();
        drop(Memory::init(&root, clock(0)).unwrap());
        let live = follow.then(|| following(&root));
        let p = Process { root, live };
        script(&p);
        histories.push((recorded(&p.root), p.live.map(|(_, h)| h)));
    }
    let (want, _) = &histories[0];
    let (got, history) = &histories[1];
    if got != want {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(20)
            .map(|(i, (a, b))| format!("line {}:\n- {a:?}\n+ {b:?}", i + 1))
            .collect();
        panic!(
            "the feed recorded another history:\n{}\n\nwalk:\n{want}\n\nfeed:\n{got}",
            diff.join("\n")
        );
    }
    // The hand edits are in it, each before the change that found it.
    assert!(want.contains("hand-edit <hand-edit@memdir.invalid>"));
    assert!(want.contains("+- 10:05 added by hand"));
    assert!(want.contains("+one, changed"));
    // And the feed really was used: the whole folder was compared only where the feed cannot
    // narrow it down (the first change, after `git add` by hand, after each `.gitignore`
    // change), not before each of the 16 changes.
    let walks = history.as_ref().unwrap().whole_tree_comparisons();
    assert!(
        (1..=5).contains(&walks),
        "{walks} whole-tree comparisons for 16 changes"
    );
}

/// The feed stops at what git cannot see through it: a lost feed, or another process's commit,
/// falls back to comparing the whole folder, and nothing is missed.
#[test]
fn another_process_changing_git_makes_the_next_change_compare_everything() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mem");
    std::fs::create_dir_all(&root).unwrap();
    drop(Memory::init(&root, clock(0)).unwrap());
    let (backend, history) = following(&root);
    let live = Memory::open_backend(backend, clock(1)).unwrap();
    live.log("one").unwrap();
    live.log("two").unwrap();
    let after_two = history.whole_tree_comparisons();
    assert_eq!(
        after_two, 1,
        "only the first change compares the whole tree"
    );
    // Another process (a one-shot CLI run) changes a file and commits; then a person edits a
    // file, which the feed reports. Both must show up right.
    let other = Memory::open(&root, clock(2)).unwrap();
    other
        .write("notes/other.md", "from another process\n")
        .unwrap()
        .done()
        .unwrap();
    put(&root, "notes/hand.md", "by hand\n");
    live.log("three").unwrap();
    assert_eq!(history.whole_tree_comparisons(), after_two + 1);
    let log = git(&root, &["log", "--format=%an %s"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        &lines[..3],
        [
            "main log log/2026-11-30.md",
            "hand-edit hand edit",
            "main write notes/other.md",
        ],
        "{log}"
    );
    let hand = git(&root, &["show", "--format=", "--name-only", "HEAD~1"]);
    assert_eq!(hand, "notes/hand.md\n");
    let status = git(&root, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status, "");
}
