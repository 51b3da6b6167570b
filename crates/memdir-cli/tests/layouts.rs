//! Issue 20: folders other tools keep (Claude Code's auto memory, an OpenClaw workspace) served
//! in place with `--layout` / `[layout]`, on the real binary. The fixtures are written here from
//! the hosts' documented formats, and every test checks the host's files are byte for byte as
//! they were, except where memdir was asked to write.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use assert_cmd::Command;
use common::{NOW, stderr, stdout};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A host's folder in a temp dir.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new(files: &[(&str, &str)]) -> Host {
        let h = Host {
            dir: tempfile::tempdir().unwrap(),
        };
        for (rel, text) in files {
            h.put(rel, text);
        }
        h
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("memory")
    }

    fn put(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    /// `memdir` on this folder with a clean environment, UTC and the fixed clock.
    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("memdir").unwrap();
        c.env_clear()
            .env("MEMDIR_ROOT", self.root())
            .env("MEMDIR_NOW", NOW)
            .env("TZ", "UTC")
            .env("HOME", self.dir.path());
        c
    }

    /// `memdir --layout LAYOUT ARGS...`, expected to succeed; its stdout.
    fn run(&self, layout: &str, args: &[&str]) -> String {
        let a = self
            .cmd()
            .args(["--layout", layout])
            .args(args)
            .assert()
            .success();
        stdout(&a)
    }

    /// A memdir tool call (`memdir tool NAME` with `json` on stdin); its text.
    fn tool(&self, layout: &str, name: &str, json: &str) -> String {
        let a = self
            .cmd()
            .args(["--layout", layout, "tool", name])
            .write_stdin(json)
            .assert()
            .success();
        stdout(&a)
    }

    /// Every file of the host (not memdir's `.memdir/`, not `.git/`), with its bytes.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        walk(&self.root(), &self.root(), &mut out);
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".memdir" || name == ".git" {
            continue;
        }
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// The files that differ between two snapshots (changed, added or removed).
fn changed(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// Claude Code's auto memory as its docs describe it: `MEMORY.md`, an index the agent writes
/// (one line per memory, `- [Title](file.md) — hook`), and one topic file per memory with
/// `name`, `description` and `type` frontmatter. One topic file is not in the index.
fn claude_code() -> Host {
    Host::new(&[
        (
            "MEMORY.md",
            "- [User role](user_role.md) — senior backend dev, prefers Go\n\
             - [Testing](feedback_testing.md) — integration tests hit a real database\n\
             - [Deploys](project_deploy.md) — everything goes through staging first\n",
        ),
        (
            "user_role.md",
            "---\nname: user role\ndescription: senior backend dev, prefers Go\ntype: user\n---\nThe user writes Go services and reviews every migration.\n",
        ),
        (
            "feedback_testing.md",
            "---\nname: testing\ndescription: integration tests hit a real database\ntype: feedback\nmodified: 2026-11-28T10:00:00Z\n---\nNever mock the database in integration tests: a mocked test hid a broken migration.\n",
        ),
        (
            "project_deploy.md",
            "---\nname: deploys\ndescription: everything goes through staging first\ntype: project\n---\nDeploys go to the kubernetes staging cluster, then production after a soak.\n",
        ),
        (
            "reference_dashboards.md",
            "---\nname: dashboards\ndescription: where the latency graphs are\ntype: reference\n---\nGrafana board payments-latency.\n",
        ),
    ])
}

/// An OpenClaw workspace as its docs describe it: `MEMORY.md` of durable facts, daily notes in
/// `memory/YYYY-MM-DD.md`, and the bootstrap files next to them.
fn openclaw() -> Host {
    Host::new(&[
        (
            "MEMORY.md",
            "# Long-term memory\n\n- Prefers short answers.\n- Works on the payments service, written in Go.\n",
        ),
        (
            "memory/2026-11-20.md",
            "# 2026-11-20\n\n- Old note about zeppelins.\n",
        ),
        (
            "memory/2026-11-29.md",
            "# 2026-11-29\n\n- Fixed the flaky retry test.\n",
        ),
        (
            "memory/2026-11-30.md",
            "# 2026-11-30\n\n- Decided to move the queue to NATS.\n",
        ),
        (
            "memory/2026-11-30-session-x1.md",
            "# Session\n\n- Talked about the retry budget.\n",
        ),
        (
            "memory/projects.md",
            "# Projects\n\n- payments: the ledger rewrite\n",
        ),
        (
            "AGENTS.md",
            "# AGENTS.md\n\nRead MEMORY.md and today's notes first.\n",
        ),
        ("SOUL.md", "# SOUL.md\n\nBe direct.\n"),
    ])
}

#[test]
fn claude_code_folder_answers_in_place() {
    let h = claude_code();
    let before = h.snapshot();
    let ctx = h.run("claude-code", &["context"]);
    assert!(ctx.contains("Index of notes (MEMORY.md)"), "{ctx}");
    assert!(ctx.contains("[User role](user_role.md)"), "{ctx}");
    let hits = h.run("claude-code", &["search", "staging"]);
    assert!(hits.contains("project_deploy.md:"), "{hits}");
    let ranked = h.run(
        "claude-code",
        &["search", "--mode", "ranked", "mock the database"],
    );
    assert!(ranked.contains("feedback_testing.md"), "{ranked}");
    let tool = h.tool(
        "claude-code",
        "memory_search",
        r#"{"pattern": "kubernetes"}"#,
    );
    assert!(tool.contains("project_deploy.md"), "{tool}");
    let read = h.tool("claude-code", "memory_read", r#"{"path": "user_role.md"}"#);
    assert!(read.contains("reviews every migration"), "{read}");
    let tctx = h.tool("claude-code", "memory_context", "{}");
    assert!(tctx.contains("[Deploys](project_deploy.md)"), "{tctx}");
    let hook = h
        .cmd()
        .args(["--layout", "claude-code", "hook", "session-start"])
        .write_stdin(r#"{"hook_event_name": "SessionStart", "source": "startup"}"#)
        .assert()
        .success();
    assert!(stdout(&hook).contains("user_role.md"), "{}", stdout(&hook));
    assert_eq!(changed(&before, &h.snapshot()), Vec::<String>::new());
}

#[test]
fn claude_code_index_is_never_regenerated_and_lint_reports_drift() {
    let h = claude_code();
    let before = h.snapshot();
    // A note written through memdir lands as a topic file at the top level; the agent's index
    // stays exactly as it was.
    let path = h.run(
        "claude-code",
        &[
            "note",
            "new",
            "reference-oncall",
            "-t",
            "reference",
            "-d",
            "who is on call",
            "Priya this week.",
        ],
    );
    assert!(path.contains("reference-oncall.md"), "{path}");
    assert_eq!(
        changed(&before, &h.snapshot()),
        vec!["reference-oncall.md".to_string()]
    );
    let a = h
        .cmd()
        .args(["--layout", "claude-code", "index"])
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("never regenerates it"),
        "{}",
        stderr(&a)
    );
    let a = h
        .cmd()
        .args(["--layout", "claude-code", "lint", "--json"])
        .assert();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    let drift: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "index-drift")
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        drift,
        vec!["reference-oncall.md", "reference_dashboards.md"],
        "{v}"
    );
    // The agent keeps its index by hand, through the tools too, and a dead link is drift.
    let t = h.tool(
        "claude-code",
        "memory_edit",
        r#"{"path": "MEMORY.md", "append": "- [Gone](gone.md) — removed later"}"#,
    );
    assert!(!t.to_lowercase().contains("generated"), "{t}");
    assert!(
        h.get("MEMORY.md")
            .ends_with("- [Gone](gone.md) — removed later\n")
    );
    let a = h.cmd().args(["--layout", "claude-code", "lint"]).assert();
    assert!(
        stdout(&a).contains("gone.md, which does not exist"),
        "{}",
        stdout(&a)
    );
    // The memdir layout on the same folder would refuse that write: its index is generated.
    let a = h.cmd().args(["write", "MEMORY.md", "x"]).assert().code(2);
    assert!(stderr(&a).contains("generated"), "{}", stderr(&a));
}

