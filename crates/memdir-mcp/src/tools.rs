//! The tool layer every front end calls: names, descriptions and input schemas written for a
//! model, and one [`Tools::call`] that turns arguments into a [`ToolText`].
//!
//! Nothing here knows MCP or any transport: arguments come in as a JSON value and the answer is
//! text. Failures a model can fix (a bad path, a cap, an ambiguous edit) are error *results*;
//! only a tool name that does not exist is an `Err`, because no tool ran.

use crate::offload;
use crate::{ToolText, anthropic};
use memdir::search::{DEFAULT_AGENT_MAX_BYTES, Mode, SearchRequest};
use memdir::{EntryKind, Memory};
use memdir_core::context::fence_untrusted;
use memdir_core::edit::EditOp;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;

/// The most characters of a file one `memory_read` returns; the rest is reached by line range.
pub const READ_CHAR_CAP: usize = 16_000;

/// A tool as a client lists it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// What it does and when to use it, for the model.
    pub description: &'static str,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
    /// True when it never changes the memory folder.
    pub read_only: bool,
    /// True when it may delete or overwrite what is there.
    pub destructive: bool,
    /// True when repeating a call with the same arguments changes nothing more.
    pub idempotent: bool,
}

/// A call to a tool that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool {0:?}: use one of {list}", list = names().join(", "))]
pub struct UnknownTool(pub String);

/// The tool names, in listing order.
pub fn names() -> Vec<&'static str> {
    specs().iter().map(|s| s.name).collect()
}

