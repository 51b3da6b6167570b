//! Secrets never stick: every credential of the corpus is redacted on every write path of the
//! real binary (CLI commands and `memdir mcp` tools) before anything is written, files, history
//! and the change journal alike; near misses are stored as given; `refuse` writes nothing and
//! says why in one line; `off` stores what it is given.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../memdir-secrets/tests/corpus/mod.rs"]
mod corpus;

use common::Fixture;
use common::mcp::Rpc;
use serde_json::json;

/// Every corpus secret, one per paragraph.
fn all_secrets() -> String {
    corpus::secrets()
        .iter()
        .map(|c| c.line.clone())
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn all_near_misses() -> String {
    corpus::near_misses().join("\n\n")
}

/// Every file under the root (history included, as `git log -p --all` prints it), as text.
fn everything(f: &Fixture) -> String {
    let mut out = String::new();
    let mut stack = vec![f.root()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    out.push_str(&common::git(f, &["log", "-p", "--all"]));
    out
}

/// No secret of the corpus anywhere; each rule's redaction mark in `text`.
fn assert_redacted(f: &Fixture, what: &str, text: &str) {
    let all = everything(f);
    for c in corpus::secrets() {
        assert!(
            !all.contains(&c.secret),
            "{what}: the {} secret was stored",
            c.family
        );
        let head: String = c.secret.chars().take(4).collect();
        assert!(
            text.contains(&format!("[redacted:{}:{head}…]", c.rule)),
            "{what}: no redaction of the {} secret in {text}",
            c.family
        );
    }
}

fn assert_kept(what: &str, text: &str) {
    for line in corpus::near_misses() {
        assert!(text.contains(line), "{what}: near miss changed: {line}");
    }
}

fn config(f: &Fixture, policy: &str) {
    f.put(
        ".memdir/config.toml",
        &format!("[secrets]\npolicy = \"{policy}\"\n"),
    );
}

#[test]
fn every_cli_write_path_redacts_every_secret_and_keeps_near_misses() {
    let f = Fixture::new();
    let secrets = all_secrets();
    let near = all_near_misses();
    f.cmd().args(["log", &secrets]).assert().success();
    f.cmd().args(["log", &near]).assert().success();
    assert_redacted(&f, "log", &f.get("log/2026-11-30.md"));
    assert_kept("log", &f.get("log/2026-11-30.md").replace("\n  ", "\n"));

    f.cmd()
        .args(["write", "notes/w.md", &secrets])
        .assert()
        .success();
    f.cmd()
        .args(["write", "notes/near.md", &near])
        .assert()
        .success();
    assert_redacted(&f, "write", &f.get("notes/w.md"));
    assert_kept("write", &f.get("notes/near.md"));
    assert!(!f.get("notes/near.md").contains("[redacted:"));

    f.cmd()
        .args(["write", "notes/e.md", "start\n"])
        .assert()
        .success();
    f.cmd()
        .args(["edit", "notes/e.md", "--append", &secrets])
        .assert()
        .success();
    assert_redacted(&f, "edit", &f.get("notes/e.md"));

    f.cmd().args(["scratch", "s", &secrets]).assert().success();
    let scratch = std::fs::read_dir(f.root().join("scratch"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert_redacted(&f, "scratch", &scratch);

    f.cmd().args(["state", "add", &secrets]).assert().success();
    assert_redacted(&f, "state add", &f.get("state.md"));

    f.cmd()
        .args([
            "note", "new", "creds", "-t", "fact", "-d", "the keys", &secrets,
        ])
        .assert()
        .success();
    assert_redacted(&f, "note new", &f.get("notes/creds.md"));

    f.cmd()
        .args(["offload", "--label", "keys", &secrets])
        .assert()
        .success();
    assert_redacted(&f, "offload", &everything(&f));

    // A reason is recorded like content; the change says it redacted, never what.
    f.cmd()
        .args([
            "write",
            "notes/r.md",
            "x\n",
            "--reason",
            &corpus::secrets()[0].line,
        ])
        .assert()
        .success();
    assert_redacted(&f, "all", &everything(&f));
    let log = common::git(&f, &["log", "--format=%B", "-1", "--", "notes/creds.md"]);
    assert!(log.contains("redacted 11 secrets ("), "{log}");
    assert!(
        log.contains("aws-access-token") && log.contains("private-key"),
        "{log}"
    );
}

#[test]
fn refuse_writes_nothing_and_names_the_kind_and_the_line() {
    let f = Fixture::new();
    config(&f, "refuse");
    let commits = common::git(&f, &["rev-list", "--count", "HEAD"]);
    let aws = &corpus::secrets()[0];
    let text = format!("first line\n{}", aws.line);
    let a = f.cmd().args(["log", &text]).assert().code(2);
    let err = common::stderr(&a);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("line 2") && err.contains("aws-access-token"),
        "{err}"
    );
    assert!(!err.contains(&aws.secret), "{err}");
    f.cmd()
        .args(["write", "notes/x.md", &text])
        .assert()
        .code(2);
    f.cmd().args(["state", "add", &text]).assert().code(2);
    assert!(!f.exists("log/2026-11-30.md") && !f.exists("notes/x.md"));
    assert!(!everything(&f).contains(&aws.secret));
    assert_eq!(common::git(&f, &["rev-list", "--count", "HEAD"]), commits);
    // Near misses pass.
    f.cmd().args(["log", &all_near_misses()]).assert().success();
}

#[test]
fn off_stores_what_it_is_given() {
    let f = Fixture::new();
    config(&f, "off");
    let aws = &corpus::secrets()[0];
    f.cmd()
        .args(["write", "notes/x.md", &aws.line])
        .assert()
        .success();
    assert_eq!(f.get("notes/x.md"), aws.line);
}

#[test]
fn a_bad_policy_is_a_one_line_error() {
    let f = Fixture::new();
    config(&f, "maybe");
    let a = f.cmd().args(["log", "hello"]).assert().failure();
    let err = common::stderr(&a);
    assert!(err.contains("`maybe`") && err.contains("`refuse`"), "{err}");
}

#[test]
fn every_mcp_write_tool_redacts_every_secret() {
    let f = Fixture::new();
    let secrets = all_secrets();
    let mut rpc = Rpc::initialized(&f, "secrets");
    let calls = [
        ("memory_log", json!({"text": secrets})),
        (
            "memory_write",
            json!({"path": "notes/w.md", "content": secrets}),
        ),
        (
            "memory_write",
            json!({"path": "notes/e.md", "content": "start\n"}),
        ),
        (
            "memory_edit",
            json!({"path": "notes/e.md", "old": "start", "new": secrets}),
        ),
        ("memory_scratch", json!({"name": "s", "body": secrets})),
        ("memory_offload", json!({"content": secrets})),
        (
            "memory",
            json!({"command": "create", "path": "/memories/m.md", "file_text": secrets}),
        ),
    ];
    for (tool, args) in calls {
        let (text, error) = rpc.call(tool, args);
        assert!(!error, "{tool}: {text}");
    }
    drop(rpc);
    assert_redacted(&f, "memory_log", &f.get("log/2026-11-30.md"));
    assert_redacted(&f, "memory_write", &f.get("notes/w.md"));
    assert_redacted(&f, "memory_edit", &f.get("notes/e.md"));
    assert_redacted(&f, "all tools", &everything(&f));

    config(&f, "refuse");
    let mut rpc = Rpc::initialized(&f, "secrets");
    let aws = &corpus::secrets()[0];
    let (text, error) = rpc.call("memory_log", json!({"text": aws.line}));
    assert!(error, "{text}");
    assert!(
        text.contains("aws-access-token") && text.contains("line 1"),
        "{text}"
    );
    assert!(!text.contains(&aws.secret), "{text}");
}

#[test]
fn lint_secrets_names_file_line_and_kind_never_the_value() {
    let f = Fixture::new();
    let aws = &corpus::secrets()[0];
    f.put(
        "notes/old.md",
        &format!("# Old\n\nfrom before: {}\n", aws.line),
    );
    // Without the flag lint does not read every file for credentials.
    let plain = common::stdout(&f.cmd().arg("lint").assert());
    assert!(!plain.contains("secret"), "{plain}");
    let a = f.cmd().args(["lint", "--secrets"]).assert().code(2);
    let out = common::stdout(&a);
    assert!(
        out.contains("notes/old.md:3: error[secret]: a credential (aws-access-token)"),
        "{out}"
    );
    assert!(!out.contains(&aws.secret), "{out}");
    let a = f
        .cmd()
        .args(["lint", "--secrets", "--json"])
        .assert()
        .code(2);
    assert!(!common::stdout(&a).contains(&aws.secret));
}

#[test]
fn an_imported_conversation_is_redacted_too() {
    let f = Fixture::new();
    let at = 1_764_493_200.0_f64;
    let mapping = json!({
        "root": {"id": "root", "message": null, "parent": null, "children": ["m0"]},
        "m0": {"id": "m0", "parent": "root", "children": ["m1"],
               "message": {"id": "m0", "author": {"role": "user"}, "create_time": at,
                           "content": {"content_type": "text", "parts": [all_secrets()]}}},
        "m1": {"id": "m1", "parent": "m0", "children": [],
               "message": {"id": "m1", "author": {"role": "assistant"}, "create_time": at + 1.0,
                           "content": {"content_type": "text", "parts": ["noted"]}}},
    });
    let export = json!([{"title": "keys", "create_time": at, "update_time": at,
        "conversation_id": "c1", "id": "c1", "current_node": "m1", "mapping": mapping}]);
    let dir = f.dir.path().join("export");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("conversations.json"), export.to_string()).unwrap();
    f.cmd()
        .args(["import", "chatgpt"])
        .arg(&dir)
        .assert()
        .success();
    assert_redacted(&f, "import", &everything(&f));
}

#[test]
fn a_transcript_saved_by_the_session_hooks_is_redacted_too() {
    let f = Fixture::new();
    let session = "5f2c1a9e-3b7d-4c21-9e0f-2a8b6c4d1e77";
    let line = |i: usize, kind: &str, content: serde_json::Value| {
        json!({"parentUuid": null, "isSidechain": false, "userType": "external",
               "cwd": "/home/priya", "sessionId": session, "version": "2.0.31",
               "type": kind, "message": {"role": kind, "content": content},
               "uuid": format!("00000000-0000-4000-8000-00000000000{i}"),
               "timestamp": format!("2026-11-30T09:0{i}:00.000Z")})
        .to_string()
    };
    let transcript = [
        line(1, "user", json!(format!("here are my keys:\n\n{}", all_secrets()))),
        line(
            2,
            "assistant",
            json!([{"type": "text", "text": format!("noted, and these are fine: {}", all_near_misses())}]),
        ),
    ]
    .join("\n")
        + "\n";
    let path = f.dir.path().join("transcript.jsonl");
    std::fs::write(&path, transcript).unwrap();
    for (hook, event) in [("pre-compact", "PreCompact"), ("session-end", "SessionEnd")] {
        let input = json!({"session_id": session, "transcript_path": path,
                           "cwd": "/home/priya", "hook_event_name": event,
                           "trigger": "auto", "custom_instructions": "", "reason": "exit"});
        f.cmd()
            .args(["hook", hook])
            .write_stdin(input.to_string())
            .assert()
            .success();
    }
    let saved = std::fs::read_dir(f.root().join("sessions"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(saved.contains("here are my keys"), "{saved}");
    assert_redacted(&f, "hooks", &saved);
    assert_kept("hooks", &saved);
    assert_redacted(&f, "hooks", &everything(&f));
}
