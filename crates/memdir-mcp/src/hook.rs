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
/// budget (see [`memdir_core::context::fit`]).
pub fn session_context(
    mem: &Memory,
    input: &HookInput,
    limit: usize,
) -> Result<String, memdir::Error> {
    let mut out = String::from(
        "memdir memory for this session (the memory_* MCP tools and the `memdir` CLI read and update it).\n",
    );
    if input.source.as_deref() == Some("compact") {
        out.push_str("The conversation was just compacted; this is the memory saved before it.\n");
    }
    let room = limit.saturating_sub(out.chars().count() + 1);
    let chars = |s: &str| s.chars().count();
    let sections = fit(mem.context_sections()?, room, &chars);
    out.push('\n');
    out.push_str(&render(&sections));
    Ok(out)
}

/// The JSON a SessionStart hook prints.
pub fn session_start(mem: &Memory, input: &HookInput) -> Result<String, memdir::Error> {
    let text = session_context(mem, input, INLINE_LIMIT)?;
    Ok(json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": text,
        }
    })
    .to_string())
}

/// The text a PreCompact hook prints: the flush reminder. (Claude Code writes PreCompact output
/// to its debug log; pair it with a SessionStart hook on `compact` to bring memory back.)
pub fn pre_compact(input: &HookInput) -> String {
    let trigger = input.trigger.as_deref().unwrap_or("unknown");
    format!("memdir: context compaction ({trigger}) is starting.\n{FLUSH}\n")
}
