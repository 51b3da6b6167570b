//! The layers: the context (core, the index, state, recent logs, live scratch notes), daily
//! logs, scratch notes and the sweep that expires them.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::provenance::Source;
use crate::store::{Entry, EntryKind, StoreError};
use memdir_core::context::{Fill, Section, fence_untrusted, fit, nest_headings, render, tokens};
use memdir_core::host::FolderLayout;
use memdir_core::log::{EXTERNAL_MARK, EXTERNAL_SCRATCH_MARK, format_entry, parse_entries};
use memdir_core::path::MemPath;
use memdir_core::scratch::{ScratchName, validate_slug};
use serde::Serialize;

/// The last line of every context: where the rest of memory is and how to reach it.
pub const POINTER: &str = "Not loaded above: older logs, notes and the archive. Search them with \
`memdir search <words>` (MCP: memory_search) and open a file with `memdir read <path>` (MCP: memory_read).";

/// The assembled context, most stable section first.
#[derive(Debug, Clone, Serialize)]
pub struct Context {
    /// The sections in load order.
    pub sections: Vec<Section>,
}

impl Context {
    /// The context as Markdown.
    pub fn render(&self) -> String {
        render(&self.sections)
    }
}

/// Where a log entry went.
#[derive(Debug, Clone, Serialize)]
pub struct LogReceipt {
    /// The log file, e.g. `log/2026-11-30.md`.
    pub path: String,
    /// The entry as written.
    pub entry: String,
}

/// What a sweep removed (or would remove, on a dry run).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SweepReport {
    /// Expired scratch notes removed.
    pub removed: Vec<String>,
    /// Items in `scratch/` left alone because they are not scratch notes.
    pub skipped: Vec<String>,
    /// Notes whose `expires` date has passed, moved into `archive/`.
    pub archived_notes: Vec<crate::archive::Archived>,
    /// Entries of `state.md` older than `state.archive_after`, moved into the archive.
    pub archived_state_entries: usize,
    /// The archive file those state entries went to (`archive/YYYY-MM-DD.md`).
    pub state_archive: Option<String>,
}

/// Builds the context within the configured budget (`[context] max_tokens`).
pub(crate) fn context(cx: &Ctx) -> Result<Context, Error> {
    context_within(cx, cx.config.context.max_tokens)
}

/// Builds the context within `max_tokens` (estimated as bytes / 4): see [`fit`].
pub(crate) fn context_within(cx: &Ctx, max_tokens: usize) -> Result<Context, Error> {
    Ok(Context {
        sections: fit(context_sections(cx)?, max_tokens, &tokens),
    })
}

