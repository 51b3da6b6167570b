//! `memdir tool`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out_bytes, out_json, read_stdin};
use memdir_mcp::Tools;
use std::sync::Arc;

/// Run one tool call: read the tool's input JSON object on stdin and print the result text, so
/// any agent loop can shell out for a tool. The text is followed by exactly one newline. The default tool is `memory`, the Anthropic memory
/// tool (`memory_20250818`); the memory_* tools of the MCP server work the same way. The exit
/// code is 1 when the result is an error result (its text is still printed on stdout, ready to
/// send back as `is_error: true`).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  echo '{\"command\": \"view\", \"path\": \"/memories\"}' | memdir tool
  echo '{\"command\": \"create\", \"path\": \"/memories/notes.md\", \"file_text\": \"hi\\n\"}' | memdir tool memory
  echo '{\"pattern\": \"postgres\", \"mode\": \"ranked\"}' | memdir tool memory_search
  memdir tool --list")]
pub struct Args {
    /// The tool to call.
    #[arg(default_value = "memory")]
    pub name: String,
    /// Print every tool's name, description, input schema and hints as JSON, and exit.
    #[arg(long)]
    pub list: bool,
}

/// Runs `tool`.
pub fn run(a: Args, env: &Env) -> CliResult {
    if a.list {
        let specs: Vec<serde_json::Value> = memdir_mcp::tools::specs()
            .into_iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name,
                    "title": s.title,
                    "description": s.description,
                    "input_schema": s.input_schema,
                    "read_only": s.read_only,
                    "destructive": s.destructive,
                    "idempotent": s.idempotent,
                })
            })
            .collect();
        return out_json(&specs);
    }
    let input = read_stdin()?;
    let args: serde_json::Value = if input.trim().is_empty() {
        serde_json::Value::Null
    } else {
        match serde_json::from_str(&input) {
            Ok(v) => v,
            // An error result, like every other refusal: a loop that sends stdout back with
            // `is_error` from the exit code gives the model something to act on.
            Err(e) => {
                out_bytes(format!(
                    "Error: the tool input is not one JSON object ({e}); send the input object, e.g. {{\"command\": \"view\", \"path\": \"/memories\"}}\n"
                ).as_bytes())?;
                return Err(CliError::silent(exit::NOT_FOUND));
            }
        }
    };
    // Like the SDKs' memory tools, the memory root exists before the first call.
    let tools = Tools::new(Arc::new(crate::cmd::mcp::open_or_init(env)?));
    let result = tools
        .call(&a.name, args)
        .map_err(|e| CliError::invalid(e.to_string()))?;
    // Exactly the result text and one newline, so a caller can strip one "\n" and get it back.
    out_bytes(format!("{}\n", result.text).as_bytes())?;
    if result.is_error {
        return Err(CliError::silent(exit::NOT_FOUND));
    }
    Ok(())
}
