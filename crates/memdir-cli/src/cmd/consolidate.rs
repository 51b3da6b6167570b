//! `memdir consolidate`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir::consolidate::{ChatModel, Options};
use std::time::Duration;

/// Read the logs since the last run and propose tidy-ups: recurring user statements for core,
/// core lines the logs contradict, notes to merge or archive, state lines to archive. Writes
/// proposals (see `memdir review`) and a report, consolidation/YYYY-MM-DD.md; changes nothing
/// else. Safe to run from cron or a systemd timer: a second run proposes nothing new.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir consolidate --dry-run\n  memdir consolidate\n  memdir consolidate --since 2026-11-01 --json\n  memdir review"
)]
pub struct Args {
    /// Read logs from this day (YYYY-MM-DD) instead of from the last run.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Say what would be proposed; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the findings as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `consolidate`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let since = a
        .since
        .as_deref()
        .map(|s| {
            s.parse::<jiff::civil::Date>().map_err(|_| {
                CliError::invalid(format!("bad --since {s:?}: give a day as YYYY-MM-DD"))
            })
        })
        .transpose()?;
    let mem = env.open()?;
    let model = chat_model(&mem.config().consolidate, "bad .memdir/config.toml:")?;
    let report = mem.consolidate(&Options {
        since,
        dry_run: a.dry_run,
        model,
    })?;
    if a.json {
        return out_json(&report);
    }
    let mut text = report.render(&env.clock.now().strftime("%H:%M").to_string());
    match &report.report {
        Some(p) => text.push_str(&format!(
            "\nreport written to {p}; review proposals with `memdir review`\n"
        )),
        None => text.push_str("\ndry run: nothing written\n"),
    }
    out(text.trim_start())
}

/// The chat model a `[consolidate]` section configures, with its API key read from the variable
/// it names; `origin` starts an error's message with where the section is (a memory's settings
/// or the service config).
pub(crate) fn chat_model(
    c: &memdir_core::config::ConsolidateConfig,
    origin: &str,
) -> Result<Option<ChatModel>, CliError> {
    match c.provider.as_str() {
        "none" => return Ok(None),
        "openai" => {}
        other => {
            return Err(CliError::invalid(format!(
                "{origin} consolidate.provider {other:?}: use none or openai"
            )));
        }
    }
    let (Some(url), Some(model)) = (c.url.clone(), c.model.clone()) else {
        return Err(CliError::invalid(format!(
            "{origin} consolidate.provider = \"openai\" needs url and model"
        )));
    };
    let api_key = c
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok())
        .filter(|k| !k.is_empty());
    Ok(Some(ChatModel {
        url,
        model,
        api_key,
        timeout: Duration::from_secs(c.timeout_secs.max(1)),
    }))
}
