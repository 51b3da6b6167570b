//! `memdir install` and `memdir uninstall`: register memdir with an agent host (its MCP server
//! and, for Claude Code, the SessionStart, PreCompact and SessionEnd hooks) by editing the host's
//! documented settings files in place: JSON for Claude Code, Cursor, Gemini CLI, VS Code and
//! Claude Desktop, TOML for Codex CLI (each host's source is cited in docs/install.md).
//!
//! Edits go through a concrete syntax tree (jsonc-parser for JSON, toml_edit for TOML), so every
//! byte that is not memdir's stays as it was, comments included. What each file looked like before memdir touched it is recorded in
//! `$XDG_STATE_HOME/memdir/installed.json` (default `~/.local/state/memdir/`); `uninstall`
//! restores those bytes when the file is still exactly what install left, and otherwise removes
//! only memdir's entries. A file that is not valid JSON is never written.

use crate::env::Env;
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
    /// Codex CLI: the MCP server, `[mcp_servers.memdir]` in `~/.codex/config.toml` (or
    /// `$CODEX_HOME/config.toml`), or `.codex/config.toml` in a trusted project.
    #[value(alias = "codex-cli")]
    Codex,
    /// Gemini CLI: the MCP server, `mcpServers` in `~/.gemini/settings.json` or
    /// `.gemini/settings.json`.
    #[value(alias = "gemini-cli")]
    Gemini,
    /// VS Code: the MCP server, `servers` in `.vscode/mcp.json` (or the user profile's
    /// `mcp.json`); the file may hold comments.
    #[value(name = "vscode", alias = "vs-code")]
    VsCode,
    /// Claude Desktop: the MCP server, `mcpServers` in `claude_desktop_config.json` (macOS:
    /// `~/Library/Application Support/Claude/`, Windows: `%APPDATA%\\Claude\\`, Linux:
    /// `~/.config/Claude/`); user scope only.
    ClaudeDesktop,
}

/// Every host, in the order `uninstall` goes through them.
const ALL: [Client; 6] = [
    Client::ClaudeCode,
    Client::Cursor,
    Client::Codex,
    Client::Gemini,
    Client::VsCode,
    Client::ClaudeDesktop,
];

impl Client {
    fn writer(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude",
            Client::Cursor => "cursor",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::VsCode => "vscode",
            Client::ClaudeDesktop => "claude-desktop",
        }
    }

    /// False for a host that has no per-project settings.
    fn has_project_scope(self) -> bool {
        self != Client::ClaudeDesktop
    }
}

/// Register memdir with an agent host: its MCP server, and for Claude Code the SessionStart,
/// PreCompact and SessionEnd hooks. Idempotent; keeps everything else in the files; refuses a file that is not
/// valid JSON. `memdir uninstall` removes only what this added.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir install claude-code --dry-run     # show the diff, write nothing\n  memdir install claude-code               # ~/.claude.json and ~/.claude/settings.json\n  memdir install claude-code --project     # .mcp.json and .claude/settings.json here\n  memdir install cursor --project          # .cursor/mcp.json\n  memdir install codex                     # ~/.codex/config.toml\n  memdir install gemini                    # ~/.gemini/settings.json\n  memdir install vscode --project          # .vscode/mcp.json\n  memdir install claude-desktop            # claude_desktop_config.json\n  memdir uninstall claude-code"
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

/// How a settings file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// JSON with the servers under `key`; `comments`: the host reads JSON with comments (and
    /// trailing commas), so a file holding them is taken, and kept as it is.
    Json { key: &'static str, comments: bool },
    /// Codex CLI's TOML: `[mcp_servers.memdir]`.
    Toml,
}

const MCP_SERVERS: Format = Format::Json {
    key: "mcpServers",
    comments: false,
};

