//! Issue 20: `memdir import claude-code|openclaw|chatgpt|claude` and `memdir export --format`,
//! on the real binary. The exports are generated here in the documented formats (a few
//! hundred turns), so every turn can be checked: it lands once, on its day, labelled right, and
//! a second run adds nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{Fixture, git, stderr, stdout};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Base instant of the generated conversations: 2026-10-04T08:00:00Z.
const BASE: i64 = 1_791_100_800;

/// One generated turn: when, who, the unique text, and whether it came from a tool.
struct Gen {
    at: i64,
    role: &'static str,
    text: String,
    external: bool,
}

/// `n` conversations of `turns` turns, one every ~7 hours (so days change mid-conversation),
/// every fourth turn a tool's or the web's.
fn generated(n: usize, turns: usize) -> Vec<(String, String, Vec<Gen>)> {
    (0..n)
        .map(|c| {
            let start = BASE + (c as i64) * 7 * 3600;
            let gens = (0..turns)
                .map(|t| {
                    let external = t % 4 == 3;
                    let role = if external {
                        "tool"
                    } else if t % 2 == 0 {
                        "user"
                    } else {
                        "assistant"
                    };
                    Gen {
                        // Ten minutes apart: a long conversation crosses midnight.
                        at: start + (t as i64) * 600,
                        role,
                        text: format!("turn {c}-{t} says\nsomething about topic{}", c % 5),
                        external,
                    }
                })
                .collect();
            (format!("id-{c}"), format!("Chat number {c}: plans"), gens)
        })
        .collect()
}

/// The ChatGPT `conversations.json` of `chats`: a `mapping` tree with a system root, an
/// abandoned branch in every conversation, and `current_node` at the end of the shown thread.
fn chatgpt_json(chats: &[(String, String, Vec<Gen>)]) -> String {
    let list: Vec<Value> = chats
        .iter()
        .map(|(id, title, gens)| {
            let mut mapping = serde_json::Map::new();
            mapping.insert(
                "root".into(),
                json!({"id": "root", "message": null, "parent": null, "children": ["sys"]}),
            );
            mapping.insert(
                "sys".into(),
                json!({"id": "sys", "parent": "root", "children": ["m0"],
                       "message": {"author": {"role": "system"}, "create_time": null,
                                   "content": {"content_type": "text", "parts": ["You are ChatGPT"]}}}),
            );
            let mut parent = "sys".to_string();
            for (i, g) in gens.iter().enumerate() {
                let node = format!("m{i}");
                let content = if g.external {
                    json!({"content_type": "tether_quote", "url": "https://example.com", "text": g.text})
                } else {
                    json!({"content_type": "text", "parts": [g.text]})
                };
                let mut children = vec![json!(format!("m{}", i + 1))];
                if i == 1 {
                    children.push(json!("abandoned"));
                }
                mapping.insert(
                    node.clone(),
                    json!({"id": node, "parent": parent, "children": children,
                           "message": {"id": node, "author": {"role": g.role},
                                       "create_time": g.at as f64 + 0.25, "content": content}}),
                );
                parent = node;
            }
            mapping.insert(
                "abandoned".into(),
                json!({"id": "abandoned", "parent": "m1", "children": [],
                       "message": {"author": {"role": "assistant"}, "create_time": gens[1].at as f64,
                                   "content": {"content_type": "text", "parts": ["a regenerated answer nobody kept"]}}}),
            );
            json!({"title": title, "create_time": gens[0].at as f64, "update_time": gens[0].at as f64,
                   "conversation_id": id, "id": id, "current_node": parent, "mapping": mapping})
        })
        .collect();
    serde_json::to_string(&list).unwrap()
}

