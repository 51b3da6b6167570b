//! A generated memory of 2,000 notes (issue 18): every write path keeps `MEMORY.md` under its
//! cap, the folder indexes stay current, and `context` stays within its budget.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{Fixture, stdout};
use serde_json::Value;

const CAP_LINES: usize = 200;
const CAP_BYTES: usize = 25_600;

fn generate(f: &Fixture) {
    for i in 0..2000 {
        let folder = format!("notes/topic-{:02}", i % 40);
        f.put(
            &format!("{folder}/note-{i:04}.md"),
            &format!(
                "---\nname: note-{i:04}\ndescription: what we learned about item {i} of {folder}\ntype: {}\ncreated: 2026-11-{:02}\n---\nBody {i}; see [[note-{:04}]].\n",
                ["project", "reference", "user", "feedback"][i % 4],
                1 + i % 28,
                (i + 1) % 2000
            ),
        );
    }
}

/// The root index is under its cap, lists folders, and lint finds every index current.
fn check(f: &Fixture, after: &str) {
    let root = f.get("MEMORY.md");
    let (lines, bytes) = (root.lines().count(), root.len());
    assert!(
        lines <= CAP_LINES && bytes <= CAP_BYTES,
        "{after}: {lines} lines, {bytes} bytes"
    );
    assert!(root.contains("## folders\n"), "{after}: {root}");
    let lint: Value =
        serde_json::from_str(&stdout(&f.cmd().args(["lint", "--json"]).assert())).unwrap();
    let index_findings: Vec<&Value> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| {
            let r = x["rule"].as_str().unwrap_or("");
            r.contains("index") || r == "over-cap" || r == "unlisted"
        })
        .collect();
    assert!(index_findings.is_empty(), "{after}: {index_findings:?}");
}

#[test]
fn two_thousand_notes_keep_every_index_under_its_cap() {
    let f = Fixture::new_no_git();
    generate(&f);
    f.cmd().arg("index").assert().success();
    check(&f, "memdir index");
    let folder = f.get("notes/topic-07/MEMORY.md");
    assert_eq!(folder.matches("\n- [note-").count(), 50, "{folder}");

    // Every write path: the agent tools, note new, mv, rm, and the Anthropic memory tool.
    let tool = |name: &str, input: Value| {
        f.cmd()
            .args(["tool", name])
            .write_stdin(input.to_string())
            .assert()
            .success();
    };
    tool(
        "memory_write",
        serde_json::json!({"path": "notes/topic-03/fresh.md", "content": "---\nname: fresh\ndescription: a new note\ncreated: 2026-11-30\n---\nx\n"}),
    );
    check(&f, "memory_write");
    assert!(
        f.get("notes/topic-03/MEMORY.md")
            .contains("- [fresh](notes/topic-03/fresh.md) — a new note\n")
    );
    assert!(
        f.get("MEMORY.md").contains("recent: fresh"),
        "the newest note is named"
    );
    tool(
        "memory_edit",
        serde_json::json!({"path": "notes/topic-03/fresh.md", "old": "a new note", "new": "an edited note"}),
    );
    check(&f, "memory_edit");
    assert!(
        f.get("notes/topic-03/MEMORY.md")
            .contains("— an edited note\n")
    );
    f.cmd()
        .args(["note", "new", "topic-05/made", "-d", "made by note new"])
        .assert()
        .success();
    check(&f, "note new");
    assert!(f.exists("notes/topic-05/MEMORY.md"));
    f.cmd()
        .args([
            "mv",
            "notes/topic-01/note-0001.md",
            "notes/topic-02/moved.md",
        ])
        .assert()
        .success();
    check(&f, "mv");
    assert!(
        f.get("notes/topic-02/MEMORY.md")
            .contains("(notes/topic-02/moved.md)")
    );
    assert!(!f.get("notes/topic-01/MEMORY.md").contains("note-0001.md"));
    f.cmd()
        .args(["mv", "notes/topic-39", "notes/renamed"])
        .assert()
        .success();
    check(&f, "mv of a folder");
    assert!(!f.exists("notes/topic-39/MEMORY.md"));
    f.cmd()
        .args(["rm", "notes/topic-04/note-0004.md"])
        .assert()
        .success();
    check(&f, "rm");
    let anthropic = |input: Value| {
        f.cmd()
            .arg("tool")
            .write_stdin(input.to_string())
            .assert()
            .success();
    };
    anthropic(
        serde_json::json!({"command": "create", "path": "/memories/notes/topic-06/a.md", "file_text": "---\nname: via-anthropic\ndescription: from the memory tool\n---\n"}),
    );
    check(&f, "memory create");
    anthropic(
        serde_json::json!({"command": "rename", "old_path": "/memories/notes/topic-06/a.md", "new_path": "/memories/notes/topic-08/a.md"}),
    );
    check(&f, "memory rename");
    anthropic(serde_json::json!({"command": "delete", "path": "/memories/notes/topic-08/a.md"}));
    check(&f, "memory delete");
    // A generated folder index is not written by hand through memdir.
    f.cmd()
        .args(["write", "notes/topic-08/MEMORY.md", "x"])
        .assert()
        .code(2);

    // The context holds the root index whole, within its budget.
    let ctx = stdout(&f.cmd().arg("context").assert().success());
    assert!(ctx.contains("## folders"), "{ctx}");
    assert!(!ctx.contains("not loaded: it is over its cap"), "{ctx}");
    assert!(ctx.len() / 4 <= 4_000, "context is {} bytes", ctx.len());
}

#[test]
fn a_folder_cannot_outgrow_the_folder_list_either() {
    let f = Fixture::new_no_git();
    generate(&f);
    f.put(".memdir/config.toml", "[index]\nmax_lines = 46\n");
    f.cmd().arg("index").assert().success();
    // 40 folders fill the 46 lines; a note in a 41st folder is refused, in an existing one not.
    let a = f
        .cmd()
        .args(["note", "new", "brand-new/x", "-d", "one folder too many"])
        .assert()
        .code(2);
    assert!(common::stderr(&a).contains("MEMORY.md (the index"));
    assert!(!f.exists("notes/brand-new/x.md"));
    f.cmd()
        .args(["note", "new", "topic-00/x", "-d", "fits"])
        .assert()
        .success();
    f.cmd()
        .args(["mv", "notes/topic-00/x.md", "notes/brand-new/x.md"])
        .assert()
        .code(2);
    assert!(
        f.exists("notes/topic-00/x.md"),
        "a refused move moves nothing"
    );
    assert!(f.get("MEMORY.md").lines().count() <= 46);
}