/// One settings file and memdir's part in it.
struct Target {
    path: PathBuf,
    format: Format,
    /// The server entry to keep, if this file registers servers.
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
/// The Claude Code hook events memdir installs, with the `memdir hook` argument of each.
const EVENTS: [(&str, &str); 4] = [
    ("SessionStart", "session-start"),
    ("PreCompact", "pre-compact"),
    ("SessionEnd", "session-end"),
    // Prints nothing unless `[hooks] recall = true`.
    ("UserPromptSubmit", "user-prompt"),
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
    if scope.project && !client.has_project_scope() {
        return Err(CliError::invalid(format!(
            "{} has no project settings: install it for the user (without --project)",
            client_name(client)
        )));
    }
    let base = if scope.project {
        std::env::current_dir()
            .map_err(|e| failure(format!("cannot read the current folder: {e}")))?
    } else {
        home(env)?
    };
    let one = |path: PathBuf, format: Format, server: Value| {
        vec![Target {
            path,
            format,
            server: Some(server),
            hooks: Vec::new(),
        }]
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
                    format: MCP_SERVERS,
                    server: Some(server),
                    hooks: Vec::new(),
                },
                Target {
                    path: settings,
                    format: MCP_SERVERS,
                    server: None,
                    hooks: EVENTS.iter().map(|(e, arg)| (*e, hook(arg))).collect(),
                },
            ]
        }
        Client::Cursor => one(base.join(".cursor/mcp.json"), MCP_SERVERS, server),
        Client::Gemini => one(base.join(".gemini/settings.json"), MCP_SERVERS, server),
        Client::Codex => {
            let dir = match (scope.project, std::env::var_os("CODEX_HOME")) {
                (false, Some(h)) if !h.is_empty() => PathBuf::from(h),
                _ => base.join(".codex"),
            };
            one(dir.join("config.toml"), Format::Toml, server)
        }
        Client::VsCode => {
            // VS Code's own format: `servers`, `type` first; comments allowed (JSONC).
            if let Some(m) = server.as_object_mut() {
                m.insert("type".into(), "stdio".into());
            }
            let path = if scope.project {
                base.join(".vscode/mcp.json")
            } else {
                app_config(&base)?.join("Code/User/mcp.json")
            };
            let format = Format::Json {
                key: "servers",
                comments: true,
            };
            one(path, format, server)
        }
        Client::ClaudeDesktop => one(
            app_config(&base)?.join("Claude/claude_desktop_config.json"),
            MCP_SERVERS,
            server,
        ),
    })
}

fn client_name(c: Client) -> &'static str {
    match c {
        Client::ClaudeCode => "Claude Code",
        Client::Cursor => "Cursor",
        Client::Codex => "Codex CLI",
        Client::Gemini => "Gemini CLI",
        Client::VsCode => "VS Code",
        Client::ClaudeDesktop => "Claude Desktop",
    }
}