/// The Claude export's `conversations.json` of `chats`: tool turns are `tool_result` blocks of
/// the assistant's message.
fn claude_json(chats: &[(String, String, Vec<Gen>)]) -> String {
    let iso = |t: i64| jiff::Timestamp::from_second(t).unwrap().to_string();
    let list: Vec<Value> = chats
        .iter()
        .map(|(id, title, gens)| {
            let msgs: Vec<Value> = gens
                .iter()
                .map(|g| match g.role {
                    "user" => json!({"uuid": format!("{id}-{}", g.at), "sender": "human", "text": g.text,
                                     "created_at": iso(g.at), "content": [{"type": "text", "text": g.text}],
                                     "attachments": [], "files": []}),
                    "assistant" => json!({"uuid": format!("{id}-{}", g.at), "sender": "assistant", "text": g.text,
                                          "created_at": iso(g.at), "content": [{"type": "text", "text": g.text}]}),
                    _ => json!({"uuid": format!("{id}-{}", g.at), "sender": "assistant", "text": "",
                                "created_at": iso(g.at),
                                "content": [{"type": "tool_use", "name": "web_search", "input": {"query": "x"}},
                                            {"type": "tool_result", "name": "web_search",
                                             "content": [{"type": "text", "text": g.text}]}]}),
                })
                .collect();
            json!({"uuid": id, "name": title, "created_at": iso(gens[0].at), "updated_at": iso(gens[0].at),
                   "account": {"uuid": "acct"}, "chat_messages": msgs})
        })
        .collect();
    serde_json::to_string(&list).unwrap()
}

/// Every file of a folder (not `.memdir/`, not `.git/`) with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name == ".memdir" || name == ".git" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, &mut out);
    }
    out
}