/// Every tool, in listing order.
pub fn specs() -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "A path inside the memory folder, e.g. notes/people.md (a leading / or /memories/ is also accepted)."});
    let reason = json!({"type": "string", "description": "Optional: why this change is made, in a few words."});
    vec![
        ToolSpec {
            name: "memory_context",
            title: "Load memory context",
            description: "Returns what you should know at the start of a session: core.md, yesterday's and today's log, live scratch notes, and where the rest is. Call it first in a new session or after your context was compacted.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_search",
            title: "Search memory",
            description: "Finds lines in memory files. mode=grep (default) returns lines containing the pattern (case-insensitive literal; regex=true for a regular expression) in path order; mode=ranked returns the best lines for a question in natural language; there \"a quoted phrase\" must appear in order, -word leaves out lines with the word, and type:project, tag:billing or name:payment-retry-policy keep only notes with that frontmatter (a filter alone lists those notes). files=true returns one line per file (its best) and how many files matched, to see which notes matter before reading. Narrow with path (a glob such as log/** or notes/*.md), since/until (YYYY-MM-DD, for dated files such as logs) and limit. Results are path:line:text; open a hit with memory_read using start_line.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The text, regular expression or question to look for."},
                    "mode": {"type": "string", "enum": ["grep", "ranked", "semantic", "hybrid"], "description": "grep (default): exact lines containing the pattern. ranked: best lines for a natural-language question. semantic / hybrid: by meaning (hybrid adds ranked words); they need an embedding model set up, else the call says so."},
                    "regex": {"type": "boolean", "description": "grep mode: treat pattern as a regular expression (default false)."},
                    "since": {"type": "string", "description": "Only dated files (logs) from this day on, YYYY-MM-DD."},
                    "until": {"type": "string", "description": "Only dated files (logs) up to this day, YYYY-MM-DD."},
                    "path": {"type": "string", "description": "Only files whose path matches this glob, e.g. notes/** or log/2026-11-*.md."},
                    "limit": {"type": "integer", "minimum": 1, "description": "The most result lines to return (files, with files=true)."},
                    "files": {"type": "boolean", "description": "ranked, semantic and hybrid modes: one result per file, its best line, and the number of files that matched (default false)."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_read",
            title: "Read a memory file",
            description: "Returns a file's text, or lists a folder. path is a path, or a note's name as a link names it (payment-retry-policy or [[payment-retry-policy]]: frontmatter name, then file name, then path). Long files are cut at 16000 characters with a note saying which start_line continues; use start_line/end_line (1-based, inclusive) to read a part, e.g. around a search hit.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A path inside the memory folder (notes/people.md, /memories/notes/people.md), or a note's name: payment-retry-policy or [[payment-retry-policy]]."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive)."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_links",
            title: "A note and the notes around it",
            description: "Returns a note (by name, [[name]] or path) with the notes it links to and the notes that link to it, each with its description, and theirs up to depth steps (default 1, at most 3; at most 50 notes). One call to gather the context around a note before reading the ones that matter with memory_read.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The note: its name (payment-retry-policy), [[payment-retry-policy]], or its path."},
                    "depth": {"type": "integer", "minimum": 0, "maximum": 3, "description": "How many link steps to follow (default 1)."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_recent",
            title: "Recent changes to memory",
            description: "What changed in memory, who changed it and why, newest first: from the history (one line per change: time, writer, what, why, change id), or from file modification times where no history is kept. Narrow with since (today, yesterday, 3d, 2w, 6h, last week, or YYYY-MM-DD), path (a file or folder), writer and limit (default 20).",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "since": {"type": "string", "description": "Only changes since: today, yesterday, 3d, 2w, 6h, 30m, last week, last month or YYYY-MM-DD."},
                    "path": {"type": "string", "description": "Only changes to this file or folder, e.g. core.md or notes/."},
                    "writer": {"type": "string", "description": "Only changes by this writer."},
                    "limit": {"type": "integer", "minimum": 1, "description": "The most changes to return (default 20)."}
                },
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_write",
            title: "Write a memory file",
            description: "Creates or replaces a whole file, e.g. a note under notes/. Replacing loses the old text: to change part of a file use memory_edit; to record an event use memory_log. core.md is capped and a write over the cap is refused.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "content": {"type": "string", "description": "The file's full new text."},
                    "reason": reason
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: true,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_edit",
            title: "Edit a memory file",
            description: "Changes part of a file in one atomic step, without copying it back. Give path and one of: append (a line added at the end, e.g. a new item of a list); prepend (a line added at the start, after a note's frontmatter); section + new (replace the body under the Markdown heading whose text is section, up to the next heading of the same level); old + new (replace exact text: old must occur exactly once, or exactly expected_count times to replace them all; copy it verbatim from memory_read; new=\"\" deletes it). The usual way to update core.md, which is capped.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "append": {"type": "string", "description": "A line (or lines) to add at the end of the file."},
                    "prepend": {"type": "string", "description": "A line (or lines) to add at the start of the file (after a note's frontmatter)."},
                    "section": {"type": "string", "description": "The text of a Markdown heading, e.g. Status: its body is replaced by new."},
                    "old": {"type": "string", "description": "The exact text to replace; must occur exactly once (or expected_count times)."},
                    "new": {"type": "string", "description": "With old: the replacement (may be empty). With section: the section's new body."},
                    "expected_count": {"type": "integer", "minimum": 1, "description": "With old: how many occurrences there are; all of them are replaced (default 1)."},
                    "reason": reason
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: true,
            idempotent: false,
        },
        ToolSpec {
            name: "memory_log",
            title: "Append to today's log",
            description: "Appends one timestamped entry to today's log (log/YYYY-MM-DD.md). Use it for decisions, facts learned, results and open threads, as they happen: one short, specific line each.",
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The entry, e.g. \"chose PostgreSQL over SQLite: need concurrent writers\"."}},
                "required": ["text"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: false,
            idempotent: false,
        },
        ToolSpec {
            name: "memory_scratch",
            title: "Write a scratch note",
            description: "Writes a short-lived note that is shown in memory_context until it expires, then swept: plans and state for the work at hand. A note with the same name is replaced.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "A slug: lowercase letters, digits and dashes, e.g. deploy-plan."},
                    "body": {"type": "string", "description": "The note's text."},
                    "ttl": {"type": "string", "description": "How long it lives: 30m, 2h, 1d, or minutes as a number (default 60m)."}
                },
                "required": ["name", "body"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: true,
            idempotent: true,
        },
        ToolSpec {
            name: "memory_offload",
            title: "Offload a large output",
            description: "Stores a large text (a long tool output, a log, a file dump) in memory and returns a short reference: its path, size, first and last lines. Keep the reference instead of the text; read parts back later with memory_read and start_line/end_line.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The text to store, verbatim."},
                    "label": {"type": "string", "description": "A few words naming it, used in the file name, e.g. \"cargo test output\"."}
                },
                "required": ["content"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: false,
            idempotent: false,
        },
        ToolSpec {
            name: "gate_request",
            title: "Ask the gate before an irreversible action",
            description: "Before a payment, deploy, deletion or outbound message, ask the gate: it checks the user's policy (gates.toml: whitelisted targets, per-request and daily/weekly caps, human approval above a limit) and answers {\"decision\": \"allowed\", \"token\": ...} (hand the single-use token to the executor), {\"decision\": \"denied\", \"rule\": ...} (do not retry around it; the rule says why and what to do) or {\"decision\": \"pending\", \"id\": ...} (a person must approve; ask gate_status later). It never performs the action. Every request is recorded in the ledger.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "description": "The action kind, a table of gates.toml, e.g. payment, deploy."},
                    "target": {"type": "string", "description": "Who or what the action is for, e.g. a payee or an environment."},
                    "amount": {"type": ["number", "string"], "description": "How much, for kinds with amounts (e.g. 40 or \"12.50\")."},
                    "reason": {"type": "string", "description": "Why, in one line; recorded in the ledger."}
                },
                "required": ["kind", "target", "reason"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: false,
            idempotent: false,
        },
        ToolSpec {
            name: "gate_status",
            title: "Status of a pending gate request",
            description: "Where a pending gate_request stands: {\"decision\": \"pending\", \"id\": ...} while it waits for a person, {\"decision\": \"allowed\", \"token\": ...} once approved (hand the token to the executor), or {\"decision\": \"denied\", \"rule\": ...}. Only a person can approve; no tool can.",
            input_schema: json!({
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The id from a pending gate_request answer."}},
                "required": ["id"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
        },
        ToolSpec {
            name: "memory",
            title: "Memory directory (Anthropic memory tool)",
            description: "The Anthropic memory tool (memory_20250818) over the memory folder, mounted at /memories. Commands: view {path, view_range?} shows a folder (2 levels) or a file with line numbers; create {path, file_text} makes a new file; str_replace {path, old_str, new_str?} replaces a unique text; insert {path, insert_line, insert_text} inserts after a line (0 = top); delete {path}; rename {old_path, new_path} (never overwrites). All paths start with /memories; /memories itself cannot be deleted or renamed.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": anthropic::COMMANDS},
                    "path": {"type": "string", "description": "A path under /memories (view, create, str_replace, insert, delete)."},
                    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "view: [start_line, end_line]; end_line -1 means to the end."},
                    "file_text": {"type": "string", "description": "create: the new file's text."},
                    "old_str": {"type": "string", "description": "str_replace: the exact text to replace; must occur once."},
                    "new_str": {"type": "string", "description": "str_replace: the replacement (omit to delete old_str)."},
                    "insert_line": {"type": "integer", "description": "insert: the line to insert after; 0 inserts at the top."},
                    "insert_text": {"type": "string", "description": "insert: the text to insert."},
                    "old_path": {"type": "string", "description": "rename: the current path."},
                    "new_path": {"type": "string", "description": "rename: the new path; must not exist."}
                },
                "required": ["command"]
            }),
            read_only: false,
            destructive: true,
            idempotent: false,
        },
    ]
}

