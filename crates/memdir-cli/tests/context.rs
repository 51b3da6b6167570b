//! `memdir context` on the real binary: the token budget, recent log days, the proposals line
//! and how loaded files' headings nest.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Fixture, stderr, stdout};
use serde_json::{Value, json};

fn context_json(f: &Fixture, extra: &[&str]) -> Value {
    let a = f
        .cmd()
        .arg("context")
        .arg("--json")
        .args(extra)
        .assert()
        .success();
    serde_json::from_str(&stdout(&a)).unwrap()
}

fn section<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
}

/// A year of memory as two weeks of use would grow it: a log for every day, a full index,
/// core and state near their caps, and live scratch notes.
fn year_of_memory(f: &Fixture) {
    let core: String = (0..80)
        .map(|i| format!("- core fact {i}: the team prefers small reviewed changes\n"))
        .collect();
    f.put("core.md", &core);
    let state: String = (0..60)
        .map(|i| {
            format!(
                "- 2026-11-{:02} state line {i}: something holds now\n",
                1 + i % 29
            )
        })
        .collect();
    f.put("state.md", &state);
    let mut day = jiff::civil::date(2025, 12, 1);
    let last = jiff::civil::date(2026, 11, 30);
    while day <= last {
        let lines: String = (0..30)
            .map(|i| {
                format!(
                    "- {:02}:{:02} worked on item {i} of {day}\n",
                    8 + i / 6,
                    i % 60
                )
            })
            .collect();
        f.put(&format!("log/{day}.md"), &lines);
        day = day.tomorrow().unwrap();
    }
    for i in 0..180 {
        f.put(
            &format!("notes/n{i:03}.md"),
            &format!(
                "---\nname: n{i:03}\ndescription: note {i} about a topic worth a line in the index\ntype: project\n---\nbody\n"
            ),
        );
    }
    f.cmd().arg("index").assert().success();
    f.cmd()
        .args(["scratch", "plan", "--ttl", "2h", "step 1, then step 2"])
        .assert()
        .success();
    f.cmd()
        .args(["log", "the newest thing that happened"])
        .assert()
        .success();
}

#[test]
fn a_year_of_memory_fits_the_default_budget_with_the_newest_log_lines() {
    let f = Fixture::new_no_git();
    year_of_memory(&f);
    let v = context_json(&f, &[]);
    assert_eq!(v["max_tokens"], 4000);
    let tokens = v["tokens"].as_u64().unwrap();
    assert!(tokens <= 4000, "{tokens} tokens");
    let text = stdout(&f.cmd().arg("context").assert().success());
    assert!(
        text.len().div_ceil(4) <= 4000,
        "{} bytes rendered",
        text.len()
    );
    let today = section(&v, "log:2026-11-30").expect("today's log");
    let content = today["content"].as_str().unwrap();
    assert!(
        content.ends_with("- 09:15 the newest thing that happened\n"),
        "{content}"
    );
    // The scratch note after the big sections is there, whole.
    let plan = section(&v, "scratch:plan").expect("the scratch note");
    assert_eq!(plan["content"], "step 1, then step 2");
    assert_eq!(plan["truncated"], Value::Null);
    assert!(section(&v, "pointer").is_some());
    // Whatever was cut says where the rest is and how to read it.
    for s in v["sections"].as_array().unwrap() {
        if s["truncated"] == true {
            let c = s["content"].as_str().unwrap();
            let path = s["path"].as_str().unwrap();
            assert!(c.contains(&format!("`memdir read {path}`")), "{c}");
        }
    }
    // A bigger budget shows more, and everything at once when it is big enough.
    let more = context_json(&f, &["--max-tokens", "100000"]);
    assert!(more["tokens"].as_u64().unwrap() > tokens);
    assert!(
        more["sections"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["truncated"] == Value::Null)
    );
    f.put(".memdir/config.toml", "[context]\nmax_tokens = 1000\n");
    let small = context_json(&f, &[]);
    assert!(small["tokens"].as_u64().unwrap() <= 1000);
    assert!(
        section(&small, "log:2026-11-30").unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("the newest thing that happened")
    );
}