fn commits(f: &Fixture) -> usize {
    git(f, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

/// Checks the logs hold every generated turn exactly once, in the file of its day, at its time,
/// `[external]` exactly when it came from a tool.
fn check_turns(f: &Fixture, writer: &str, chats: &[(String, String, Vec<Gen>)]) {
    let files = snapshot(&f.root());
    let logs: BTreeMap<&String, String> = files
        .iter()
        .filter(|(p, _)| p.starts_with("log/") && p.ends_with(&format!(".{writer}.md")))
        .map(|(p, b)| (p, String::from_utf8(b.clone()).unwrap()))
        .collect();
    let total: usize = logs.values().map(|t| t.lines().count()).sum();
    let want: usize = chats.iter().map(|c| c.2.len()).sum();
    assert_eq!(total, want, "one line per turn, nothing else");
    for (_, _, gens) in chats {
        for g in gens {
            let t = jiff::Timestamp::from_second(g.at).unwrap();
            let day = t.strftime("%Y-%m-%d").to_string();
            let hhmm = t.strftime("%H:%M").to_string();
            let text = g.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mark = if g.external { "[external] " } else { "" };
            let line = format!("- {hhmm} {mark}{}: {text}", g.role);
            let path = format!("log/{day}.{writer}.md");
            let found: usize = logs
                .values()
                .map(|body| {
                    body.lines()
                        .filter(|l| l.ends_with(&format!(": {text}")))
                        .count()
                })
                .sum();
            assert_eq!(found, 1, "{text} lands once");
            let body = logs.get(&path).expect("the day's log exists");
            assert!(body.lines().any(|l| l == line), "{line} in {path}");
        }
    }
}

#[test]
fn chatgpt_export_lands_once_per_turn_and_again_adds_nothing() {
    let f = Fixture::new();
    let chats = generated(40, 8);
    let export = f.dir.path().join("export");
    std::fs::create_dir_all(&export).unwrap();
    std::fs::write(export.join("conversations.json"), chatgpt_json(&chats)).unwrap();
    let before = snapshot(&f.root());
    let start = commits(&f);

    // A dry run says what it would do and writes nothing.
    let a = f
        .cmd()
        .args(["import", "chatgpt"])
        .arg(&export)
        .arg("--dry-run")
        .assert()
        .success();
    assert!(
        stdout(&a).contains("would import 320 turns of 40 conversations"),
        "{}",
        stdout(&a)
    );
    assert_eq!(snapshot(&f.root()), before);
    assert_eq!(commits(&f), start);

    let a = f
        .cmd()
        .args(["import", "chatgpt"])
        .arg(&export)
        .assert()
        .success();
    assert!(
        stdout(&a).contains("320 log entries added, 0 already there"),
        "{}",
        stdout(&a)
    );
    check_turns(&f, "chatgpt", &chats);
    let all = snapshot(&f.root());
    let text: String = all
        .values()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert!(
        !text.contains("regenerated answer nobody kept"),
        "the abandoned branch stays out"
    );
    assert!(
        !text.contains("You are ChatGPT"),
        "system messages stay out"
    );
    // One note per conversation, listed by the index.
    let notes: Vec<&String> = all
        .keys()
        .filter(|p| p.starts_with("notes/chats/chatgpt/"))
        .collect();
    assert_eq!(notes.len(), 40, "{notes:?}");
    assert!(f.get("MEMORY.md").contains("Chat number 7: plans"));
    // One commit, naming its source.
    assert_eq!(commits(&f), start + 1);
    let subject = git(&f, &["log", "-1", "--format=%s"]);
    assert!(subject.contains("import chatgpt"), "{subject}");
    assert!(subject.contains("conversations.json"), "{subject}");

    // Again: nothing added, nothing committed.
    let a = f
        .cmd()
        .args(["import", "chatgpt"])
        .arg(export.join("conversations.json"))
        .assert()
        .success();
    assert!(
        stdout(&a).contains("0 log entries added, 320 already there"),
        "{}",
        stdout(&a)
    );
    assert_eq!(snapshot(&f.root()), all);
    assert_eq!(commits(&f), start + 1);
    f.cmd().arg("lint").assert().success();
}

#[test]
fn claude_export_lands_once_per_turn_labelled() {
    let f = Fixture::new();
    let chats = generated(30, 10);
    let file = f.dir.path().join("conversations.json");
    std::fs::write(&file, claude_json(&chats)).unwrap();
    let a = f
        .cmd()
        .args(["import", "claude"])
        .arg(&file)
        .assert()
        .success();
    assert!(
        stdout(&a).contains("imported 300 turns of 30 conversations"),
        "{}",
        stdout(&a)
    );
    check_turns(&f, "claude-ai", &chats);
    let once = snapshot(&f.root());
    f.cmd()
        .args(["import", "claude"])
        .arg(&file)
        .assert()
        .success();
    assert_eq!(snapshot(&f.root()), once);
    // The wrong format is named, with what to use instead; nothing is written.
    let a = f
        .cmd()
        .args(["import", "chatgpt"])
        .arg(&file)
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("memdir import claude"),
        "{}",
        stderr(&a)
    );
    let a = f
        .cmd()
        .args(["import", "claude"])
        .arg(f.dir.path().join("nope.json"))
        .assert()
        .code(1);
    assert!(stderr(&a).contains("does not exist"), "{}", stderr(&a));
    assert_eq!(snapshot(&f.root()), once);
}

#[test]
fn a_later_export_adds_only_the_new_turns() {
    let f = Fixture::new();
    let mut chats = generated(5, 6);
    let file = f.dir.path().join("conversations.json");
    std::fs::write(&file, chatgpt_json(&chats[..4])).unwrap();
    f.cmd()
        .args(["import", "chatgpt"])
        .arg(&file)
        .assert()
        .success();
    // The next export has one more conversation and two more turns in the first.
    let extra: Vec<Gen> = (0..2)
        .map(|i| Gen {
            at: chats[0].2[5].at + 60 * (i + 1),
            role: "user",
            text: format!("late turn {i}"),
            external: false,
        })
        .collect();
    chats[0].2.extend(extra);
    std::fs::write(&file, chatgpt_json(&chats)).unwrap();
    let a = f
        .cmd()
        .args(["import", "chatgpt"])
        .arg(&file)
        .assert()
        .success();
    assert!(
        stdout(&a).contains("8 log entries added, 24 already there"),
        "{}",
        stdout(&a)
    );
    check_turns(&f, "chatgpt", &chats);
}

/// A Claude Code auto memory folder, as documented: `MEMORY.md` and topic files; one topic file
/// has no frontmatter, so its index line names it.
fn claude_code_folder(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("MEMORY.md"),
        "- [User role](user_role.md) — senior backend dev\n- [Build](project_build.md) — cargo xtask builds everything\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("user_role.md"),
        "---\nname: user role\ndescription: senior backend dev\ntype: user\n---\nWrites Go and Rust.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("project_build.md"),
        "Run `cargo xtask` from the root.\n",
    )
    .unwrap();
}

