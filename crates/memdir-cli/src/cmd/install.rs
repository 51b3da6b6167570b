//! `memdir install` and `memdir uninstall`: register memdir with an agent host (its MCP server
//! and, for Claude Code, the SessionStart and PreCompact hooks) by editing the host's documented
//! JSON settings files in place.
//!
//! Edits go through a concrete syntax tree (jsonc-parser), so every byte that is not memdir's
//! stays as it was. What each file looked like before memdir touched it is recorded in
//! `$XDG_STATE_HOME/memdir/installed.json` (default `~/.local/state/memdir/`); `uninstall`
//! restores those bytes when the file is still exactly what install left, and otherwise removes
//! only memdir's entries. A file that is not valid JSON is never written.

use crate::app::Env;
use crate::store::Location;
use crate::ui::{CliError, CliResult, exit, out};
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The agent hosts memdir can register with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: the MCP server (`~/.claude.json` or `.mcp.json`) and the SessionStart and
    /// PreCompact hooks (`~/.claude/settings.json` or `.claude/settings.json`).
    ClaudeCode,
    /// Cursor: the MCP server (`~/.cursor/mcp.json` or `.cursor/mcp.json`).
    Cursor,
}

impl Client {
    fn writer(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude",
            Client::Cursor => "cursor",
        }
    }
}

/// Register memdir with an agent host: its MCP server, and for Claude Code the SessionStart and
/// PreCompact hooks. Idempotent; keeps everything else in the files; refuses a file that is not
/// valid JSON. `memdir uninstall` removes only what this added.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir install claude-code --dry-run     # show the diff, write nothing\n  memdir install claude-code               # ~/.claude.json and ~/.claude/settings.json\n  memdir install claude-code --project     # .mcp.json and .claude/settings.json here\n  memdir install cursor --project          # .cursor/mcp.json\n  memdir uninstall claude-code"
)]
pub struct Args {
    /// The agent host.
    #[arg(value_enum)]
    pub client: Client,
    #[command(flatten)]
    pub scope: Scope,
    /// Show what would change, as a diff, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Remove what `memdir install` added, and nothing else: a file still exactly as install left
/// it gets its earlier bytes back.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir uninstall claude-code --dry-run\n  memdir uninstall cursor --project"
)]
pub struct UninstallArgs {
    /// The agent host (default: every one).
    #[arg(value_enum)]
    pub client: Option<Client>,
    #[command(flatten)]
    pub scope: Scope,
    /// Show what would change, as a diff, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Which settings: the user's (the default) or this project's.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Scope {
    /// The project's files, in the current folder (shared with everyone who clones it).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's files, under the home folder (the default).
    #[arg(long)]
    pub user: bool,
}