/// The tool layer over one memory folder.
#[derive(Clone)]
pub struct Tools {
    mem: Arc<Memory>,
    admission: Option<(Arc<Admission>, Arc<Gate>)>,
}

/// Every tool [`Tools::call`] answers.
const TOOL_NAMES: &[&str] = &[
    "memory_context",
    "memory_search",
    "memory_read",
    "memory_links",
    "memory_recent",
    "memory_write",
    "memory_edit",
    "memory_log",
    "memory_scratch",
    "memory_offload",
    "gate_request",
    "gate_status",
    "memory",
];

/// How long a call waits for room before it is answered "busy".
const ADMISSION_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Bounds on the tool layer in a service shared by many memories: tool calls in flight, searches
/// in flight (over all memories, and per memory, so one tenant cannot take every core), and the
/// size of an answer. Shared by every [`Tools`] given it with [`Tools::with_admission`].
#[derive(Debug)]
pub struct Admission {
    calls: Arc<Gate>,
    searches: Arc<Gate>,
    per_memory_searches: usize,
    max_text_bytes: usize,
}

impl Admission {
    /// At most `calls` calls and `searches` searches at once, `per_memory_searches` of them on
    /// one memory; an answer longer than `max_text_bytes` becomes an error result.
    pub fn new(
        calls: usize,
        searches: usize,
        per_memory_searches: usize,
        max_text_bytes: usize,
    ) -> Admission {
        Admission {
            calls: Arc::new(Gate::new(calls)),
            searches: Arc::new(Gate::new(searches)),
            per_memory_searches,
            max_text_bytes,
        }
    }
}