#[test]
fn claude_code_folder_imports_as_notes_and_stays_untouched() {
    let f = Fixture::new();
    let src = f.dir.path().join("claude-memory");
    claude_code_folder(&src);
    let host = snapshot(&src);
    let start = commits(&f);
    let a = f
        .cmd()
        .args(["import", "claude-code"])
        .arg(&src)
        .assert()
        .success();
    let out = stdout(&a);
    assert!(
        out.contains("create notes/user_role.md (from user_role.md)"),
        "{out}"
    );
    assert!(out.contains("skipped MEMORY.md"), "{out}");
    assert_eq!(
        f.get("notes/user_role.md"),
        std::fs::read_to_string(src.join("user_role.md")).unwrap()
    );
    assert_eq!(
        f.get("notes/project_build.md"),
        "---\nname: \"project_build\"\ndescription: \"cargo xtask builds everything\"\n---\nRun `cargo xtask` from the root.\n"
    );
    let index = f.get("MEMORY.md");
    assert!(index.contains("cargo xtask builds everything"), "{index}");
    assert_eq!(snapshot(&src), host, "the host's folder is only read");
    assert_eq!(commits(&f), start + 1);
    assert!(git(&f, &["log", "-1", "--format=%s"]).contains("import claude-code"));
    let a = f
        .cmd()
        .args(["import", "claude-code"])
        .arg(&src)
        .assert()
        .success();
    assert!(
        stdout(&a).contains("0 new file(s), 0 changed"),
        "{}",
        stdout(&a)
    );
    assert_eq!(commits(&f), start + 1);
    // A note of the same path with other text is kept, and said so.
    std::fs::write(src.join("user_role.md"), "changed upstream\n").unwrap();
    let a = f
        .cmd()
        .args(["import", "claude-code"])
        .arg(&src)
        .assert()
        .success();
    assert!(
        stdout(&a).contains("kept notes/user_role.md"),
        "{}",
        stdout(&a)
    );
    assert!(f.get("notes/user_role.md").contains("Writes Go and Rust."));
}

#[test]
fn openclaw_workspace_imports_core_logs_and_notes() {
    let f = Fixture::new();
    let src = f.dir.path().join("workspace");
    std::fs::create_dir_all(src.join("memory")).unwrap();
    std::fs::write(src.join("MEMORY.md"), "- Prefers short answers.\n").unwrap();
    std::fs::write(
        src.join("memory/2026-11-29.md"),
        "# 2026-11-29\n\n- Fixed the retry test.\n",
    )
    .unwrap();
    std::fs::write(
        src.join("memory/2026-11-30.md"),
        "- Moved the queue to NATS.\n",
    )
    .unwrap();
    std::fs::write(src.join("USER.md"), "# USER.md\n\nName: Sam.\n").unwrap();
    let host = snapshot(&src);
    f.cmd()
        .args(["import", "openclaw"])
        .arg(&src)
        .arg("--dry-run")
        .assert()
        .success();
    assert_eq!(f.get("core.md"), "");
    f.cmd()
        .args(["import", "openclaw"])
        .arg(&src)
        .assert()
        .success();
    assert_eq!(f.get("core.md"), "- Prefers short answers.\n");
    assert_eq!(
        f.get("log/2026-11-29.openclaw.md"),
        "# 2026-11-29\n\n- Fixed the retry test.\n"
    );
    assert!(
        f.get("notes/openclaw/USER.md")
            .contains("description: \"OpenClaw's USER.md: who the user is\"")
    );
    let ctx = stdout(&f.cmd().arg("context").assert().success());
    assert!(ctx.contains("Prefers short answers."), "{ctx}");
    assert!(ctx.contains("Moved the queue to NATS."), "{ctx}");
    assert_eq!(snapshot(&src), host);
    // The daily note grew on the host: only the new line comes over.
    std::fs::write(
        src.join("memory/2026-11-30.md"),
        "- Moved the queue to NATS.\n- Wrote the consumer.\n",
    )
    .unwrap();
    let a = f
        .cmd()
        .args(["import", "openclaw"])
        .arg(&src)
        .assert()
        .success();
    assert!(stdout(&a).contains("1 log entry added"), "{}", stdout(&a));
    assert_eq!(
        f.get("log/2026-11-30.openclaw.md"),
        "- Moved the queue to NATS.\n- Wrote the consumer.\n"
    );
}