/// One settings file and memdir's part in it.
struct Target {
    path: PathBuf,
    /// The `mcpServers` entry to keep, if this file registers servers.
    server: Option<Value>,
    /// The hook commands to keep, by event, if this file holds hooks.
    hooks: Vec<(&'static str, String)>,
}

const SERVER: &str = "memdir";

/// A failure that is not the input's fault (exit 3).
fn failure(message: String) -> CliError {
    CliError {
        message,
        code: exit::FAILURE,
    }
}
const EVENTS: [(&str, &str); 3] = [
    ("SessionStart", "session-start"),
    ("PreCompact", "pre-compact"),
    ("SessionEnd", "session-end"),
];

fn quote(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn home(env: &Env) -> Result<PathBuf, CliError> {
    env.home
        .clone()
        .ok_or_else(|| CliError::invalid("HOME is not set: set it, or use --project"))
}

/// The files `client` reads at `scope`, with memdir's entries for each.
fn targets(client: Client, scope: Scope, env: &Env) -> Result<Vec<Target>, CliError> {
    let bin = std::env::current_exe()
        .map_err(|e| failure(format!("cannot find the memdir binary's path: {e}")))?;
    let bin = bin.to_string_lossy().into_owned();
    let root = match &env.location {
        Location::Folder(r) => std::path::absolute(r)
            .map_err(|e| CliError::invalid(format!("bad memory folder {}: {e}", r.display())))?,
        _ => {
            return Err(CliError::invalid(
                "install registers a memory folder: pass --root DIR (or set MEMDIR_ROOT)",
            ));
        }
    };
    let root = root.to_string_lossy().into_owned();
    let mut server = serde_json::json!({
        "command": bin,
        "args": ["mcp"],
        "env": {"MEMDIR_ROOT": root, "MEMDIR_WRITER": client.writer()},
    });
    let base = if scope.project {
        std::env::current_dir()
            .map_err(|e| failure(format!("cannot read the current folder: {e}")))?
    } else {
        home(env)?
    };
    Ok(match client {
        Client::ClaudeCode => {
            // Claude Code reads an entry without `type` as stdio too; saying it is clearer.
            if let Some(m) = server.as_object_mut() {
                m.insert("type".into(), "stdio".into());
            }
            let hook = |event: &str| {
                format!(
                    "MEMDIR_ROOT={} MEMDIR_WRITER=claude {} hook {event}",
                    quote(&root),
                    quote(&bin)
                )
            };
            let (mcp, settings) = if scope.project {
                (base.join(".mcp.json"), base.join(".claude/settings.json"))
            } else {
                (
                    base.join(".claude.json"),
                    base.join(".claude/settings.json"),
                )
            };
            vec![
                Target {
                    path: mcp,
                    server: Some(server),
                    hooks: Vec::new(),
                },
                Target {
                    path: settings,
                    server: None,
                    hooks: EVENTS.iter().map(|(e, arg)| (*e, hook(arg))).collect(),
                },
            ]
        }
        Client::Cursor => vec![Target {
            path: base.join(".cursor/mcp.json"),
            server: Some(server),
            hooks: Vec::new(),
        }],
    })
}

/// True for a hook command memdir installed: `... memdir hook <event>`.
fn is_ours(command: &str, event_arg: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let n = words.len();
    n >= 3
        && words[n - 1] == event_arg
        && words[n - 2] == "hook"
        && words[n - 3].trim_matches('\'').ends_with("memdir")
}

fn parse(path: &Path, text: &str) -> Result<CstRootNode, CliError> {
    let refuse = |why: String| {
        CliError::invalid(format!(
            "{} is not valid JSON ({why}): fix it or move it away, then run again; nothing was written",
            path.display()
        ))
    };
    if !text.trim().is_empty() {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(_)) => {}
            Ok(_) => return Err(refuse("it is not a JSON object".into())),
            Err(e) => return Err(refuse(e.to_string())),
        }
    }
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| refuse(e.to_string()))
}

fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(m) => {
            CstInputValue::Object(m.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// The server entry in the order the hosts' docs write it: type, command, args, env.
fn server_input(v: &Value) -> CstInputValue {
    const ORDER: [&str; 4] = ["type", "command", "args", "env"];
    match input(v) {
        CstInputValue::Object(mut pairs) => {
            pairs.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
            CstInputValue::Object(pairs)
        }
        other => other,
    }
}

fn string_at(obj: &CstObject, key: &str) -> Option<String> {
    obj.get(key)?.value()?.as_string_lit()?.decoded_value().ok()
}

/// The file's text with memdir's entries in place.
fn with_ours(path: &Path, text: &str, t: &Target) -> Result<String, CliError> {
    let root = parse(path, text)?;
    let obj = root.object_value_or_set();
    if let Some(server) = &t.server {
        let servers = obj.object_value_or_set("mcpServers");
        let current: Option<Value> = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("mcpServers")?.get(SERVER).cloned());
        match servers.get(SERVER) {
            Some(_) if current.as_ref() == Some(server) => {}
            Some(prop) => prop.set_value(server_input(server)),
            None => drop(servers.append(SERVER, server_input(server))),
        }
    }
    if !t.hooks.is_empty() {
        let hooks = obj.object_value_or_set("hooks");
        for (event, command) in &t.hooks {
            let arg = EVENTS
                .iter()
                .find(|(e, _)| e == event)
                .map_or("", |(_, a)| *a);
            let groups = hooks.array_value_or_set(event);
            let mut found = false;
            for group in groups.elements() {
                let Some(handlers) = group.as_object().and_then(|g| g.array_value("hooks")) else {
                    continue;
                };
                for h in handlers.elements() {
                    let Some(h) = h.as_object() else { continue };
                    let Some(cmd) = string_at(&h, "command") else {
                        continue;
                    };
                    if &cmd == command {
                        found = true;
                    } else if is_ours(&cmd, arg)
                        && let Some(p) = h.get("command")
                    {
                        p.set_value(CstInputValue::String(command.clone()));
                        found = true;
                    }
                }
            }
            if !found {
                groups.append(input(&serde_json::json!({
                    "hooks": [{"type": "command", "command": command}]
                })));
            }
        }
    }
    Ok(ensure_newline(root.to_string(), text))
}

/// The file's text without memdir's entries (and without containers that held only them).
fn without_ours(path: &Path, text: &str) -> Result<String, CliError> {
    let root = parse(path, text)?;
    let Some(obj) = root.object_value() else {
        return Ok(text.to_string());
    };
    if let Some(servers) = obj.object_value("mcpServers") {
        if let Some(p) = servers.get(SERVER)
            && p.value()
                .and_then(|v| v.as_object())
                .and_then(|o| string_at(&o, "command"))
                .is_some_and(|c| c.ends_with("memdir"))
        {
            p.remove();
        }
        if servers.properties().is_empty()
            && let Some(p) = obj.get("mcpServers")
        {
            p.remove();
        }
    }
    if let Some(hooks) = obj.object_value("hooks") {
        for (event, arg) in EVENTS {
            let Some(groups) = hooks.array_value(event) else {
                continue;
            };
            for group in groups.elements() {
                let Some(handlers) = group.as_object().and_then(|g| g.array_value("hooks")) else {
                    continue;
                };
                let elements = handlers.elements();
                let mut left = elements.len();
                for h in elements {
                    if h.as_object()
                        .and_then(|o| string_at(&o, "command"))
                        .is_some_and(|c| is_ours(&c, arg))
                    {
                        h.remove();
                        left -= 1;
                    }
                }
                if left == 0 {
                    group.remove();
                }
            }
            if groups.elements().is_empty()
                && let Some(p) = hooks.get(event)
            {
                p.remove();
            }
        }
        if hooks.properties().is_empty()
            && let Some(p) = obj.get("hooks")
        {
            p.remove();
        }
    }
    Ok(ensure_newline(root.to_string(), text))
}

fn ensure_newline(mut s: String, original: &str) -> String {
    if (original.is_empty() || original.ends_with('\n')) && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// What install recorded about each file it changed.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Record {
    files: BTreeMap<String, Written>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Written {
    /// The file's text before memdir first changed it; `None` when it did not exist.
    before: Option<String>,
    /// The text install left.
    after: String,
}

fn record_path(env: &Env) -> Result<PathBuf, CliError> {
    Ok(match &env.state_home {
        Some(s) => s.join("memdir/installed.json"),
        None => home(env)?.join(".local/state/memdir/installed.json"),
    })
}

fn load_record(path: &Path) -> Result<Record, CliError> {
    match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| {
            CliError::invalid(format!(
                "{} is not memdir's install record ({e}): move it away and run again",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
        Err(e) => Err(failure(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Writes a file by temp file and rename, keeping the old file's permissions.
fn write_atomic(path: &Path, text: &str) -> Result<(), CliError> {
    memdir::folder::atomic::write(path, text.as_bytes())
        .map_err(|e| failure(format!("cannot write {}: {e}", path.display())))
}

fn read_opt(path: &Path) -> Result<Option<String>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(failure(format!("cannot read {}: {e}", path.display()))),
    }
}

fn diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}

/// One file's planned change: its path, old text (if any) and new text (`None`: delete).
type Plan = (PathBuf, Option<String>, Option<String>);

fn apply(
    plans: &[Plan],
    dry_run: bool,
    record: &mut Record,
    installing: bool,
) -> Result<Vec<String>, CliError> {
    let mut lines = Vec::new();
    for (path, old, new) in plans {
        let shown = path.display();
        let before = old.as_deref().unwrap_or("");
        if old == new {
            lines.push(format!("{shown}: unchanged"));
            continue;
        }
        if dry_run {
            lines.push(
                diff(path, before, new.as_deref().unwrap_or(""))
                    .trim_end()
                    .to_string(),
            );
            continue;
        }
        let key = path.to_string_lossy().into_owned();
        match new {
            Some(text) => write_atomic(path, text)?,
            None => std::fs::remove_file(path)
                .map_err(|e| failure(format!("cannot remove {shown}: {e}")))?,
        }
        if installing {
            let first = record.files.remove(&key).map_or(old.clone(), |w| w.before);
            record.files.insert(
                key,
                Written {
                    before: first,
                    after: new.clone().unwrap_or_default(),
                },
            );
            lines.push(format!("{shown}: added memdir"));
        } else {
            record.files.remove(&key);
            lines.push(match new {
                Some(_) => format!("{shown}: removed memdir"),
                None => format!("{shown}: removed (memdir had created it)"),
            });
        }
    }
    Ok(lines)
}

fn save_record(path: &Path, record: &Record) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(record)
        .map_err(|e| failure(format!("cannot encode the install record: {e}")))?;
    write_atomic(path, &(text + "\n"))
}

/// Runs `install`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let targets = targets(a.client, a.scope, env)?;
    // Every file is read and checked before any is written.
    let mut plans = Vec::new();
    for t in &targets {
        let old = read_opt(&t.path)?;
        let new = with_ours(&t.path, old.as_deref().unwrap_or(""), t)?;
        plans.push((t.path.clone(), old, Some(new)));
    }
    let rec_path = record_path(env)?;
    let mut record = load_record(&rec_path)?;
    let mut lines = apply(&plans, a.dry_run, &mut record, true)?;
    if !a.dry_run {
        save_record(&rec_path, &record)?;
        if a.client == Client::ClaudeCode && a.scope.project {
            lines.push(
                "Claude Code asks once before it starts a server from a project's .mcp.json."
                    .into(),
            );
        }
    }
    out(&lines.join("\n"))
}

/// Runs `uninstall`.
pub fn run_uninstall(a: UninstallArgs, env: &Env) -> CliResult {
    let clients = match a.client {
        Some(c) => vec![c],
        None => vec![Client::ClaudeCode, Client::Cursor],
    };
    let rec_path = record_path(env)?;
    let mut record = load_record(&rec_path)?;
    let mut plans: Vec<Plan> = Vec::new();
    for c in clients {
        for t in targets(c, a.scope, env)? {
            let Some(old) = read_opt(&t.path)? else {
                continue;
            };
            let key = t.path.to_string_lossy().into_owned();
            let new = match record.files.get(&key) {
                // Untouched since install: the earlier bytes come back exactly.
                Some(w) if w.after == old => w.before.clone(),
                _ => Some(without_ours(&t.path, &old)?),
            };
            plans.push((t.path, Some(old), new));
        }
    }
    let lines = apply(&plans, a.dry_run, &mut record, false)?;
    if !a.dry_run {
        save_record(&rec_path, &record)?;
    }
    if lines.is_empty() {
        return out("nothing to uninstall: no settings file of that host exists");
    }
    out(&lines.join("\n"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            path: PathBuf::from("settings.json"),
            server: Some(serde_json::json!({"command": "/bin/memdir", "args": ["mcp"]})),
            hooks: vec![("SessionStart", "/bin/memdir hook session-start".to_string())],
        }
    }

    #[test]
    fn adds_then_removes_only_its_own() {
        let p = Path::new("settings.json");
        let before = "{\n  // mine\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"SessionStart\": [\n      { \"hooks\": [ { \"type\": \"command\", \"command\": \"echo hi\" } ] }\n    ]\n  }\n}\n";
        // Comments are kept by the tree, but a file with one is not strict JSON: refused.
        assert!(with_ours(p, before, &target()).is_err());
        let before = before.replace("  // mine\n", "");
        let added = with_ours(p, &before, &target()).unwrap();
        let v: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["mcpServers"]["memdir"]["args"][0], "mcp");
        assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
        assert_eq!(
            with_ours(p, &added, &target()).unwrap(),
            added,
            "idempotent"
        );
        let removed = without_ours(p, &added).unwrap();
        let back: Value = serde_json::from_str(&removed).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(&before).unwrap());
    }

    #[test]
    fn knows_its_hook_commands() {
        assert!(is_ours(
            "MEMDIR_ROOT=/x '/a b/memdir' hook session-start",
            "session-start"
        ));
        assert!(is_ours("memdir hook pre-compact", "pre-compact"));
        assert!(!is_ours("other hook pre-compact", "pre-compact"));
        assert!(!is_ours("memdir hook pre-compact", "session-start"));
        assert_eq!(quote("/a b/it's"), "'/a b/it'\\''s'");
    }
}
