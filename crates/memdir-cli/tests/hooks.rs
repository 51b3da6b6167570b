//! Claude Code hooks, fed the documented SessionStart and PreCompact input JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{Fixture, stderr, stdout};
use serde_json::Value;

/// The SessionStart input of the hooks reference (common fields plus `source` and `model`).
fn session_start_input(source: &str) -> String {
    serde_json::json!({
        "session_id": "abc123",
        "transcript_path": "/Users/me/.claude/projects/p/abc123.jsonl",
        "cwd": "/Users/me/project",
        "hook_event_name": "SessionStart",
        "source": source,
        "model": "claude-sonnet-4-6"
    })
    .to_string()
}

/// The PreCompact example of the hooks reference, verbatim.
const PRE_COMPACT_INPUT: &str = r#"{"session_id":"abc123","transcript_path":"...","cwd":"/Users/...","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":""}"#;

/// A Claude Code transcript (see capture.rs for the tests of the save itself).
fn transcript() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts/claude-code.jsonl")
}

fn additional_context(out: &str) -> String {
    let v: Value = serde_json::from_str(out).expect("hook output is one JSON object");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext is a string")
        .to_string()
}

#[test]
fn session_start_prints_the_context_as_additional_context() {
    let f = Fixture::new();
    f.put("core.md", "- user: Priya, prefers short answers\n");
    f.cmd()
        .args(["log", "shipped v2 to staging"])
        .assert()
        .success();
    let a = f
        .cmd()
        .args(["hook", "session-start"])
        .write_stdin(session_start_input("startup"))
        .assert()
        .success();
    let out = stdout(&a);
    assert!(
        out.starts_with('{'),
        "Claude Code parses stdout as JSON only when it starts with {{: {out}"
    );
    let ctx = additional_context(&out);
    assert!(
        ctx.contains("- user: Priya, prefers short answers"),
        "{ctx}"
    );
    assert!(ctx.contains("- 09:15 shipped v2 to staging"), "{ctx}");
    assert!(!ctx.contains("just compacted"));
}

#[test]
fn session_start_after_compaction_says_so() {
    let f = Fixture::new();
    let a = f
        .cmd()
        .args(["hook", "session-start"])
        .write_stdin(session_start_input("compact"))
        .assert()
        .success();
    assert!(additional_context(&stdout(&a)).contains("The conversation was just compacted"));
}

#[test]
fn session_start_fills_the_inline_limit_with_the_newest_log_lines() {
    let f = Fixture::new();
    f.put("core.md", "- the core fact that must be inlined\n");
    // Today's log alone is far over 10,000 characters.
    let big: String = (0..400)
        .map(|i| {
            format!(
                "- 08:{:02} entry number {i} with some words in it\n",
                i % 60
            )
        })
        .collect();
    assert!(big.len() > 15_000);
    f.put("log/2026-11-30.md", &big);
    let a = f
        .cmd()
        .args(["hook", "session-start"])
        .write_stdin(session_start_input("startup"))
        .assert()
        .success();
    let ctx = additional_context(&stdout(&a));
    assert!(
        ctx.chars().count() < 10_000,
        "{} chars",
        ctx.chars().count()
    );
    // The room is used (not 1,839 characters and a pointer), by the newest log lines.
    assert!(ctx.chars().count() > 9_000, "{} chars", ctx.chars().count());
    assert!(ctx.contains("- the core fact that must be inlined"));
    assert!(ctx.contains("entry number 399 with"), "{ctx}");
    assert!(!ctx.contains("entry number 0 with"));
    assert!(
        ctx.contains("earlier entries of log/2026-11-30.md not loaded")
            && ctx.contains("memdir read log/2026-11-30.md"),
        "{ctx}"
    );
}

#[test]
fn session_start_creates_a_missing_memory_folder() {
    let f = Fixture::empty();
    let a = f
        .cmd()
        .args(["hook", "session-start"])
        .write_stdin(session_start_input("startup"))
        .assert()
        .success();
    assert!(additional_context(&stdout(&a)).contains("Core memory (core.md)"));
    assert!(f.exists("core.md"));
}

#[test]
fn session_start_refuses_input_that_is_not_json() {
    let f = Fixture::new();
    let a = f
        .cmd()
        .args(["hook", "session-start"])
        .write_stdin("source=startup")
        .assert()
        .code(2);
    assert!(stderr(&a).contains("hook input is not the JSON object"));
    assert!(stdout(&a).is_empty());
}

#[test]
fn pre_compact_prints_the_flush_reminder() {
    let f = Fixture::new();
    let a = f
        .cmd()
        .args(["hook", "pre-compact"])
        .write_stdin(PRE_COMPACT_INPUT.replace("\"...\"", &format!("{:?}", transcript())))
        .assert()
        .success();
    let out = stdout(&a);
    assert!(
        out.starts_with("memdir: context compaction (manual) is starting.\n"),
        "{out}"
    );
    let flush = stdout(&f.cmd().arg("flush-prompt").assert().success());
    assert!(out.contains(flush.trim_end()), "{out}");
}
