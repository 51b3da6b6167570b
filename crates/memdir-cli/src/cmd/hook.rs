//! `memdir hook`

use crate::cmd::mcp::open_or_init;
use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out, read_stdin};
use memdir_mcp::hook::{self, HookInput};
use memdir_mcp::recall;
use memdir_mcp::session::{self, Host, Saved};
use std::io::BufReader;

/// Claude Code hooks: they read the hook's JSON on stdin and print what Claude Code expects.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples (settings.json; see the README for the whole block, or run `memdir install claude-code`):
  \"SessionStart\":     [{\"hooks\": [{\"type\": \"command\", \"command\": \"memdir hook session-start\"}]}]
  \"PreCompact\":       [{\"hooks\": [{\"type\": \"command\", \"command\": \"memdir hook pre-compact\"}]}]
  \"SessionEnd\":       [{\"hooks\": [{\"type\": \"command\", \"command\": \"memdir hook session-end\"}]}]
  \"UserPromptSubmit\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"memdir hook user-prompt\"}]}]
  echo '{\"hook_event_name\": \"SessionStart\", \"source\": \"startup\"}' | memdir hook session-start"
)]
pub struct Args {
    /// The hook event.
    #[command(subcommand)]
    pub event: Event,
}

/// The events memdir answers.
#[derive(Debug, clap::Subcommand)]
pub enum Event {
    /// Print the memory context as SessionStart `additionalContext` JSON (under 10,000 characters;
    /// sections that do not fit are named by file instead). After a compaction (source
    /// `compact`) it names the transcript the PreCompact hook saved.
    SessionStart,
    /// Save the session's transcript (`transcript_path`) as Markdown under sessions/, log where,
    /// and print the save-before-compaction reminder.
    PreCompact,
    /// Save the rest of the session's transcript under sessions/ and log the session's end with
    /// its reason.
    SessionEnd,
    /// With `[hooks] recall = true`: print the memory lines most relevant to the prompt as
    /// UserPromptSubmit `additionalContext` (nothing when none scores above the floor, or when
    /// recall is off).
    UserPrompt,
}

/// Runs `hook`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let input = hook::parse_input(&read_stdin()?).map_err(CliError::invalid)?;
    match a.event {
        Event::SessionStart => {
            let mem = open_or_init(env)?;
            let saved = if input.source.as_deref() == Some("compact") {
                saved_transcript(&mem, &input)
            } else {
                None
            };
            out(&hook::session_start(&mem, &input, saved.as_deref())?)
        }
        Event::PreCompact => {
            let saved = match input.transcript_path {
                Some(_) => Some(save(env, &input, "pre-compact")?),
                None => None,
            };
            out(&hook::pre_compact(&input, saved.as_ref()))
        }
        Event::SessionEnd => {
            if input.transcript_path.is_none() {
                return Err(CliError::invalid(
                    "the SessionEnd input has no transcript_path: pipe the hook's JSON on stdin",
                ));
            }
            let saved = save(env, &input, "session-end")?;
            out(&format!("memdir: {}", hook::saved_line(&saved)))
        }
        Event::UserPrompt => {
            let mem = open_or_init(env)?;
            let cfg = &mem.config().hooks;
            if !cfg.recall {
                return Ok(());
            }
            let prompt = input.prompt.as_deref().unwrap_or("");
            let lines = match recall::recall(&mem, prompt, mem.has_embedder()) {
                // The embedder can fail (a model that is gone): words alone still recall.
                Err(_) if mem.has_embedder() => recall::recall(&mem, prompt, false)?,
                other => other?,
            };
            match recall::render(&lines, cfg.recall_max_chars) {
                Some(text) => out(&hook::user_prompt(&text)),
                None => Ok(()),
            }
        }
    }
}

/// The session file a save made for this session, if any. Anything that goes wrong here only
/// leaves the pointer out: the context itself must still load.
fn saved_transcript(mem: &memdir::Memory, input: &HookInput) -> Option<String> {
    let path = input.transcript_path.as_deref()?;
    let session = input.session_id.as_deref()?;
    let file = std::fs::File::open(path).ok()?;
    session::saved_path(mem, BufReader::new(file), session)
        .ok()
        .flatten()
}

/// Saves the transcript the hook input names and logs it; warnings about skipped lines go to
/// stderr.
fn save(env: &Env, input: &HookInput, event: &str) -> Result<Saved, CliError> {
    let path = input.transcript_path.as_deref().unwrap_or_default();
    let file = std::fs::File::open(path).map_err(|e| CliError {
        message: format!(
            "cannot read the transcript {path}: {e}; the hook input's transcript_path must name the session's JSONL file"
        ),
        code: if e.kind() == std::io::ErrorKind::NotFound {
            exit::NOT_FOUND
        } else {
            exit::FAILURE
        },
    })?;
    let session = match input.session_id.as_deref() {
        Some(s) if !s.trim().is_empty() => s.to_string(),
        _ => std::path::Path::new(path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let mem = open_or_init(env)?;
    let saved = session::save(
        &mem,
        BufReader::with_capacity(1 << 16, file),
        Host::ClaudeCode,
        &session,
        input.cwd.as_deref().unwrap_or(""),
    )?;
    for w in &saved.warnings {
        eprintln!("memdir: {w}");
    }
    if let Some(line) = hook::log_line(event, input, &saved) {
        mem.log(&line)?;
    }
    Ok(saved)
}