/// Every section of the context, before any budget: core, the index, state and the guard
/// and proposals lines, the most recent `[context] log_days` days that have a log, live
/// scratch notes, then a pointer to the rest. Missing layers are simply empty.
pub(crate) fn context_sections(cx: &Ctx) -> Result<Vec<Section>, Error> {
    let _prefetched = crate::prefetch::context(cx);
    // A change killed part-way may have left MEMORY.md behind its notes: finish it first.
    crate::change::heal_if_interrupted(cx);
    let now = cx.clock.now();
    let mut sections = Vec::new();
    let layout = cx.layout();
    let core = cx
        .read_opt(&MemPath::known(layout.core))?
        .unwrap_or_default();
    let core = if core.trim().is_empty() {
        "(empty)".to_string()
    } else {
        nest_headings(&core)
    };
    sections.push(Section::new(
        "core",
        format!("Core memory ({})", layout.core),
        Some(layout.core.to_string()),
        core,
    ));
    sections.extend(crate::note_index::context_sections(cx)?);
    let logs = cx.list_opt(&MemPath::known(layout.log_dir))?;
    let today = now.date();
    for date in recent_days(&layout, &logs, today, cx.config.context.log_days) {
        if let Some((path, text)) = day_log(cx, &logs, date)?
            && !text.trim().is_empty()
        {
            let ago = today.since(date).map(|s| s.get_days()).unwrap_or(0);
            let label = match ago {
                0 => "today".to_string(),
                1 => "yesterday".to_string(),
                n => format!("{n} days ago"),
            };
            sections.push(
                Section::new(
                    format!("log:{date}"),
                    format!("Log {date} ({label})"),
                    Some(path),
                    text,
                )
                .with_fill(Fill::Tail),
            );
        }
    }
    let now_ms = now.timestamp().as_millisecond();
    for e in cx.list_opt(&MemPath::known(layout.scratch))? {
        let Some(name) = e.path.file_name().and_then(ScratchName::parse) else {
            continue;
        };
        if e.kind != EntryKind::File || name.expires_ms <= now_ms {
            continue;
        }
        let Some(text) = cx.read_opt(&e.path)? else {
            continue;
        };
        let text = match crate::trust::external_scratch_body(&text) {
            Some(rest) => fence_untrusted(rest),
            None => nest_headings(&text),
        };
        let expires = jiff::Timestamp::from_millisecond(name.expires_ms)
            .map(|t| {
                t.to_zoned_datetime(now.time_zone().clone())
                    .strftime("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_default();
        sections.push(Section::new(
            format!("scratch:{}", name.slug),
            format!("Scratch: {} (expires {expires})", name.slug),
            Some(e.path.to_string()),
            text,
        ));
    }
    sections.push(Section::new("pointer", "", None, POINTER.to_string()));
    Ok(sections)
}

/// One day's log as the context shows it (every writer's file merged, external entries
/// fenced), or `None` when the day has no log. For readers that show a log to an agent.
pub(crate) fn day_log_shown(cx: &Ctx, date: jiff::civil::Date) -> Result<Option<String>, Error> {
    let logs = cx.list_opt(&MemPath::known(cx.layout().log_dir))?;
    Ok(day_log(cx, &logs, date)?.map(|(_, text)| text))
}

/// One day's log for the context: the main file and every writer's file merged in time
/// order (stable, main first), non-main lines tagged with their writer, and entries from
/// external sources fenced (a run of them in one block). Returns the main path and the text.
fn day_log(
    cx: &Ctx,
    logs: &[Entry],
    date: jiff::civil::Date,
) -> Result<Option<(String, String)>, Error> {
    let layout = cx.layout();
    let main = layout.log_path(date);
    let mut files: Vec<(Option<String>, String)> = Vec::new();
    for e in logs {
        let Some(name) = e.path.file_name() else {
            continue;
        };
        if e.kind != EntryKind::File || layout.log_name_date(name) != Some(date) {
            continue;
        }
        let writer = layout.log_name_writer(name).map(str::to_string);
        if let Some(text) = cx.read_opt(&e.path)? {
            files.push((writer, text));
        }
    }
    if files.is_empty() {
        return Ok(None);
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut entries: Vec<(String, usize, bool, String)> = Vec::new();
    for (writer, text) in &files {
        for entry in parse_entries(text) {
            let key = entry.time.clone().unwrap_or_default();
            let mut line = entry.text.clone();
            if let (Some(w), Some(t)) = (writer, &entry.time) {
                let prefix = format!("- {t} ");
                if let Some(rest) = line.strip_prefix(&prefix) {
                    line = format!("{prefix}({w}) {rest}");
                }
            }
            let external = entry
                .text
                .get(8..)
                .is_some_and(|r| r.starts_with(EXTERNAL_MARK));
            entries.push((key, entries.len(), external, line));
        }
    }
    if files.len() > 1 {
        entries.sort_by(|a, b| (a.0.as_str(), a.1).cmp(&(b.0.as_str(), b.1)));
    }
    let mut out = String::new();
    let mut run = String::new();
    for (_, _, external, line) in entries {
        if external {
            run.push_str(&line);
            continue;
        }
        if !run.is_empty() {
            out.push_str(&fence_untrusted(&std::mem::take(&mut run)));
        }
        out.push_str(&line);
    }
    if !run.is_empty() {
        out.push_str(&fence_untrusted(&run));
    }
    Ok(Some((main, out)))
}

/// Appends one entry to today's log. Writers other than the main one append to their own
/// file, `log/YYYY-MM-DD.<writer>.md`, so they never contend on one file.
pub(crate) fn log(cx: &Ctx, text: &str) -> Result<LogReceipt, Error> {
    let now = cx.clock.now();
    let path = if cx.actor.writer == cx.config.writers.main {
        cx.layout().log_path(now.date())
    } else {
        validate_slug(&cx.actor.writer).map_err(|e| Error::Invalid(format!("writer: {e}")))?;
        cx.layout().writer_log_path(now.date(), &cx.actor.writer)
    };
    let guarded = crate::guard::content(cx, &path, text, None)?;
    let text = &*guarded.text;
    let marked;
    let text = if cx.actor.source == Source::External {
        marked = format!("{EXTERNAL_MARK} {text}");
        marked.as_str()
    } else {
        text
    };
    let entry = format_entry(now.time(), text).map_err(Error::Invalid)?;
    let file = MemPath::parse_file(&path)?;
    let tx = crate::change::begin_append(cx, "log", &file, &entry)?.redacted(&guarded.redacted);
    tx.append(&file, entry.as_bytes())?;
    tx.commit()?;
    Ok(LogReceipt { path, entry })
}

/// Writes a scratch note that expires after `ttl_ms` (the configured default when `None`).
/// A note with the same name is replaced.
pub(crate) fn scratch(
    cx: &Ctx,
    name: &str,
    ttl_ms: Option<i64>,
    body: &str,
) -> Result<String, Error> {
    validate_slug(name).map_err(Error::Invalid)?;
    let ttl = match ttl_ms {
        Some(t) => t,
        None => memdir_core::duration::parse_ttl(&cx.config.scratch.default_ttl)
            .map_err(Error::Invalid)?,
    };
    let expires_ms = cx
        .clock
        .now()
        .timestamp()
        .as_millisecond()
        .saturating_add(ttl);
    let file = ScratchName {
        expires_ms,
        slug: name.to_string(),
    }
    .file_name();
    let scratch = MemPath::known(cx.layout().scratch);
    let path = scratch.join(&file)?;
    let guarded = crate::guard::content(cx, path.as_str(), body, None)?;
    let body = &*guarded.text;
    let body = if cx.actor.source == Source::External {
        format!("{EXTERNAL_SCRATCH_MARK}\n{body}")
    } else {
        body.to_string()
    };
    let tx = crate::change::begin(cx, "scratch", path.as_str())?.redacted(&guarded.redacted);
    tx.write(&path, body.as_bytes())?;
    for e in cx.list_opt(&scratch)? {
        if e.path != path
            && e.path
                .file_name()
                .and_then(ScratchName::parse)
                .is_some_and(|n| n.slug == name)
        {
            tx.remove(&e.path)?;
        }
    }
    tx.commit()?;
    Ok(path.to_string())
}

/// Deletes expired scratch notes. Idempotent; odd names and folders are skipped.
pub(crate) fn sweep(cx: &Ctx, dry_run: bool) -> Result<SweepReport, Error> {
    let tx = if dry_run {
        None
    } else {
        Some(crate::change::begin(cx, "sweep", cx.layout().scratch)?)
    };
    let now_ms = cx.clock.now().timestamp().as_millisecond();
    let mut report = SweepReport::default();
    for e in cx.list_opt(&MemPath::known(cx.layout().scratch))? {
        let parsed = e.path.file_name().and_then(ScratchName::parse);
        match parsed {
            Some(n) if e.kind == EntryKind::File => {
                if n.expires_ms <= now_ms {
                    if let Some(tx) = &tx {
                        match tx.remove(&e.path) {
                            Ok(()) | Err(Error::Store(StoreError::NotFound(_))) => {}
                            Err(err) => return Err(err),
                        }
                    }
                    report.removed.push(e.path.to_string());
                }
            }
            _ => report.skipped.push(e.path.to_string()),
        }
    }
    crate::archive::sweep(cx, tx.as_ref(), &mut report)?;
    if let Some(tx) = tx {
        // Temp files of writes that were killed (only memdir's own names, of dead processes).
        tx.clean_temp_files(&MemPath::root(), true)?;
        tx.commit()?;
    }
    Ok(report)
}

/// The `n` most recent days up to `today` that have a log file (of any writer), oldest first.
fn recent_days(
    layout: &FolderLayout,
    logs: &[Entry],
    today: jiff::civil::Date,
    n: usize,
) -> Vec<jiff::civil::Date> {
    let mut days: Vec<jiff::civil::Date> = logs
        .iter()
        .filter(|e| e.kind == EntryKind::File)
        .filter_map(|e| e.path.file_name().and_then(|n| layout.log_name_date(n)))
        .filter(|d| *d <= today)
        .collect();
    days.sort_unstable();
    days.dedup();
    let skip = days.len().saturating_sub(n);
    days.split_off(skip)
}
