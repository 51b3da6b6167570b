//! `memdir install` / `memdir uninstall` on a temp HOME with settings files already there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{Fixture, stderr, stdout};
use serde_json::Value;

const SETTINGS: &str = "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n  \"hooks\": {\n    \"SessionStart\": [{\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}]\n  }\n}\n";
const CLAUDE_JSON: &str =
    "{\"numStartups\":3,\"mcpServers\":{\"other\":{\"command\":\"npx\",\"args\":[\"x\"]}}}";

fn home(f: &Fixture) -> std::path::PathBuf {
    f.dir.path().to_path_buf()
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn claude_code_user_install_keeps_what_is_there_and_uninstall_restores_the_bytes() {
    let f = Fixture::new();
    let settings = home(&f).join(".claude/settings.json");
    let claude_json = home(&f).join(".claude.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, SETTINGS).unwrap();
    std::fs::write(&claude_json, CLAUDE_JSON).unwrap();

    let dry = stdout(
        &f.cmd()
            .args(["install", "claude-code", "--dry-run"])
            .assert()
            .success(),
    );
    assert!(dry.contains("+    \"memdir\": {"), "{dry}");
    assert!(dry.contains("hook session-start"), "{dry}");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        SETTINGS,
        "a dry run writes nothing"
    );

    let out = stdout(&f.cmd().args(["install", "claude-code"]).assert().success());
    assert!(out.contains(".claude.json: added memdir"), "{out}");
    let s = json(&settings);
    assert_eq!(s["model"], "opus");
    assert_eq!(s["permissions"]["allow"][0], "Bash(ls)");
    let start = s["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(start.len(), 2);
    assert_eq!(start[0]["hooks"][0]["command"], "echo hi");
    assert!(
        start[1]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("memdir hook session-start")
    );
    assert!(
        s["hooks"]["PreCompact"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("hook pre-compact")
    );
    let c = json(&claude_json);
    assert_eq!(c["numStartups"], 3);
    assert_eq!(c["mcpServers"]["other"]["command"], "npx");
    assert_eq!(c["mcpServers"]["memdir"]["args"][0], "mcp");
    assert_eq!(
        c["mcpServers"]["memdir"]["env"]["MEMDIR_ROOT"],
        f.root().to_str().unwrap()
    );
    // The hook really runs: it prints the memory context for Claude Code.
    let cmd = start[1]["hooks"][0]["command"].as_str().unwrap();
    let ran = std::process::Command::new("sh")
        .args(["-c", &format!("echo '{{}}' | {cmd}")])
        .env_clear()
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("additionalContext"),
        "{ran:?}"
    );

    let (s1, c1) = (
        std::fs::read(&settings).unwrap(),
        std::fs::read(&claude_json).unwrap(),
    );
    let again = stdout(&f.cmd().args(["install", "claude-code"]).assert().success());
    assert_eq!(again.matches(": unchanged").count(), 2, "{again}");
    assert_eq!(std::fs::read(&settings).unwrap(), s1);
    assert_eq!(std::fs::read(&claude_json).unwrap(), c1);

    f.cmd()
        .args(["uninstall", "claude-code"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), SETTINGS);
    assert_eq!(std::fs::read_to_string(&claude_json).unwrap(), CLAUDE_JSON);
}

#[test]
fn uninstall_after_other_changes_removes_only_memdirs_entries() {
    let f = Fixture::new();
    let settings = home(&f).join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, SETTINGS).unwrap();
    f.cmd().args(["install", "claude-code"]).assert().success();
    // The host (or a person) changes the file afterwards.
    let changed = std::fs::read_to_string(&settings)
        .unwrap()
        .replace("\"opus\"", "\"sonnet\"");
    std::fs::write(&settings, &changed).unwrap();
    f.cmd()
        .args(["uninstall", "claude-code"])
        .assert()
        .success();
    let s = json(&settings);
    assert_eq!(s["model"], "sonnet");
    assert_eq!(s["hooks"]["SessionStart"].as_array().unwrap().len(), 1);
    assert!(s["hooks"].get("PreCompact").is_none());
    let want: Value = serde_json::from_str(&SETTINGS.replace("\"opus\"", "\"sonnet\"")).unwrap();
    assert_eq!(s, want);
    assert!(
        !home(&f).join(".claude.json").exists(),
        "memdir had created it"
    );
}

#[test]
fn a_settings_file_that_does_not_parse_is_never_written() {
    let f = Fixture::new();
    let settings = home(&f).join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let broken = "{\n  \"model\": \"opus\",\n";
    std::fs::write(&settings, broken).unwrap();
    let a = f.cmd().args(["install", "claude-code"]).assert().code(2);
    let e = stderr(&a);
    assert!(
        e.contains("settings.json is not valid JSON") && e.contains("nothing was written"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), broken);
    assert!(
        !home(&f).join(".claude.json").exists(),
        "no file is written when one is refused"
    );
}

#[test]
fn project_scope_and_cursor() {
    let f = Fixture::new();
    let proj = f.dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    f.cmd()
        .current_dir(&proj)
        .args(["install", "claude-code", "--project"])
        .assert()
        .success();
    assert_eq!(
        json(&proj.join(".mcp.json"))["mcpServers"]["memdir"]["type"],
        "stdio"
    );
    assert!(json(&proj.join(".claude/settings.json"))["hooks"]["SessionStart"].is_array());
    f.cmd()
        .current_dir(&proj)
        .args(["install", "cursor", "--project"])
        .assert()
        .success();
    let cursor = json(&proj.join(".cursor/mcp.json"));
    assert_eq!(cursor["mcpServers"]["memdir"]["args"][0], "mcp");
    assert!(cursor["mcpServers"]["memdir"].get("type").is_none());
    f.cmd()
        .current_dir(&proj)
        .args(["uninstall", "--project"])
        .assert()
        .success();
    for p in [".mcp.json", ".claude/settings.json", ".cursor/mcp.json"] {
        assert!(!proj.join(p).exists(), "{p}");
    }
    f.cmd()
        .args(["install", "claude-code", "--project", "--user"])
        .assert()
        .code(2);
}
