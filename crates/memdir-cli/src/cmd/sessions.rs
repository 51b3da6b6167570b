//! `memdir import --from` a folder of agent session transcripts: a Claude Code project folder
//! (`~/.claude/projects/<project>/*.jsonl`) or a Codex CLI sessions folder
//! (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`). Each transcript is saved exactly as the
//! PreCompact and SessionEnd hooks save one ([`memdir_mcp::session`]), so running it again, or
//! after a hook saved part of a session, adds only the turns not saved yet.

use crate::cmd::mcp::open_or_init;
use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out};
use memdir_mcp::session::{self, Host};
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// The transcripts a folder holds and whose they are, or `None` when it is not such a folder
/// (a memdir store, or a folder without transcripts).
pub fn transcripts(dir: &Path) -> Option<(Host, Vec<PathBuf>)> {
    if !dir.is_dir()
        || dir.join(".memdir").exists()
        || dir.join(memdir_core::host::CORE_FILE).exists()
    {
        return None;
    }
    let jsonl = |p: &Path| p.extension().is_some_and(|e| e == "jsonl");
    // Claude Code: one <session>.jsonl per session, directly in the project folder.
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && jsonl(p))
        .collect();
    if !files.is_empty() {
        files.sort();
        return Some((Host::ClaudeCode, files));
    }
    // Codex CLI: rollout-*.jsonl in dated folders (or the day's folder itself).
    let mut files = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() && depth < 3 && !name.starts_with('.') {
                stack.push((p, depth + 1));
            } else if p.is_file() && name.starts_with("rollout-") && jsonl(&p) {
                files.push(p);
            }
        }
    }
    files.sort();
    (!files.is_empty()).then_some((Host::Codex, files))
}

/// A transcript's session id: Claude Code names the file after it; a Codex rollout file ends
/// with it (`rollout-2026-11-30T09-00-12-<uuid>.jsonl`).
fn session_id(host: Host, file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match host {
        Host::ClaudeCode => stem,
        Host::Codex => {
            let parts: Vec<&str> = stem.rsplitn(6, '-').collect();
            if parts.len() == 6 {
                let mut id: Vec<&str> = parts[..5].to_vec();
                id.reverse();
                id.join("-")
            } else {
                stem
            }
        }
    }
}

/// Imports every transcript in `dir`.
pub fn import(dir: &Path, host: Host, files: &[PathBuf], env: &Env) -> CliResult {
    let mem = open_or_init(env)?;
    let name = match host {
        Host::ClaudeCode => "Claude Code",
        Host::Codex => "Codex CLI",
    };
    let mut lines = Vec::new();
    let (mut turns, mut changed) = (0, 0);
    for f in files {
        let file = std::fs::File::open(f).map_err(|e| CliError {
            message: format!("cannot read {}: {e}", f.display()),
            code: exit::FAILURE,
        })?;
        let id = session_id(host, f);
        let saved = session::save(&mem, BufReader::with_capacity(1 << 16, file), host, &id, "")?;
        for w in &saved.warnings {
            eprintln!("memdir: {}: {w}", f.display());
        }
        if saved.new_turns == 0 {
            continue;
        }
        changed += 1;
        turns += saved.new_turns;
        mem.log(&format!(
            "imported {name} session {} into {} ({} new turns)",
            memdir_core::transcript::short_id(&id),
            saved.path,
            saved.new_turns
        ))?;
        lines.push(format!(
            "{}: {} new turns (from {})",
            saved.path,
            saved.new_turns,
            f.display()
        ));
    }
    lines.push(format!(
        "imported {} {name} transcripts from {}: {turns} new turns in {changed} session files, {} already up to date",
        files.len(),
        dir.display(),
        files.len() - changed
    ));
    out(&lines.join("\n"))
}