/// Where desktop applications keep their settings: `~/Library/Application Support` on macOS,
/// `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` (else `~/.config`) elsewhere.
fn app_config(home: &Path) -> Result<PathBuf, CliError> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    Ok(if cfg!(target_os = "macos") {
        home.join("Library/Application Support")
    } else if cfg!(windows) {
        var("APPDATA")
            .ok_or_else(|| CliError::invalid("APPDATA is not set: set it, then run again"))?
    } else {
        var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"))
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

fn refusal(path: &Path, what: &str, why: String) -> CliError {
    CliError::invalid(format!(
        "{} is not valid {what} ({why}): fix it or move it away, then run again; nothing was written",
        path.display()
    ))
}

/// The file's JSON value (`None` when it is empty), refusing anything but an object; `comments`:
/// JSON with comments and trailing commas is taken.
fn json_value(path: &Path, text: &str, comments: bool) -> Result<Option<Value>, CliError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let v = if comments {
        jsonc_parser::parse_to_serde_value::<Value>(text, &ParseOptions::default())
            .map_err(|e| refusal(path, "JSON", e.to_string()))?
    } else {
        serde_json::from_str::<Value>(text).map_err(|e| refusal(path, "JSON", e.to_string()))?
    };
    match v {
        Value::Object(_) => Ok(Some(v)),
        _ => Err(refusal(path, "JSON", "it is not a JSON object".into())),
    }
}

fn parse(path: &Path, text: &str, comments: bool) -> Result<CstRootNode, CliError> {
    json_value(path, text, comments)?;
    CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| refusal(path, "JSON", e.to_string()))
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
    let (key, comments) = match t.format {
        Format::Toml => return toml_with_ours(path, text, t.server.as_ref()),
        Format::Json { key, comments } => (key, comments),
    };
    let current: Option<Value> =
        json_value(path, text, comments)?.and_then(|v| v.get(key)?.get(SERVER).cloned());
    let root = parse(path, text, comments)?;
    let obj = root.object_value_or_set();
    if let Some(server) = &t.server {
        let servers = obj.object_value_or_set(key);
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
fn without_ours(path: &Path, text: &str, format: Format) -> Result<String, CliError> {
    let (key, comments) = match format {
        Format::Toml => return toml_without_ours(path, text),
        Format::Json { key, comments } => (key, comments),
    };
    let root = parse(path, text, comments)?;
    let Some(obj) = root.object_value() else {
        return Ok(text.to_string());
    };
    if let Some(servers) = obj.object_value(key) {
        if let Some(p) = servers.get(SERVER)
            && p.value()
                .and_then(|v| v.as_object())
                .and_then(|o| string_at(&o, "command"))
                .is_some_and(|c| c.ends_with("memdir"))
        {
            p.remove();
        }
        if servers.properties().is_empty()
            && let Some(p) = obj.get(key)
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

/// Codex CLI's `[mcp_servers.memdir]` table for `server` (command, args, and an `env` table).
fn toml_server(server: &Value) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    t["command"] = toml_edit::value(server["command"].as_str().unwrap_or_default());
    let mut args = toml_edit::Array::new();
    for a in server["args"].as_array().into_iter().flatten() {
        args.push(a.as_str().unwrap_or_default());
    }
    t["args"] = toml_edit::value(args);
    let mut env = toml_edit::Table::new();
    for (k, v) in server["env"].as_object().into_iter().flatten() {
        env[k.as_str()] = toml_edit::value(v.as_str().unwrap_or_default());
    }
    t["env"] = toml_edit::Item::Table(env);
    t
}

/// What a TOML item says, as JSON, to compare it with the entry memdir would write.
fn toml_as_json(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::Value(v) => toml_value_json(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_as_json(v)))
                .collect(),
        ),
        _ => Value::Null,
    }
}

fn toml_value_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_value_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value_json(v)))
                .collect(),
        ),
        other => Value::String(other.to_string()),
    }
}

fn toml_doc(path: &Path, text: &str) -> Result<toml_edit::DocumentMut, CliError> {
    text.parse::<toml_edit::DocumentMut>()
        .map_err(|e| refusal(path, "TOML", memdir_core::text::one_line(&e.to_string())))
}

/// The TOML file's text with `[mcp_servers.memdir]` in place; the rest, comments and order
/// included, stays as it was.
fn toml_with_ours(path: &Path, text: &str, server: Option<&Value>) -> Result<String, CliError> {
    let mut doc = toml_doc(path, text)?;
    let Some(server) = server else {
        return Ok(text.to_string());
    };
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            // Only `[mcp_servers.memdir]` is written, not an empty `[mcp_servers]` above it.
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or_else(|| {
            refusal(
                path,
                "Codex CLI settings",
                "mcp_servers is not a table".into(),
            )
        })?;
    let wanted = toml_server(server);
    match servers.get(SERVER) {
        Some(item)
            if toml_as_json(item) == toml_as_json(&toml_edit::Item::Table(wanted.clone())) => {}
        _ => drop(servers.insert(SERVER, toml_edit::Item::Table(wanted))),
    }
    Ok(ensure_newline(doc.to_string(), text))
}

/// The TOML file's text without memdir's server (and without an `mcp_servers` left empty).
fn toml_without_ours(path: &Path, text: &str) -> Result<String, CliError> {
    let mut doc = toml_doc(path, text)?;
    let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(|s| s.as_table_like_mut())
    else {
        return Ok(text.to_string());
    };
    let ours = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(|c| c.as_str())
        .is_some_and(|c| c.ends_with("memdir"));
    if !ours {
        return Ok(text.to_string());
    }
    servers.remove(SERVER);
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    Ok(doc.to_string())
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
        // Every host that has settings at this scope.
        None => ALL
            .into_iter()
            .filter(|c| !a.scope.project || c.has_project_scope())
            .collect(),
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
                _ => Some(without_ours(&t.path, &old, t.format)?),
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
            format: MCP_SERVERS,
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
        let removed = without_ours(p, &added, MCP_SERVERS).unwrap();
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