/// A memory with notes in folders, a log and core, for the round trips.
fn memory_with_notes() -> Fixture {
    let f = Fixture::new();
    f.cmd()
        .args(["write", "core.md", "The user prefers tabs.\n"])
        .assert()
        .success();
    f.cmd()
        .args(["log", "decided on PostgreSQL"])
        .assert()
        .success();
    for (name, kind, desc, body) in [
        (
            "payment-retry",
            "project",
            "retries never re-capture",
            "Captured is terminal.\n",
        ),
        (
            "people/priya",
            "user",
            "leads payments",
            "Priya owns [[payment-retry]].\n",
        ),
        (
            "refs/stripe-api",
            "reference",
            "stripe: limits and keys",
            "100 req/s.\n",
        ),
    ] {
        f.cmd()
            .args(["note", "new", name, "-t", kind, "-d", desc, body])
            .assert()
            .success();
    }
    f
}

#[test]
fn export_then_import_round_trips_the_notes() {
    for format in ["claude-code", "openclaw"] {
        let f = memory_with_notes();
        let out = f.dir.path().join(format!("out-{format}"));
        let a = f
            .cmd()
            .args(["export", "--format", format])
            .arg(&out)
            .assert()
            .success();
        assert!(
            stdout(&a).contains(&format!("in the {format} layout")),
            "{}",
            stdout(&a)
        );
        let exported = snapshot(&out);
        // Exporting again finds everything in place.
        let a = f
            .cmd()
            .args(["export", "--format", format])
            .arg(&out)
            .assert()
            .success();
        assert!(stdout(&a).contains("wrote 0 files"), "{}", stdout(&a));
        // The host can use it: served in place, its index links every note.
        let serve = Fixture::empty();
        let lint = serve
            .cmd()
            .env("MEMDIR_ROOT", &out)
            .args(["--layout", format, "lint", "--json"])
            .assert();
        let v: Value = serde_json::from_str(&stdout(&lint)).unwrap();
        let drift = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "index-drift")
            .count();
        assert_eq!(drift, 0, "{format}: {v}");
        let ctx = stdout(
            &serve
                .cmd()
                .env("MEMDIR_ROOT", &out)
                .args(["--layout", format, "context"])
                .assert()
                .success(),
        );
        assert!(ctx.contains("The user prefers tabs."), "{format}: {ctx}");
        assert_eq!(
            snapshot(&out),
            exported,
            "reading the export changes nothing"
        );

        let back = Fixture::new();
        back.cmd()
            .args(["import", format])
            .arg(&out)
            .assert()
            .success();
        for note in [
            "notes/payment-retry.md",
            "notes/people/priya.md",
            "notes/refs/stripe-api.md",
        ] {
            assert_eq!(back.get(note), f.get(note), "{format}: {note}");
        }
        assert_eq!(back.get("MEMORY.md"), f.get("MEMORY.md"), "{format}");
        if format == "openclaw" {
            assert_eq!(back.get("core.md"), f.get("core.md"));
        }
    }
}

#[test]
fn export_never_writes_over_and_the_old_copy_still_works() {
    let f = memory_with_notes();
    let out = f.dir.path().join("cc");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("MEMORY.md"), "mine\n").unwrap();
    let a = f
        .cmd()
        .args(["export", "--format", "claude-code"])
        .arg(&out)
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("MEMORY.md is already in the target"),
        "{}",
        stderr(&a)
    );
    assert_eq!(snapshot(&out).len(), 1, "nothing written");
    let a = f
        .cmd()
        .args(["export", "--format", "memdir"])
        .arg(&out)
        .assert()
        .code(2);
    assert!(stderr(&a).contains("--to DIR"), "{}", stderr(&a));
    let a = f.cmd().arg("import").assert().code(2);
    assert!(stderr(&a).contains("claude-code DIR"), "{}", stderr(&a));
    // The byte-for-byte copy in both directions is as it was.
    let copy = f.dir.path().join("copy");
    f.cmd()
        .args(["export", "--to"])
        .arg(&copy)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(copy.join("notes/people/priya.md")).unwrap(),
        f.get("notes/people/priya.md")
    );
    let other = Fixture::empty();
    other
        .cmd()
        .args(["import", "--from"])
        .arg(&copy)
        .assert()
        .success();
    assert_eq!(other.get("core.md"), f.get("core.md"));
}
