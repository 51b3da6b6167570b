//! `memdir install` / `uninstall` for Codex CLI, Gemini CLI, VS Code and Claude Desktop, and the
//! Claude Code hooks: a fresh home holding the host's file as its docs show it (comments, other
//! servers, other settings), install, a second install that changes nothing, and an uninstall
//! that gives the file its bytes back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{Fixture, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `~/.codex/config.toml` as Codex's docs show one: settings, comments, a server with an env
/// table, a profile.
const CODEX: &str = r#"# ~/.codex/config.toml
model = "gpt-5-codex"
approval_policy = "on-request"  # ask before running commands

# Servers Codex starts with every session
[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
# read from the environment at start
MY_ENV_VAR = "MY_ENV_VALUE"

[profiles.fast]
model = "gpt-5-mini"
"#;

/// `~/.gemini/settings.json` as Gemini CLI's docs show it.
const GEMINI: &str = r#"{
  "theme": "GitHub",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {
        "DATABASE_URL": "$DB_CONNECTION_STRING"
      },
      "timeout": 15000
    }
  }
}
"#;

/// `.vscode/mcp.json` as VS Code's docs show it: comments, `inputs`, a server using one.
const VSCODE: &str = r#"{
  // Inputs are asked for on the server's first start, then stored by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    }
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {
        "PERPLEXITY_API_KEY": "${input:perplexity-key}"
      }
    }
  }
}
"#;

/// `claude_desktop_config.json` as the MCP quickstart shows it.
const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/username/Desktop"
      ]
    }
  }
}
"#;

fn run(f: &Fixture, args: &[&str]) -> String {
    stdout(
        &f.cmd()
            .current_dir(f.dir.path())
            .args(args)
            .assert()
            .success(),
    )
}

fn run_v(f: &Fixture, args: Vec<String>) -> String {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(f, &a)
}

