//! Claude Code hooks: what `memdir hook session-start` and `memdir hook pre-compact` print.
//!
//! SessionStart is the one event whose output Claude sees: the hook prints
//! `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}` and
//! Claude Code puts the text at the start of the conversation. Claude Code moves a context over
//! 10,000 characters into a file and shows only a preview, so the context is fitted into
//! [`INLINE_LIMIT`] characters with the same rules as `memdir context`'s token budget: whole
//! sections where they fit, the newest log lines, and one line naming the file of whatever was
//! left out. The text is written as facts, not orders, as the hooks guide advises.

use crate::prompts::FLUSH;
use crate::session::Saved;
use memdir::Memory;
use memdir_core::context::{fit, render};
use serde::Deserialize;
use serde_json::json;

/// The most characters of context the hook inlines (Claude Code's limit is 10,000).
pub const INLINE_LIMIT: usize = 9_500;

/// The fields memdir reads from a hook's JSON input; the rest are ignored.
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    /// `SessionStart`, `PreCompact`, ...
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact` or `fork`.
    #[serde(default)]
    pub source: Option<String>,
    /// PreCompact: `manual` or `auto`.
    #[serde(default)]
    pub trigger: Option<String>,
    /// The session's id (every event).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session's JSONL transcript (every event).
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// The session's working folder (every event).
    #[serde(default)]
    pub cwd: Option<String>,
    /// SessionEnd: `clear`, `logout`, `prompt_input_exit`, `other`, ...
    #[serde(default)]
    pub reason: Option<String>,
    /// UserPromptSubmit: what the user typed.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// Parses hook input; empty input counts as `{}` so the hook also works by hand.
pub fn parse_input(stdin: &str) -> Result<HookInput, String> {
    if stdin.trim().is_empty() {
        return Ok(HookInput::default());
    }
    serde_json::from_str(stdin).map_err(|e| {
        format!("hook input is not the JSON object Claude Code sends: {e}; pipe the hook's JSON on stdin")
    })
}

/// The context text for a session start, at most `limit` characters: the context's sections
/// fitted into what is left after the first lines, the same way `memdir context` fits its token
/// budget (see [`memdir_core::context::fit`]). `saved` is the session file a save before the
/// compaction wrote (see [`crate::session`]); the context names it, so the agent can read back
/// what the summary left out.
pub fn session_context(
    mem: &Memory,
    input: &HookInput,
    saved: Option<&str>,
    limit: usize,
) -> Result<String, memdir::Error> {
    let mut out = String::from(
        "memdir memory for this session (the memory_* MCP tools and the `memdir` CLI read and update it).\n",
    );
    if input.source.as_deref() == Some("compact") {
        out.push_str("The conversation was just compacted; this is the memory saved before it.\n");
        if let Some(p) = saved {
            out.push_str(&restore_pointer(p));
        }
    }
    let room = limit.saturating_sub(out.chars().count() + 1);
    let chars = |s: &str| s.chars().count();
    let sections = fit(mem.context_sections()?, room, &chars);
    out.push('\n');
    out.push_str(&render(&sections));
    Ok(out)
}

/// The line that names the saved transcript after a compaction.
pub fn restore_pointer(path: &str) -> String {
    format!(
        "The full conversation before compaction is in {path}; read it with memory_read {{\"path\": \"{path}\", \"start_line\": 1, \"end_line\": 200}} (CLI: memdir read {path}), or find a detail in it with memory_search.\n"
    )
}

/// The JSON a SessionStart hook prints.
pub fn session_start(
    mem: &Memory,
    input: &HookInput,
    saved: Option<&str>,
) -> Result<String, memdir::Error> {
    let text = session_context(mem, input, saved, INLINE_LIMIT)?;
    Ok(json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": text,
        }
    })
    .to_string())
}

/// The JSON a UserPromptSubmit hook prints: `text` as context next to the prompt.
pub fn user_prompt(text: &str) -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": text,
        }
    })
    .to_string()
}

/// The text a PreCompact hook prints: the flush reminder, and where the transcript was saved.
/// (Claude Code writes PreCompact output to its debug log; pair it with a SessionStart hook on
/// `compact` to bring memory back.)
pub fn pre_compact(input: &HookInput, saved: Option<&Saved>) -> String {
    let trigger = input.trigger.as_deref().unwrap_or("unknown");
    let mut out = format!("memdir: context compaction ({trigger}) is starting.\n");
    if let Some(s) = saved {
        out.push_str(&format!("memdir: {}\n", saved_line(s)));
    }
    out.push_str(FLUSH);
    out.push('\n');
    out
}

/// What a save did, in one line: `N new turns of the session transcript saved to PATH`.
pub fn saved_line(s: &Saved) -> String {
    match s.new_turns {
        0 => format!("the session transcript in {} is up to date", s.path),
        1 => format!("1 new turn of the session transcript saved to {}", s.path),
        n => format!(
            "{n} new turns of the session transcript saved to {}",
            s.path
        ),
    }
}

/// The log line of a save: what triggered it and where the transcript is, so a later session
/// (or a person reading the day's log) finds it. `None` when there is nothing to say: a save
/// that added nothing and no session end.
pub fn log_line(event: &str, input: &HookInput, s: &Saved) -> Option<String> {
    let short = memdir_core::transcript::short_id(input.session_id.as_deref().unwrap_or(""));
    let turns = match s.new_turns {
        0 => "no new turns".to_string(),
        1 => "1 new turn".to_string(),
        n => format!("{n} new turns"),
    };
    match event {
        "pre-compact" if s.new_turns > 0 => Some(format!(
            "session {short} compacting ({}): transcript saved to {} ({turns})",
            word(input.trigger.as_deref()),
            s.path
        )),
        "session-end" => Some(format!(
            "session {short} ended ({}): transcript in {} ({turns})",
            word(input.reason.as_deref()),
            s.path
        )),
        _ => None,
    }
}

/// A field the host fills with one word (`auto`, `prompt_input_exit`), as a log shows it:
/// letters, digits, `_` and `-` only, at most 40, `unknown` when none is left.
fn word(s: Option<&str>) -> String {
    let w: String = s
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(40)
        .collect();
    if w.is_empty() { "unknown".into() } else { w }
}
