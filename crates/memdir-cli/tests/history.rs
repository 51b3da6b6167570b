//! History that tells the truth (issue 12): offloads are changes, undo steps back, `--no-git` is remembered, a gated change has one meaning on every
//! front end, and every time is local.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Fixture, git, stderr, stdout};
use serde_json::{Value, json};

fn history_json(f: &Fixture, extra: &[&str]) -> Vec<Value> {
    let out = stdout(
        &f.cmd()
            .args(["history", "--json"])
            .args(extra)
            .assert()
            .success(),
    );
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_offload_is_committed_by_its_writer_not_as_a_hand_edit() {
    let f = Fixture::new();
    f.cmd()
        .args([
            "--writer",
            "bot",
            "offload",
            "--label",
            "test run",
            "ok 1\nok 2\n",
        ])
        .assert()
        .success();
    let last = git(&f, &["log", "-1", "--format=%an|%s"]);
    assert!(last.starts_with("bot|write offload/2026-11-30/"), "{last}");
    f.cmd().args(["log", "next"]).assert().success();
    let authors = git(&f, &["log", "--format=%an"]);
    assert!(!authors.contains("hand-edit"), "{authors}");
    // The tool does the same.
    f.cmd()
        .args(["tool", "memory_offload"])
        .write_stdin(json!({"content": "big\n", "label": "x"}).to_string())
        .assert()
        .success();
    let last = git(&f, &["log", "-1", "--format=%an|%s"]);
    assert!(last.starts_with("main|write offload/"), "{last}");
}

fn proposal_id(f: &Fixture) -> String {
    let j = stdout(&f.cmd().args(["review", "--json"]).assert().success());
    let v: Value = serde_json::from_str(j.lines().next().unwrap()).unwrap();
    v["id"].as_str().unwrap().to_string()
}

#[test]
fn undo_twice_steps_back_twice_and_undoing_an_undo_redoes() {
    let f = Fixture::new();
    for v in ["one\n", "two\n", "three\n"] {
        f.cmd().args(["write", "notes/a.md", v]).assert().success();
    }
    f.cmd().arg("undo").assert().success();
    assert_eq!(f.get("notes/a.md"), "two\n");
    f.cmd().arg("undo").assert().success();
    assert_eq!(f.get("notes/a.md"), "one\n");
    let h = history_json(&f, &[]);
    let second_undo = h[0]["commit"].as_str().unwrap().to_string();
    assert!(
        h[0]["summary"].as_str().unwrap().starts_with("undo "),
        "{h:?}"
    );
    // Naming an undo reverts it: the change it undid is back.
    f.cmd().args(["undo", &second_undo]).assert().success();
    assert_eq!(f.get("notes/a.md"), "two\n");
    // And a plain undo after that steps back over the redo first.
    f.cmd().arg("undo").assert().success();
    assert_eq!(f.get("notes/a.md"), "one\n");
}

#[test]
fn no_git_is_remembered_and_a_disabled_history_says_how_to_turn_it_on() {
    let f = Fixture::empty();
    f.cmd().args(["init", "--no-git"]).assert().success();
    f.cmd().arg("init").assert().success();
    assert!(!f.exists(".git"), "a second init started a repository");
    let config = f.get(".memdir/config.toml");
    assert!(config.contains("[git]\nenabled = false\n"), "{config}");
    let a = f.cmd().arg("history").assert().code(2);
    assert!(
        stderr(&a).contains("[git] enabled = false in .memdir/config.toml"),
        "{}",
        stderr(&a)
    );
    // A folder with a repository whose config turns git off says the same.
    let g = Fixture::new();
    g.put(".memdir/config.toml", "[git]\nenabled = false\n");
    let a = g.cmd().arg("history").assert().code(2);
    assert!(stderr(&a).contains("set it to true"), "{}", stderr(&a));
}

#[test]
fn a_gated_core_change_is_an_error_on_every_front_end() {
    let f = Fixture::new_no_git();
    f.put("core.md", "likes tea\n");
    // CLI as an agent: exit 3, the message on stderr.
    let a = f
        .cmd()
        .args([
            "--source", "agent", "edit", "core.md", "--old", "tea", "--new", "coffee",
        ])
        .assert()
        .code(3);
    assert!(stderr(&a).contains("saved as proposal"));
    // The memory_* tools and the Anthropic memory tool: an error result (exit 1 from `tool`).
    for (name, args) in [
        (
            "memory_edit",
            json!({"path": "core.md", "old": "tea", "new": "coffee"}),
        ),
        (
            "memory_write",
            json!({"path": "core.md", "content": "likes coffee\n"}),
        ),
        (
            "memory",
            json!({"command": "str_replace", "path": "/memories/core.md", "old_str": "tea", "new_str": "coffee"}),
        ),
    ] {
        let a = f
            .cmd()
            .args(["tool", name])
            .write_stdin(args.to_string())
            .assert()
            .code(1);
        assert!(
            stdout(&a).contains("saved as proposal"),
            "{name}: {}",
            stdout(&a)
        );
    }
    assert_eq!(f.get("core.md"), "likes tea\n");
}

#[test]
fn history_blame_logs_and_proposals_use_one_local_time() {
    let f = Fixture::new();
    let tz = |c: &mut assert_cmd::Command| {
        c.env("TZ", "Europe/Berlin");
    };
    let mut c = f.cmd();
    tz(&mut c);
    c.args(["log", "hello"]).assert().success();
    assert_eq!(f.get("log/2026-11-30.md"), "- 10:15 hello\n");
    let mut c = f.cmd();
    tz(&mut c);
    let h = stdout(&c.args(["history", "--json"]).assert().success());
    let first: Value = serde_json::from_str(h.lines().next().unwrap()).unwrap();
    assert_eq!(first["date"], "2026-11-30T10:15:00+01:00");
    let mut c = f.cmd();
    tz(&mut c);
    let b = stdout(
        &c.args(["blame", "log/2026-11-30.md", "--json"])
            .assert()
            .success(),
    );
    let line: Value = serde_json::from_str(b.lines().next().unwrap()).unwrap();
    assert_eq!(line["date"], "2026-11-30T10:15:00+01:00");
    let mut c = f.cmd();
    tz(&mut c);
    c.args(["--source", "agent", "write", "core.md", "x\n"])
        .assert()
        .code(3);
    let id = proposal_id(&f);
    assert!(id.starts_with("20261130-101500-"), "{id}");
    let text = f.get(&format!("proposals/{id}.md"));
    assert!(
        text.contains("created: 2026-11-30T10:15:00+01:00\n"),
        "{text}"
    );
}