#[test]
fn a_budget_too_small_is_refused() {
    let f = Fixture::new_no_git();
    let a = f
        .cmd()
        .args(["context", "--max-tokens", "0"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("--max-tokens 0 is too small"));
    // A budget too small in the settings is a bad config: the read goes on with the defaults
    // and a warning naming the file (issue 13 item 14).
    f.put(".memdir/config.toml", "[context]\nmax_tokens = 5\n");
    let a = f.cmd().arg("context").assert().success();
    assert!(stderr(&a).contains("config.toml"), "{}", stderr(&a));
}

#[test]
fn context_loads_the_most_recent_days_that_have_a_log() {
    let f = Fixture::new_no_git();
    f.put("log/2026-11-20.md", "- 10:00 too old\n");
    f.put("log/2026-11-25.md", "- 10:00 the day before\n");
    f.put("log/2026-11-27.md", "- 17:00 the last thing I did\n");
    f.put("log/2026-12-02.md", "- 10:00 from the future\n");
    let out = stdout(&f.cmd().arg("context").assert().success());
    assert!(
        out.contains("## Log 2026-11-27 (3 days ago)\n\n- 17:00 the last thing I did\n"),
        "{out}"
    );
    assert!(out.contains("## Log 2026-11-25 (5 days ago)"), "{out}");
    assert!(!out.contains("too old") && !out.contains("future"), "{out}");
    assert!(out.find("2026-11-25").unwrap() < out.find("2026-11-27").unwrap());
    f.cmd().args(["log", "now"]).assert().success();
    let out = stdout(&f.cmd().arg("context").assert().success());
    assert!(out.contains("## Log 2026-11-30 (today)"), "{out}");
    assert!(out.contains("## Log 2026-11-27 (3 days ago)"), "{out}");
    assert!(!out.contains("2026-11-25"), "{out}");
    f.put(".memdir/config.toml", "[context]\nlog_days = 3\n");
    let out = stdout(&f.cmd().arg("context").assert().success());
    assert!(out.contains("## Log 2026-11-25 (5 days ago)"), "{out}");
}

#[test]
fn context_says_when_proposals_wait_for_the_user() {
    let f = Fixture::new_no_git();
    let out = stdout(&f.cmd().arg("context").assert().success());
    assert!(!out.contains("proposed change"), "{out}");
    f.cmd()
        .args(["tool", "memory_write"])
        .write_stdin(json!({"path": "core.md", "content": "likes tea\n"}).to_string())
        .assert()
        .code(1);
    let out = stdout(&f.cmd().arg("context").assert().success());
    assert!(
        out.contains("1 proposed change(s) to core.md wait for the user's review in proposals/: do not propose them again. See them with `memdir review`."),
        "{out}"
    );
}

#[test]
fn loaded_files_headings_nest_under_their_section() {
    let f = Fixture::new_no_git();
    f.cmd()
        .args(["note", "new", "a", "-d", "about a", "-t", "user", "x"])
        .assert()
        .success();
    f.put("core.md", "# Me\n\n## Likes\ntea\n");
    let out = stdout(&f.cmd().arg("context").assert().success());
    assert!(
        out.contains("## Index of notes (MEMORY.md)\n\n### Memory index\n"),
        "{out}"
    );
    assert!(out.contains("\n#### user\n"), "{out}");
    assert!(out.contains("### Me\n\n#### Likes\n"), "{out}");
    // The file itself is unchanged.
    assert!(f.get("MEMORY.md").starts_with("# Memory index\n"));
}

#[test]
fn a_note_over_the_index_cap_says_how_to_make_room() {
    let f = Fixture::new_no_git();
    // 8 lines hold two notes, or (listing folders once notes outgrow it) two folders.
    f.put(".memdir/config.toml", "[index]\nmax_lines = 8\n");
    for n in ["a/n", "b/n"] {
        f.cmd()
            .args(["note", "new", n, "-d", "about it", "x"])
            .assert()
            .success();
    }
    let a = f
        .cmd()
        .args(["note", "new", "c/n", "-d", "about it", "x"])
        .assert()
        .code(2);
    let err = stderr(&a);
    assert!(!err.contains("remove a line first"), "{err}");
    assert!(
        err.contains("merge this note into another")
            && err.contains("memdir mv notes/x.md archive/notes/x.md")
            && err.contains("memdir rm notes/x.md"),
        "{err}"
    );
}

#[test]
fn the_main_writer_of_the_config_logs_to_the_main_log() {
    let f = Fixture::new_no_git();
    f.put(".memdir/config.toml", "[writers]\nmain = \"claude\"\n");
    f.cmd().args(["log", "x"]).assert().success();
    assert!(f.exists("log/2026-11-30.md"));
    assert!(!f.exists("log/2026-11-30.main.md"));
    f.cmd()
        .args(["--writer", "sub", "log", "y"])
        .assert()
        .success();
    assert!(f.exists("log/2026-11-30.sub.md"));
}