#[test]
fn openclaw_workspace_answers_in_place() {
    let h = openclaw();
    let before = h.snapshot();
    let ctx = h.run("openclaw", &["context"]);
    assert!(ctx.contains("Core memory (MEMORY.md)"), "{ctx}");
    assert!(ctx.contains("Prefers short answers."), "{ctx}");
    assert!(ctx.contains("Log 2026-11-30 (today)"), "{ctx}");
    assert!(ctx.contains("Decided to move the queue to NATS."), "{ctx}");
    assert!(ctx.contains("Fixed the flaky retry test."), "{ctx}");
    assert!(
        ctx.contains("Talked about the retry budget."),
        "slugged daily notes too: {ctx}"
    );
    assert!(
        !ctx.contains("zeppelins"),
        "older days are not loaded: {ctx}"
    );
    assert!(!ctx.contains("Index of notes"), "{ctx}");
    let hits = h.run("openclaw", &["search", "NATS"]);
    assert!(hits.contains("memory/2026-11-30.md:"), "{hits}");
    let tool = h.tool("openclaw", "memory_search", r#"{"pattern": "zeppelins"}"#);
    assert!(tool.contains("memory/2026-11-20.md"), "{tool}");
    let tctx = h.tool("openclaw", "memory_context", "{}");
    assert!(tctx.contains("Works on the payments service"), "{tctx}");
    let links = h.run("openclaw", &["lint"]);
    assert!(
        !links.contains("AGENTS.md"),
        "bootstrap files are not notes: {links}"
    );
    assert_eq!(changed(&before, &h.snapshot()), Vec::<String>::new());

    // A log line goes to today's daily note, after what the host wrote.
    h.run("openclaw", &["log", "shipped the NATS consumer"]);
    assert_eq!(
        h.get("memory/2026-11-30.md"),
        "# 2026-11-30\n\n- Decided to move the queue to NATS.\n- 09:15 shipped the NATS consumer\n"
    );
    assert_eq!(
        changed(&before, &h.snapshot()),
        vec!["memory/2026-11-30.md".to_string()]
    );
    // Another writer's lines go to a slugged daily note, which OpenClaw loads with the day's.
    h.run(
        "openclaw",
        &["--writer", "bot", "log", "nightly check passed"],
    );
    assert_eq!(
        h.get("memory/2026-11-30-bot.md"),
        "- 09:15 nightly check passed\n"
    );
    let ctx = h.run("openclaw", &["context"]);
    assert!(ctx.contains("- 09:15 (bot) nightly check passed"), "{ctx}");
    // Core is MEMORY.md, gated like core.md: an agent's rewrite becomes a proposal.
    let a = h
        .cmd()
        .args(["--layout", "openclaw", "tool", "memory_edit"])
        .write_stdin(r#"{"path": "MEMORY.md", "append": "- Likes tea."}"#)
        .assert()
        .code(1);
    assert!(stdout(&a).contains("MEMORY.md is gated"), "{}", stdout(&a));
    assert!(!h.get("MEMORY.md").contains("tea"));
}

#[test]
fn init_existing_detects_the_layout_and_touches_no_host_file() {
    for (host, want, probe) in [
        (claude_code(), "claude-code", "[User role](user_role.md)"),
        (openclaw(), "openclaw", "Core memory (MEMORY.md)"),
    ] {
        let before = host.snapshot();
        let a = host.cmd().args(["init", "--existing"]).assert().success();
        assert!(
            stdout(&a).contains(&format!("layout {want}")),
            "{}",
            stdout(&a)
        );
        let config = std::fs::read_to_string(host.root().join(".memdir/config.toml")).unwrap();
        assert!(config.contains(&format!("name = \"{want}\"")), "{config}");
        // From now on the config says it: no --layout needed, and nothing of the host moved.
        let a = host.cmd().arg("context").assert().success();
        assert!(stdout(&a).contains(probe), "{}", stdout(&a));
        assert_eq!(
            changed(&before, &host.snapshot()),
            Vec::<String>::new(),
            "{want}"
        );
        assert!(host.root().join(".git").exists(), "history is kept: {want}");
        // memdir's own log next to the host's files does not make it look like another layout.
        host.cmd().args(["log", "adopted"]).assert().success();
        let a = host.cmd().args(["init", "--existing"]).assert().success();
        assert!(
            stdout(&a).contains(&format!("layout {want}")),
            "{}",
            stdout(&a)
        );
    }
}

#[test]
fn init_existing_refuses_to_guess() {
    let h = Host::new(&[
        ("core.md", "facts\n"),
        ("memory/2026-11-30.md", "- a day\n"),
    ]);
    let a = h.cmd().args(["init", "--existing"]).assert().code(2);
    let err = stderr(&a);
    assert!(
        err.contains("--layout memdir or --layout openclaw"),
        "{err}"
    );
    assert!(!h.root().join(".memdir").exists());
    // Naming it settles it.
    h.cmd()
        .args(["--layout", "openclaw", "init", "--existing"])
        .assert()
        .success();
    assert!(!h.root().join("log").exists() && !h.root().join("scratch").exists());
    let a = h
        .cmd()
        .args(["--layout", "nope", "context"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("use memdir, claude-code or openclaw"));
}

#[test]
fn sweep_archives_a_claude_code_topic_file_and_leaves_the_index_alone() {
    let h = claude_code();
    h.put(
        "project_freeze.md",
        "---\nname: freeze\ndescription: code freeze until the 20th\ntype: project\nexpires: 2026-11-20\n---\nNo deploys.\n",
    );
    let index = h.get("MEMORY.md");
    let out = h.run("claude-code", &["sweep"]);
    assert!(out.contains("archive/project_freeze.md"), "{out}");
    assert_eq!(h.get("MEMORY.md"), index);
    assert!(!h.root().join("project_freeze.md").exists());
}