/// The host's whole round: dry run, install, install again, uninstall. `servers` reads the
/// file's servers as JSON.
fn round(host: &str, rel: &str, original: &str, servers: fn(&str) -> Value, project: bool) {
    let f = Fixture::new();
    let path: PathBuf = f.dir.path().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, original).unwrap();
    let scope: &[&str] = if project { &["--project"] } else { &[] };
    let with = |verb: &str, extra: &[&str]| {
        let mut v = vec![verb, host];
        v.extend_from_slice(scope);
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };

    let dry = run_v(&f, with("install", &["--dry-run"]));
    assert!(dry.contains("+") && dry.contains("memdir"), "{dry}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        original,
        "a dry run writes nothing"
    );

    let out = run_v(&f, with("install", &[]));
    assert!(
        out.contains(&format!("{}: added memdir", path.display())),
        "{out}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    // Every line that was there is still there, comments included, in the same order.
    let mut lines = text.lines();
    for line in original.lines() {
        assert!(lines.any(|l| l == line), "lost or moved {line:?}:\n{text}");
    }
    let s = servers(&text);
    let ours = &s["memdir"];
    assert!(
        ours["command"].as_str().unwrap().ends_with("memdir"),
        "{text}"
    );
    assert_eq!(ours["args"], serde_json::json!(["mcp"]));
    assert_eq!(
        ours["env"]["MEMDIR_ROOT"],
        f.root().to_string_lossy().as_ref(),
        "{text}"
    );
    assert_eq!(
        s.as_object().unwrap().len(),
        2,
        "the other server stays: {text}"
    );

    let again = run_v(&f, with("install", &[]));
    assert!(
        again.contains(&format!("{}: unchanged", path.display())),
        "{again}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    let out = run_v(&f, with("uninstall", &[]));
    assert!(out.contains("removed memdir"), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);

    // Installed, then edited by hand: uninstall takes out memdir's entry and nothing else.
    run_v(&f, with("install", &[]));
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("npx", "bunx", 1);
    std::fs::write(&path, &edited).unwrap();
    run_v(&f, with("uninstall", &[]));
    let left = std::fs::read_to_string(&path).unwrap();
    assert_eq!(left, original.replacen("npx", "bunx", 1), "{left}");
}

fn codex_servers(text: &str) -> Value {
    let t: toml::Table = toml::from_str(text).unwrap();
    serde_json::to_value(&t["mcp_servers"]).unwrap()
}

fn json_servers(key: &'static str) -> impl Fn(&str) -> Value {
    move |text| {
        let v: Value = jsonc_parser::parse_to_serde_value(text, &Default::default()).unwrap();
        v[key].clone()
    }
}

#[test]
fn codex_config_toml_keeps_comments_and_order() {
    round("codex", ".codex/config.toml", CODEX, codex_servers, false);
}

#[test]
fn codex_writes_only_its_own_table() {
    let f = Fixture::new();
    run(&f, &["install", "codex"]);
    let text = std::fs::read_to_string(f.dir.path().join(".codex/config.toml")).unwrap();
    assert!(
        text.starts_with("[mcp_servers.memdir]\ncommand = "),
        "{text}"
    );
    assert!(
        text.contains("\n[mcp_servers.memdir.env]\nMEMDIR_ROOT = "),
        "{text}"
    );
    assert!(text.contains("MEMDIR_WRITER = \"codex\""), "{text}");
    run(&f, &["uninstall", "codex"]);
    assert!(
        !f.dir.path().join(".codex/config.toml").exists(),
        "memdir had created it"
    );
}

#[test]
fn gemini_settings_json() {
    round(
        "gemini",
        ".gemini/settings.json",
        GEMINI,
        |t| json_servers("mcpServers")(t),
        false,
    );
    round(
        "gemini",
        ".gemini/settings.json",
        GEMINI,
        |t| json_servers("mcpServers")(t),
        true,
    );
}

#[test]
fn vscode_mcp_json_with_comments() {
    round(
        "vscode",
        ".vscode/mcp.json",
        VSCODE,
        |t| json_servers("servers")(t),
        true,
    );
    round(
        "vscode",
        ".config/Code/User/mcp.json",
        VSCODE,
        |t| json_servers("servers")(t),
        false,
    );
}

#[test]
fn claude_desktop_config() {
    round(
        "claude-desktop",
        ".config/Claude/claude_desktop_config.json",
        CLAUDE_DESKTOP,
        |t| json_servers("mcpServers")(t),
        false,
    );
    let f = Fixture::new();
    let a = f
        .cmd()
        .args(["install", "claude-desktop", "--project"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("Claude Desktop has no project settings"));
}

#[test]
fn a_broken_file_is_never_written() {
    let f = Fixture::new();
    let codex = f.dir.path().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "[mcp_servers\ncommand = 1\n").unwrap();
    let a = f.cmd().args(["install", "codex"]).assert().code(2);
    let err = stderr(&a);
    assert!(
        err.contains("is not valid TOML") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&codex).unwrap(),
        "[mcp_servers\ncommand = 1\n"
    );
    // Claude Desktop's file is strict JSON: a comment in it is refused, not kept.
    let desktop = f
        .dir
        .path()
        .join(".config/Claude/claude_desktop_config.json");
    std::fs::create_dir_all(desktop.parent().unwrap()).unwrap();
    std::fs::write(&desktop, "{ // mine\n}\n").unwrap();
    let a = f.cmd().args(["install", "claude-desktop"]).assert().code(2);
    assert!(stderr(&a).contains("is not valid JSON"), "{}", stderr(&a));
}

#[test]
fn claude_code_hooks_include_session_end_and_user_prompt() {
    let f = Fixture::new();
    run(&f, &["install", "claude-code"]);
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(f.dir.path().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    for (event, arg) in [
        ("SessionStart", "session-start"),
        ("PreCompact", "pre-compact"),
        ("SessionEnd", "session-end"),
        ("UserPromptSubmit", "user-prompt"),
    ] {
        let cmd = s["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(
            cmd.ends_with(&format!("memdir hook {arg}")),
            "{event}: {cmd}"
        );
    }
    run(&f, &["uninstall"]);
    assert!(!Path::new(&f.dir.path().join(".claude/settings.json")).exists());
}
