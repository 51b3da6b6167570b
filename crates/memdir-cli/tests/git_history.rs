//! Issue 22: commits stage only the paths a change touched, and history stays exactly what the
//! whole-tree staging recorded. A scripted sequence of changes, hand edits among them, gives
//! the `git log -p` in `data/git_history.txt`, which was recorded with the whole-tree staging
//! (`MEMDIR_BLESS=1 cargo test -p memdir-cli --test git_history` rewrites it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Fixture, git};

/// One step: memdir with `args` at minute `min` past the fixture's hour.
fn run(f: &Fixture, min: u32, args: &[&str]) {
    f.cmd()
        .env("MEMDIR_NOW", format!("2026-11-30T10:{min:02}:00Z"))
        .args(args)
        .assert()
        .success();
}

fn script(f: &Fixture) {
    run(f, 1, &["log", "started the migration"]);
    run(
        f,
        2,
        &[
            "note",
            "new",
            "people/priya",
            "-d",
            "leads payments",
            "Priya.",
        ],
    );
    run(
        f,
        3,
        &[
            "--writer",
            "bot",
            "write",
            "projects/pg.md",
            "# PG\n\nplan\n",
        ],
    );
    run(f, 4, &["edit", "projects/pg.md", "--append", "- step one"]);
    // Hand edits: a changed file, a new file in a new folder, a removed file.
    f.put("projects/pg.md", "# PG\n\nplan, by hand\n- step one\n");
    f.put("inbox/idea.md", "an idea\n");
    run(f, 5, &["log", "after the hand edit"]);
    std::fs::remove_file(f.root().join("inbox/idea.md")).unwrap();
    run(f, 6, &["--reason", "tidy", "mv", "projects", "work"]);
    run(f, 7, &["note", "new", "q4", "-d", "the freeze", "frozen"]);
    // A hand edit staged with git but not committed, and one left unstaged.
    f.put("work/pg.md", "# PG\n\nstaged by hand\n");
    git(f, &["add", "work/pg.md"]);
    f.put("core.md", "prefers short answers\n");
    run(f, 8, &["rm", "notes/q4.md"]);
    run(f, 9, &["write", ".gitignore", "*.bak\n"]);
    f.put("scratch.bak", "ignored\n");
    run(f, 10, &["write", "a/b/c/deep.md", "deep\n"]);
    run(f, 11, &["rm", "-r", "a"]);
    run(f, 12, &["state", "add", "on call"]);
    run(f, 13, &["undo"]);
    run(f, 14, &["scratch", "plan", "check the build"]);
    run(f, 15, &["--writer", "bot", "log", "bot was here"]);
}

#[test]
fn touched_path_commits_record_the_same_history() {
    let f = Fixture::empty();
    f.cmd()
        .env("MEMDIR_NOW", "2026-11-30T10:00:00Z")
        .arg("init")
        .assert()
        .success();
    script(&f);
    let log = git(
        &f,
        &["log", "-p", "--format=%H %an <%ae> %at%n%B", "--no-color"],
    );
    let status = git(&f, &["status", "--porcelain", "--untracked-files=all"]);
    let got = format!("{log}\n--- git status after the last change ---\n{status}");
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/git_history.txt");
    if std::env::var_os("MEMDIR_BLESS").is_some() {
        std::fs::write(&golden, &got).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    if got != want {
        let diff = similar_lines(&want, &got);
        panic!("history differs from {}:\n{diff}", golden.display());
    }
}

/// The lines that differ, `-` expected and `+` got, for a readable failure.
fn similar_lines(want: &str, got: &str) -> String {
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let mut out = String::new();
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b {
            out.push_str(&format!("line {}:\n- {:?}\n+ {:?}\n", i + 1, a, b));
            if out.len() > 4000 {
                break;
            }
        }
    }
    out
}