/// A counting semaphore for blocking threads (tool calls run on tokio's blocking pool).
#[derive(Debug)]
pub(crate) struct Gate {
    used: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
    max: usize,
}

/// A place taken in a [`Gate`], given back on drop.
pub(crate) struct Permit(Arc<Gate>);

impl Drop for Permit {
    fn drop(&mut self) {
        let mut used = self.0.used.lock().unwrap_or_else(|p| p.into_inner());
        *used = used.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

impl Gate {
    fn new(max: usize) -> Gate {
        Gate {
            used: std::sync::Mutex::new(0),
            freed: std::sync::Condvar::new(),
            max: max.max(1),
        }
    }

    /// Waits up to `wait` for a place.
    fn enter(self: &Arc<Self>, wait: std::time::Duration) -> Option<Permit> {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let (mut used, _) = self
            .freed
            .wait_timeout_while(used, wait, |u| *u >= self.max)
            .unwrap_or_else(|p| p.into_inner());
        if *used >= self.max {
            return None;
        }
        *used += 1;
        Some(Permit(self.clone()))
    }
}

fn busy() -> ToolText {
    ToolText::error("the memory service is busy: retry in a few seconds")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    pattern: String,
    mode: Option<String>,
    regex: Option<bool>,
    since: Option<String>,
    until: Option<String>,
    path: Option<String>,
    limit: Option<u64>,
    files: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    start_line: Option<u64>,
    end_line: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinksArgs {
    name: String,
    depth: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecentArgs {
    since: Option<String>,
    path: Option<String>,
    writer: Option<String>,
    limit: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    append: Option<String>,
    prepend: Option<String>,
    section: Option<String>,
    old: Option<String>,
    new: Option<String>,
    expected_count: Option<u64>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogArgs {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScratchArgs {
    name: String,
    body: String,
    ttl: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GateRequestArgs {
    kind: String,
    target: String,
    amount: Option<Value>,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GateStatusArgs {
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OffloadArgs {
    content: String,
    label: Option<String>,
}

/// Parses a tool's arguments; a missing argument object counts as `{}`.
fn args<T: DeserializeOwned>(tool: &str, v: Value) -> Result<T, ToolText> {
    let v = if v.is_null() { json!({}) } else { v };
    serde_json::from_value(v).map_err(|e| {
        ToolText::error(format!(
            "invalid arguments for {tool}: {e}; see the tool's input schema"
        ))
    })
}

/// A path as messages show it: the canonical `notes/x.md` form of whatever was given.
fn shown(path: &str) -> String {
    match memdir_core::path::MemPath::parse(path) {
        Ok(p) if p.is_root() => "/".to_string(),
        Ok(p) => p.to_string(),
        Err(_) => path.to_string(),
    }
}

fn fail(e: memdir::Error) -> ToolText {
    ToolText::error(e.to_string())
}

/// A write's outcome as a tool result: a gated change saved as a proposal is an error result
/// too, since the change was not made and the model must not go on as if it were (the message
/// says where the proposal waits).
fn made<T>(o: memdir::Outcome<T>) -> Result<T, ToolText> {
    o.done().map_err(ToolText::error)
}

fn date(field: &str, v: Option<String>) -> Result<Option<jiff::civil::Date>, ToolText> {
    v.filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim().parse::<jiff::civil::Date>().map_err(|_| {
                ToolText::error(format!(
                    "{field} {s:?} is not a date: use YYYY-MM-DD, e.g. 2026-11-30"
                ))
            })
        })
        .transpose()
}

impl Tools {
    /// The tools over `mem`, as an agent surface: the gates' policy and ledger can never be
    /// changed through them, whatever source the memory was opened with.
    pub fn new(mem: Arc<Memory>) -> Tools {
        Tools {
            mem: Arc::new(mem.without_person_powers()),
            admission: None,
        }
    }

    /// The same tools under a service's shared bounds; this memory gets its own share of the
    /// searches.
    pub fn with_admission(mut self, admission: Arc<Admission>) -> Tools {
        let mine = Arc::new(Gate::new(admission.per_memory_searches));
        self.admission = Some((admission, mine));
        self
    }

    /// The memory folder underneath.
    pub fn memory(&self) -> &Arc<Memory> {
        &self.mem
    }

    /// Calls tool `name` with `arguments` (a JSON object).
    pub fn call(&self, name: &str, arguments: Value) -> Result<ToolText, UnknownTool> {
        let Some((admission, mine)) = &self.admission else {
            return self.call_now(name, arguments);
        };
        if !TOOL_NAMES.contains(&name) {
            return Err(UnknownTool(name.to_string()));
        }
        let Some(_call) = admission.calls.enter(ADMISSION_WAIT) else {
            return Ok(busy());
        };
        let _search = if name == "memory_search" {
            let Some(m) = mine.enter(ADMISSION_WAIT) else {
                return Ok(busy());
            };
            let Some(s) = admission.searches.enter(ADMISSION_WAIT) else {
                return Ok(busy());
            };
            Some((m, s))
        } else {
            None
        };
        let out = self.call_now(name, arguments)?;
        if out.text.len() > admission.max_text_bytes {
            return Ok(ToolText::error(format!(
                "the answer is {} bytes, past this service's limit of {}: narrow it (a path, a smaller limit, a line range)",
                out.text.len(),
                admission.max_text_bytes
            )));
        }
        Ok(out)
    }

    fn call_now(&self, name: &str, arguments: Value) -> Result<ToolText, UnknownTool> {
        let out = match name {
            "memory_context" => self.context(arguments),
            "memory_search" => self.search(arguments),
            "memory_read" => self.read(arguments),
            "memory_links" => self.links(arguments),
            "memory_recent" => self.recent(arguments),
            "memory_write" => self.write(arguments),
            "memory_edit" => self.edit(arguments),
            "memory_log" => self.log(arguments),
            "memory_scratch" => self.scratch(arguments),
            "memory_offload" => self.offload(arguments),
            "gate_request" => self.gate_request(arguments),
            "gate_status" => self.gate_status(arguments),
            "memory" => Ok(anthropic::run(&self.mem, &arguments)),
            other => return Err(UnknownTool(other.to_string())),
        };
        Ok(out.unwrap_or_else(|e| e))
    }

    fn context(&self, v: Value) -> Result<ToolText, ToolText> {
        let NoArgs {} = args("memory_context", v)?;
        Ok(ToolText::ok(self.mem.context().map_err(fail)?.render()))
    }

    fn search(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: SearchArgs = args("memory_search", v)?;
        let mut req = SearchRequest::new(a.pattern.clone());
        if let Some(m) = a.mode.as_deref() {
            req.mode = m.parse::<Mode>().map_err(|e| fail(e.into()))?;
        }
        req.regex = a.regex.unwrap_or(false);
        req.since = date("since", a.since)?;
        req.until = date("until", a.until)?;
        req.path_glob = a.path.filter(|p| !p.trim().is_empty());
        req.limit = a.limit.map(|l| l.max(1) as usize);
        req.max_bytes = Some(DEFAULT_AGENT_MAX_BYTES);
        req.files = a.files.unwrap_or(false);
        if req.files && req.mode == Mode::Grep {
            return Err(ToolText::error(
                "files=true groups ranked results by file: add mode=ranked (or semantic, hybrid)",
            ));
        }
        let found = self.mem.search(&req).map_err(fail)?;
        if found.is_empty() {
            return Ok(ToolText::ok(format!(
                "no matches for {:?} ({} mode){}",
                a.pattern,
                req.mode,
                if req.mode == Mode::Grep {
                    ": try other words, or mode=ranked for a question"
                } else {
                    ": try other words"
                }
            )));
        }
        // Lines from external sources go inside untrusted blocks, as the context shows them.
        let mut out: Vec<String> = Vec::new();
        let mut run = String::new();
        for h in &found.hits {
            if h.external {
                run.push_str(&h.render());
                run.push('\n');
                continue;
            }
            if !run.is_empty() {
                out.push(
                    fence_untrusted(&std::mem::take(&mut run))
                        .trim_end()
                        .to_string(),
                );
            }
            out.push(h.render());
        }
        if !run.is_empty() {
            out.push(fence_untrusted(&run).trim_end().to_string());
        }
        if req.files {
            let total = found.hits.len() + found.omitted;
            out.push(format!(
                "{total} {} matched{}",
                if total == 1 { "file" } else { "files" },
                if found.omitted > 0 {
                    format!(
                        ", {} shown: raise limit or narrow with path, since/until",
                        found.hits.len()
                    )
                } else {
                    String::new()
                }
            ));
        } else if found.omitted > 0 {
            out.push(format!(
                "... {} more {} left out to keep this short: narrow with path, since/until or a more specific pattern, or lower-level detail with memory_read",
                found.omitted,
                if found.omitted == 1 {
                    "match"
                } else {
                    "matches"
                }
            ));
        }
        Ok(ToolText::ok(out.join("\n")))
    }

    fn read(&self, v: Value) -> Result<ToolText, ToolText> {
        let mut a: ReadArgs = args("memory_read", v)?;
        // The checks below and the read itself, in one round trip on a remote store.
        let _prefetched = memdir_core::path::MemPath::parse(&a.path)
            .ok()
            .map(|p| self.mem.store().prefetch(&[memdir::store::Want::File(p)]));
        a.path = self.mem.resolve_note(&a.path).map_err(fail)?;
        let listing = self.mem.ls(&a.path).map_err(fail)?;
        let is_file = matches!(listing.as_slice(), [e] if e.kind == EntryKind::File
            && memdir_core::path::MemPath::parse(&a.path).is_ok_and(|p| p == e.path));
        if !is_file {
            if listing.is_empty() {
                return Ok(ToolText::ok(format!(
                    "{} is an empty folder",
                    shown(&a.path)
                )));
            }
            let lines: Vec<String> = listing
                .iter()
                .map(|e| match e.kind {
                    EntryKind::Dir => format!("{}/", e.path),
                    EntryKind::File => format!("{} ({} bytes)", e.path, e.size),
                })
                .collect();
            return Ok(ToolText::ok(lines.join("\n")));
        }
        let bytes = self.mem.read(&a.path).map_err(fail)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolText::error(format!(
                "{} is not UTF-8 text, so it cannot be shown",
                shown(&a.path)
            ))
        })?;
        Ok(read_range(&shown(&a.path), &text, a.start_line, a.end_line))
    }

    fn links(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: LinksArgs = args("memory_links", v)?;
        let depth = usize::try_from(a.depth.unwrap_or(1)).unwrap_or(usize::MAX);
        let g = self.mem.link_graph(&a.name, depth).map_err(fail)?;
        Ok(ToolText::ok(render_graph(&g)))
    }

    fn recent(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: RecentArgs = args("memory_recent", v)?;
        let since = a
            .since
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .map(|s| memdir::recent::parse_window(s, &self.mem.clock().now()))
            .transpose()
            .map_err(ToolText::error)?;
        let q = memdir::recent::RecentQuery {
            since,
            path: a.path,
            writer: a.writer.filter(|w| !w.trim().is_empty()),
            limit: a.limit.map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
        };
        let r = self.mem.recent(&q).map_err(fail)?;
        Ok(ToolText::ok(format!(
            "changes ({}), newest first:\n{}",
            r.from,
            r.render()
        )))
    }

    fn write(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: WriteArgs = args("memory_write", v)?;
        self.mem
            .with_reason(a.reason.as_deref())
            .write(&a.path, &a.content)
            .map_err(fail)
            .and_then(made)?;
        Ok(ToolText::ok(format!(
            "wrote {} ({} lines, {} bytes)",
            shown(&a.path),
            a.content.lines().count(),
            a.content.len()
        )))
    }

    fn edit(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: EditArgs = args("memory_edit", v)?;
        let op = edit_op(&a).map_err(ToolText::error)?;
        let done = self
            .mem
            .with_reason(a.reason.as_deref())
            .edit_with(&a.path, &op)
            .map_err(fail)
            .and_then(made)?;
        Ok(ToolText::ok(format!("edited {}: {done}", shown(&a.path))))
    }

    fn log(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: LogArgs = args("memory_log", v)?;
        let r = self.mem.log(&a.text).map_err(fail)?;
        Ok(ToolText::ok(format!(
            "logged to {}: {}",
            r.path,
            r.entry.trim_end()
        )))
    }

    fn scratch(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: ScratchArgs = args("memory_scratch", v)?;
        let ttl = match a.ttl {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(_) => {
                return Err(ToolText::error(
                    "ttl must be a duration such as 30m, 2h or 1d",
                ));
            }
        };
        let ttl_ms = ttl
            .as_deref()
            .map(memdir_core::duration::parse_ttl)
            .transpose()
            .map_err(ToolText::error)?;
        let path = self.mem.scratch(&a.name, ttl_ms, &a.body).map_err(fail)?;
        Ok(ToolText::ok(format!(
            "wrote {path}; it shows in memory_context until it expires{}",
            ttl.map(|t| format!(" (ttl {t})")).unwrap_or_default()
        )))
    }

    fn gate_request(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: GateRequestArgs = args("gate_request", v)?;
        let amount = match a.amount {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(_) => {
                return Err(ToolText::error(
                    "amount must be a number such as 40 or 12.50",
                ));
            }
        };
        let amount = amount
            .map(|s| s.parse::<memdir_core::gates::Amount>())
            .transpose()
            .map_err(ToolText::error)?;
        let req = memdir_core::gates::Request {
            kind: a.kind,
            target: a.target,
            amount,
        };
        let answer = self
            .mem
            .with_reason(Some(&a.reason))
            .gate_request(&req)
            .map_err(fail)?;
        Ok(gate_answer(&answer))
    }

    fn gate_status(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: GateStatusArgs = args("gate_status", v)?;
        Ok(gate_answer(&self.mem.gate_status(&a.id).map_err(fail)?))
    }

    fn offload(&self, v: Value) -> Result<ToolText, ToolText> {
        let a: OffloadArgs = args("memory_offload", v)?;
        let r = offload::offload(&self.mem, &a.content, a.label.as_deref()).map_err(fail)?;
        Ok(ToolText::ok(r.render()))
    }
}

/// A link graph as a model reads it: the note, then one line per note around it, with how it
/// was reached and its description; names and descriptions of external notes are fenced.
pub fn render_graph(g: &memdir::notes::LinkGraph) -> String {
    let line = |n: &memdir::notes::GraphNode| {
        let mut l = n.path.clone();
        if let Some(name) = &n.name {
            l.push_str(&format!(" ({name})"));
        }
        if let Some(d) = &n.description {
            l.push_str(&format!(" — {d}"));
        }
        l
    };
    let mut out = String::new();
    for n in &g.nodes {
        let text = match (n.relation, &n.via) {
            (Some(rel), Some(via)) => {
                let how = if rel == "outgoing" {
                    format!("linked from {via}")
                } else {
                    format!("links to {via}")
                };
                format!("- depth {} ({how}): {}\n", n.depth, line(n))
            }
            _ => format!("{}\n", line(n)),
        };
        if n.external {
            out.push_str(&memdir_core::context::fence_untrusted(&text));
        } else {
            out.push_str(&text);
        }
        if n.depth == 0 && g.nodes.len() == 1 {
            out.push_str("(no links to or from other notes)\n");
        }
    }
    for b in &g.broken {
        out.push_str(&format!("- broken link: {b}\n"));
    }
    if g.truncated {
        out.push_str(&format!(
            "(stopped at {} notes: ask with a smaller depth, or follow one note at a time)\n",
            memdir::notes::GRAPH_MAX_NODES
        ));
    }
    out
}

/// The one edit `memory_edit`'s arguments ask for, or why they do not name exactly one.
fn edit_op(a: &EditArgs) -> Result<EditOp<'_>, String> {
    let given: Vec<&str> = [
        ("append", a.append.is_some()),
        ("prepend", a.prepend.is_some()),
        ("section", a.section.is_some()),
        ("old", a.old.is_some()),
    ]
    .into_iter()
    .filter_map(|(n, on)| on.then_some(n))
    .collect();
    if given.len() != 1 {
        return Err(format!(
            "memory_edit needs exactly one of append, prepend, section (with new) or old (with new){}",
            if given.is_empty() {
                String::new()
            } else {
                format!(", not {}", given.join(" and "))
            }
        ));
    }
    if a.expected_count.is_some() && a.old.is_none() {
        return Err("expected_count goes with old and new: leave it out for this edit".into());
    }
    let new = || {
        a.new.as_deref().ok_or_else(|| {
            format!(
                "{} needs new: the replacement text (\"\" to delete)",
                given[0]
            )
        })
    };
    Ok(match (&a.append, &a.prepend, &a.section, &a.old) {
        (Some(t), ..) | (_, Some(t), ..) if a.new.is_some() => {
            return Err(format!(
                "new goes with section or old, not with {}: leave it out",
                given[0]
            ));
        }
        (Some(t), ..) => EditOp::Append(t),
        (_, Some(t), ..) => EditOp::Prepend(t),
        (_, _, Some(h), _) => EditOp::Section {
            heading: h,
            new: new()?,
        },
        (_, _, _, Some(o)) => EditOp::Replace {
            old: o,
            new: new()?,
            expected: usize::try_from(a.expected_count.unwrap_or(1)).unwrap_or(usize::MAX),
        },
        _ => return Err("memory_edit needs one of append, prepend, section or old".into()),
    })
}

/// A gate's answer: its JSON object, then one line saying what to do. A denial is an error
/// result, so the model sees the rule as a refusal.
fn gate_answer(a: &memdir::gates::Answer) -> ToolText {
    let text = format!(
        "{}\n{}",
        serde_json::to_string(a).unwrap_or_default(),
        a.message()
    );
    match a {
        memdir::gates::Answer::Denied { .. } => ToolText::error(text),
        _ => ToolText::ok(text),
    }
}

/// Lines `start..=end` of a file (1-based), cut at [`READ_CHAR_CAP`] characters, with a note
/// that says how to read on whenever less than the whole file is shown.
pub fn read_range(path: &str, text: &str, start: Option<u64>, end: Option<u64>) -> ToolText {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let n = lines.len();
    if n == 0 {
        return ToolText::ok(format!("({path} is empty)"));
    }
    let start = start.unwrap_or(1).max(1);
    if start > n as u64 {
        return ToolText::error(format!(
            "start_line {start} is past the end of {path}, which has {n} lines: use a start_line from 1 to {n}"
        ));
    }
    let end = end.unwrap_or(n as u64).min(n as u64);
    if end < start {
        return ToolText::error(format!(
            "end_line {end} is before start_line {start}: give end_line >= start_line"
        ));
    }
    let (s, e) = (start as usize, end as usize);
    let mut out = String::new();
    let mut chars = 0usize;
    let mut last = s - 1;
    for line in &lines[s - 1..e] {
        let c = line.chars().count();
        if chars + c > READ_CHAR_CAP {
            if last == s - 1 {
                // A single line longer than the cap: show its start.
                let keep = line
                    .char_indices()
                    .nth(READ_CHAR_CAP)
                    .map_or(line.len(), |(i, _)| i);
                out.push_str(&line[..keep]);
                out.push_str(&format!(
                    "\n[line {s} of {path} is longer than {READ_CHAR_CAP} characters and was cut]"
                ));
                return ToolText::ok(out);
            }
            break;
        }
        chars += c;
        out.push_str(line);
        last += 1;
    }
    if s == 1 && last == n {
        return ToolText::ok(out);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if last < e {
        out.push_str(&format!(
            "[{path}: showed lines {s}-{last} of {n}, cut at {READ_CHAR_CAP} characters; continue with start_line={}]",
            last + 1
        ));
    } else if last < n {
        out.push_str(&format!(
            "[{path}: showed lines {s}-{last} of {n}; more with start_line={}]",
            last + 1
        ));
    } else {
        out.push_str(&format!("[{path}: showed lines {s}-{last} of {n}]"));
    }
    ToolText::ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A service's admission knows every listed tool (and only those), or a new tool would be
    /// "unknown" in a service only.
    #[test]
    fn admission_knows_every_listed_tool() {
        let mut listed: Vec<&str> = specs().iter().map(|s| s.name).collect();
        let mut known = TOOL_NAMES.to_vec();
        listed.sort_unstable();
        known.sort_unstable();
        assert_eq!(listed, known);
    }

    #[test]
    fn read_range_pages_with_hints() {
        let text = "a\nb\nc\n";
        assert_eq!(read_range("x.md", text, None, None), ToolText::ok(text));
        assert_eq!(
            read_range("x.md", text, Some(2), Some(2)).text,
            "b\n[x.md: showed lines 2-2 of 3; more with start_line=3]"
        );
        assert_eq!(
            read_range("x.md", text, Some(3), None).text,
            "c\n[x.md: showed lines 3-3 of 3]"
        );
        assert!(read_range("x.md", text, Some(4), None).is_error);
        let big = "0123456789\n".repeat(3000);
        let out = read_range("big.md", &big, None, None).text;
        assert!(out.len() < READ_CHAR_CAP + 200, "{}", out.len());
        assert!(out.ends_with("continue with start_line=1455]"), "{out}");
    }

    #[test]
    fn every_schema_is_an_object_with_known_required_fields() {
        for s in specs() {
            assert_eq!(s.input_schema["type"], "object", "{}", s.name);
            let props = s.input_schema["properties"].as_object().unwrap();
            for r in s.input_schema["required"].as_array().into_iter().flatten() {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", s.name);
            }
        }
    }
}
