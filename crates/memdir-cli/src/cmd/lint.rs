//! `memdir lint`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out, out_json};
use memdir::lint::Severity;

/// Check the memory folder: frontmatter, duplicate names, broken links, the index, caps, file
/// sizes and expired items. Each finding has file:line, a severity and a fix.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 no errors (warnings may be printed), 2 at least one error, 3 lint could not run.\n\nErrors: frontmatter, duplicate-name, broken-link, over-cap.\nWith --secrets, also: secret.\nWarnings: unlisted, not-in-index, stale-index, too-large, undated-state, expired-scratch, expired-note.\n\nExamples:\n  memdir lint\n  memdir lint --secrets\n  memdir lint --json | jq '.findings[] | select(.severity == \"error\")'"
)]
pub struct Args {
    /// Print JSON: notes, findings (file, line, severity, code, message, hint), errors, warnings.
    #[arg(long)]
    pub json: bool,
    /// Also look for credentials stored in any file (code `secret`, an error): file, line and
    /// kind, never the value.
    #[arg(long)]
    pub secrets: bool,
}

/// Runs `lint`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let mut report = mem.lint()?;
    if a.secrets {
        for s in mem.secrets_on_disk()? {
            report.errors += 1;
            report.findings.push(memdir::lint::Finding {
                file: s.path,
                line: s.line,
                severity: Severity::Error,
                code: "secret",
                message: format!("a credential ({}) is stored here", s.kind),
                hint: "remove it (and rotate it: history still holds it); new writes redact it"
                    .into(),
            });
        }
    }
    if a.json {
        out_json(&report)?;
    } else {
        let mut text = String::new();
        for f in &report.findings {
            let sev = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            text.push_str(&format!(
                "{}:{}: {sev}[{}]: {}\n  fix: {}\n",
                f.file, f.line, f.code, f.message, f.hint
            ));
        }
        text.push_str(&format!(
            "{} error(s), {} warning(s) in {} note(s)\n",
            report.errors, report.warnings, report.notes
        ));
        out(&text)?;
    }
    if report.errors > 0 {
        return Err(CliError::silent(exit::INVALID));
    }
    Ok(())
}
