//! Bringing memory kept elsewhere into this one: a Claude Code auto memory folder, an OpenClaw
//! workspace, or a ChatGPT or Claude conversation export. One import is one change (one commit
//! naming its source); running it again adds nothing that is already there.
//!
//! Conversations become log lines of their own writer (`log/YYYY-MM-DD.chatgpt.md`,
//! `.claude-ai.md`), one per turn, and one note per conversation under `chats/`. A host's
//! folder is read through a [`Store`], so its files are never written to. Logs are merged entry
//! by entry (an entry already in the file, counted with repeats, is not added again); notes are
//! created, never written over (a different file at the same path is kept and reported).

use crate::ctx::Ctx;
use crate::error::Error;
use crate::notes::read_text;
use crate::store::{EntryKind, Reader, Store, StoreError};
use jiff::Timestamp;
use memdir_core::chat::{self, Conversation};
use memdir_core::host::{FolderLayout, Imported, LayoutName, with_frontmatter};
use memdir_core::log::parse_entries;
use memdir_core::path::MemPath;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// A conversation export's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatFormat {
    /// ChatGPT's `conversations.json`.
    ChatGpt,
    /// The Claude app's (claude.ai) `conversations.json`.
    Claude,
}

impl ChatFormat {
    /// The writer whose log files the turns go to.
    pub fn writer(self) -> &'static str {
        match self {
            ChatFormat::ChatGpt => "chatgpt",
            ChatFormat::Claude => "claude-ai",
        }
    }

    /// The field that holds a message's time in the export.
    fn time_field(self) -> &'static str {
        match self {
            ChatFormat::ChatGpt => "create_time",
            ChatFormat::Claude => "created_at",
        }
    }

    /// The name people call the export by.
    pub fn shown(self) -> &'static str {
        match self {
            ChatFormat::ChatGpt => "ChatGPT",
            ChatFormat::Claude => "Claude",
        }
    }
}

/// What to import.
pub enum ImportSource<'a> {
    /// A conversation export's text.
    Chats {
        /// Which format it is in.
        format: ChatFormat,
        /// The `conversations.json` text.
        json: &'a str,
    },
    /// A folder a host keeps, read through a store.
    Folder {
        /// The folder's layout (`claude-code` or `openclaw`).
        layout: LayoutName,
        /// The folder.
        store: &'a dyn Store,
    },
}

/// What an import did to one file (or would do, on a dry run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "action")]
pub enum FileAction {
    /// The file is new.
    Create,
    /// Entries added at the end of a log.
    Append {
        /// How many.
        entries: usize,
    },
    /// A note memdir made at an earlier import, brought up to date.
    Update,
    /// Already there as it would be written.
    Unchanged,
    /// A different file is at that path; it was kept and nothing was written.
    Kept {
        /// What to do about it.
        why: String,
    },
}

/// One file of an import.
#[derive(Debug, Clone, Serialize)]
pub struct ImportedFile {
    /// The path in this memory.
    pub path: String,
    /// Where it came from in the source (a folder's file), when it came from one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// What was done.
    #[serde(flatten)]
    pub action: FileAction,
}

/// What an import did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    /// The source as the commit names it.
    pub source: String,
    /// True when nothing was written.
    pub dry_run: bool,
    /// Conversations read (conversation exports).
    pub conversations: usize,
    /// Turns read (conversation exports).
    pub turns: usize,
    /// Turns left out because no time could be read for them (missing, or out of a date's
    /// range), and the conversations that lost every turn that way (conversation exports).
    pub turns_undated: usize,
    /// See [`ImportReport::turns_undated`].
    pub conversations_undated: usize,
    /// Log entries added.
    pub entries_added: usize,
    /// Log entries left out because they were there already.
    pub entries_present: usize,
    /// Every file written, or that would have been.
    pub files: Vec<ImportedFile>,
    /// Files of the source not imported, with why.
    pub skipped: Vec<(String, String)>,
}

/// A planned write of one file.
enum Plan {
    Write(String),
    Append(String, usize),
    Update(String),
    Same,
    Kept(String),
}

/// The writes of one import, by path, and what they came from.
#[derive(Default)]
struct Planner {
    plans: BTreeMap<String, (Option<String>, Plan)>,
    report: ImportReport,
    /// The kinds of the secrets the guard redacted from the planned writes.
    redacted: Vec<&'static str>,
}

/// `text`, bound for `path`, as the guard lets it be stored ([`crate::guard::content`]), and the
/// kinds of the secrets it redacted. A plan compares the file with the source's own text and
/// with this: a secret the first import redacted must not make the next one see a new entry
/// (or another note) in every line that held one. The whole text is guarded at once, as it is
/// written (a secret's keyword and its value can sit on two lines), and never against what the
/// file holds, so the same source always gives the same text.
fn guarded(cx: &Ctx, path: &str, text: &str) -> Result<(String, Vec<&'static str>), Error> {
    let g = crate::guard::content(cx, path, text, None)?;
    Ok((g.text.into_owned(), g.redacted))
}

/// Imports `source` into this memory as one change (`label` names the source in its
/// commit). With `dry_run`, nothing is written and the report says what would be.
pub(crate) fn import(
    cx: &Ctx,
    source: ImportSource<'_>,
    label: &str,
    dry_run: bool,
) -> Result<ImportReport, Error> {
    let mut p = Planner::default();
    p.report.source = label.to_string();
    p.report.dry_run = dry_run;
    match source {
        ImportSource::Chats { format, json } => plan_chats(cx, &mut p, format, json)?,
        ImportSource::Folder { layout, store } => plan_folder(cx, &mut p, layout, store)?,
    }
    let Planner {
        plans,
        mut report,
        redacted,
    } = p;
    let mut writes = Vec::new();
    for (path, (from, plan)) in plans {
        let action = match &plan {
            Plan::Write(_) => FileAction::Create,
            Plan::Append(_, n) => FileAction::Append { entries: *n },
            Plan::Update(_) => FileAction::Update,
            Plan::Same => FileAction::Unchanged,
            Plan::Kept(why) => FileAction::Kept { why: why.clone() },
        };
        report.files.push(ImportedFile {
            path: path.clone(),
            from,
            action,
        });
        writes.push((path, plan));
    }
    let changes = writes
        .iter()
        .any(|(_, p)| matches!(p, Plan::Write(_) | Plan::Append(..) | Plan::Update(_)));
    if dry_run || !changes {
        return Ok(report);
    }
    let summary = match report.turns {
        0 => format!("{} files", report.files.len()),
        n => format!("{n} turns of {} conversations", report.conversations),
    };
    // Every text written passed the guard when it was planned, before the change begins: a
    // refusal writes nothing.
    let tx = crate::change::begin(cx, "import", label)?
        .default_reason(format!("imported {summary} from {label}"))
        .redacted(&redacted);
    let mut notes_changed = false;
    let layout = cx.layout();
    for (path, plan) in &writes {
        let p = MemPath::parse_file(path)?;
        match plan {
            Plan::Write(text) | Plan::Update(text) => tx.write(&p, text.as_bytes())?,
            Plan::Append(text, _) => tx.append(&p, text.as_bytes())?,
            Plan::Same | Plan::Kept(_) => continue,
        }
        notes_changed |= layout.is_note_path(path);
    }
    if notes_changed && layout.index_generated() {
        crate::note_index::refresh(&tx)?;
    }
    tx.commit()?;
    Ok(report)
}

/// Plans a conversation export: each turn one entry of the export's writer's log for its
/// day, and one note per conversation.
fn plan_chats(cx: &Ctx, p: &mut Planner, format: ChatFormat, json: &str) -> Result<(), Error> {
    let chats = match format {
        ChatFormat::ChatGpt => chat::parse_chatgpt(json),
        ChatFormat::Claude => chat::parse_claude(json),
    }
    .map_err(Error::Invalid)?;
    let tz = cx.clock().now().time_zone().clone();
    let layout = cx.layout();
    let writer = format.writer();
    // Every turn of every conversation, in time order (stable: export order on ties).
    let mut lines: BTreeMap<String, Vec<(Timestamp, usize, String)>> = BTreeMap::new();
    let mut seq = 0usize;
    for c in &chats {
        p.report.conversations += 1;
        p.report.turns += c.turns.len();
        p.report.turns_undated += c.undated;
        if c.undated > 0 && c.turns.is_empty() {
            p.report.conversations_undated += 1;
        }
        let mut days = Vec::new();
        for t in &c.turns {
            let (day, entry) = chat::turn_entry(t, &tz);
            let path = layout.writer_log_path(day, writer);
            if !days.contains(&day) {
                days.push(day);
            }
            lines.entry(path).or_default().push((t.at, seq, entry));
            seq += 1;
        }
        if let Some(note) = conversation_note(&layout, format, c, &days) {
            let (path, text) = note;
            let plan = plan_note(cx, p, &path, text, true)?;
            p.plans.insert(path, (None, plan));
        }
    }
    if p.report.turns_undated > 0 {
        let r = &p.report;
        cx.warn(format!(
            "{} turn(s) left out, {} conversation(s) whole: no time could be read for them (`{}` missing or out of range); set their time in the export to import them",
            r.turns_undated,
            r.conversations_undated,
            format.time_field()
        ));
    }
    for (path, mut entries) in lines {
        entries.sort_by_key(|(at, n, _)| (*at, *n));
        let text: String = entries.into_iter().map(|(_, _, e)| e).collect();
        let plan = plan_log(cx, p, &path, &text)?;
        p.plans.insert(path, (None, plan));
    }
    Ok(())
}

/// Plans a host's folder: each file to where [`FolderLayout::import_target`] says.
fn plan_folder(
    cx: &Ctx,
    p: &mut Planner,
    from: LayoutName,
    source: &dyn Store,
) -> Result<(), Error> {
    let host = FolderLayout::of(from);
    let into = cx.layout();
    let files = match source.walk(&MemPath::root()) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    // Claude Code's index names each topic file: its line gives a note without
    // frontmatter a name and a description.
    let index_lines: HashMap<String, (String, String)> = match host.index {
        memdir_core::host::IndexKind::HandWritten => {
            read_text(Reader::of(source), &MemPath::parse_file(host.index_file)?)?
                .map(|t| {
                    memdir_core::host::index_links(&t)
                        .into_iter()
                        .map(|l| (l.target, (l.title, l.hook)))
                        .collect()
                })
                .unwrap_or_default()
        }
        _ => HashMap::new(),
    };
    // Several of the host's files can go to one log (`memory/2026-11-30.md` and
    // `memory/2026-11-30..md`, or two slugs with one spelling): their entries are planned
    // together, in the source's order, so no file's entries replace another's.
    let mut logs: BTreeMap<String, (Vec<String>, String)> = BTreeMap::new();
    for e in files.into_iter().filter(|e| e.kind == EntryKind::File) {
        let rel = e.path.as_str().to_string();
        let target = host.import_target(&rel, &into);
        if let Imported::Skip(why) = target {
            p.report.skipped.push((rel, why.to_string()));
            continue;
        }
        let Some(text) = read_text(Reader::of(source), &e.path)? else {
            continue;
        };
        let (path, plan) = match target {
            Imported::Skip(_) => continue,
            Imported::Log(path) => {
                let (rels, all) = logs.entry(path).or_default();
                if !all.is_empty() && !all.ends_with('\n') {
                    all.push('\n');
                }
                all.push_str(&text);
                rels.push(rel);
                continue;
            }
            Imported::Core => plan_core(cx, p, &host, &rel, text)?,
            Imported::Note(path) => {
                let stem = rel.trim_end_matches(".md");
                let text = match index_lines.get(&rel) {
                    Some((title, hook)) => {
                        let description = if hook.is_empty() { title } else { hook };
                        with_frontmatter(&text, stem, description).unwrap_or(text)
                    }
                    None => with_frontmatter(
                        &text,
                        &format!("{}/{stem}", from.as_str()),
                        &describe(from, &rel),
                    )
                    .filter(|_| from == LayoutName::OpenClaw && !rel.starts_with("memory/notes/"))
                    .unwrap_or(text),
                };
                let plan = plan_note(cx, p, &path, text, false)?;
                (path, plan)
            }
        };
        p.plans.insert(path, (Some(rel), plan));
    }
    for (path, (mut rels, text)) in logs {
        let plan = plan_log(cx, p, &path, &text)?;
        let from = (rels.len() == 1).then(|| rels.remove(0));
        p.plans.insert(path, (from, plan));
    }
    Ok(())
}

/// A host's core (OpenClaw's `MEMORY.md`) becomes this memory's core when that is empty
/// and it fits core's cap; otherwise it is kept as a note beside the others.
fn plan_core(
    cx: &Ctx,
    p: &mut Planner,
    host: &FolderLayout,
    rel: &str,
    text: String,
) -> Result<(String, Plan), Error> {
    let core = cx.layout().core;
    let current = read_text(cx.store(), &MemPath::parse_file(core)?)?;
    let current = current.unwrap_or_default();
    if current == text {
        return Ok((core.to_string(), Plan::Same));
    }
    if current.trim().is_empty() {
        let (clean, kinds) = guarded(cx, core, &text)?;
        if cx.config().core.cap().check(core, "", &clean).is_ok() {
            p.redacted.extend(kinds);
            return Ok((core.to_string(), Plan::Write(clean)));
        }
    } else if guarded(cx, core, &text).is_ok_and(|(clean, _)| clean == current) {
        return Ok((core.to_string(), Plan::Same));
    }
    let path = cx
        .layout()
        .in_notes(&format!("{}/{rel}", host.name.as_str()));
    let text = with_frontmatter(
        &text,
        &format!("{}/{}", host.name.as_str(), rel.trim_end_matches(".md")),
        &format!(
            "{}'s {rel}, kept as a note: this memory's core already holds other text, or it is over core's cap",
            shown(host.name)
        ),
    )
    .unwrap_or(text);
    let plan = plan_note(cx, p, &path, text, false)?;
    Ok((path, plan))
}

/// A note: created when absent; the same text is unchanged; a different file is kept,
/// unless `ours` (a note an earlier import made, brought up to date).
fn plan_note(
    cx: &Ctx,
    p: &mut Planner,
    path: &str,
    text: String,
    ours: bool,
) -> Result<Plan, Error> {
    let current = match read_text(cx.store(), &MemPath::parse_file(path)?)? {
        Some(current) if current == text => return Ok(Plan::Same),
        current => current,
    };
    // A file kept as it is needs no guard to pass: its refusal only means "not the same".
    let clean = match guarded(cx, path, &text) {
        Err(e) if current.is_none() || ours => return Err(e),
        Err(_) => None,
        Ok(g) => Some(g),
    };
    Ok(match (current, clean) {
        (Some(current), Some((clean, _))) if current == clean => Plan::Same,
        (None, Some((clean, kinds))) => {
            p.redacted.extend(kinds);
            Plan::Write(clean)
        }
        (Some(_), Some((clean, kinds))) if ours => {
            p.redacted.extend(kinds);
            Plan::Update(clean)
        }
        _ => Plan::Kept(format!(
            "{path} is already there with other text: compare them, then merge by hand or move yours away and import again"
        )),
    })
}

/// A log: the whole text when the file is new, else only the entries it does not have yet
/// (counted with repeats, so a turn said twice lands twice, and once on every re-run).
fn plan_log(cx: &Ctx, p: &mut Planner, path: &str, text: &str) -> Result<Plan, Error> {
    let file = MemPath::parse_file(path)?;
    let current = read_text(cx.store(), &file)?;
    let mut have: HashMap<String, usize> = HashMap::new();
    for e in parse_entries(current.as_deref().unwrap_or_default()) {
        *have.entry(e.text).or_default() += 1;
    }
    // Every entry there as the source has it (stored before the guard redacted, say).
    let raw = parse_entries(text);
    let mut left = have.clone();
    if !raw.is_empty() && raw.iter().all(|e| take(&mut left, &e.text)) {
        p.report.entries_present += raw.len();
        return Ok(Plan::Same);
    }
    let (text, mut kinds) = guarded(cx, path, text)?;
    let entries = parse_entries(&text);
    let total = entries.len();
    if current.as_deref().is_none_or(str::is_empty) {
        p.report.entries_added += total;
        if total == 0 {
            return Ok(Plan::Same);
        }
        p.redacted.extend(kinds);
        return Ok(Plan::Write(text));
    }
    let mut add = String::new();
    let mut added = 0;
    for e in entries {
        if !take(&mut have, &e.text) {
            add.push_str(&e.text);
            added += 1;
        }
    }
    // The change's reason names only the kinds redacted from what it appends.
    kinds.retain(|k| add.contains(&format!("[redacted:{k}:")));
    p.redacted.extend(kinds);
    p.report.entries_added += added;
    p.report.entries_present += total - added;
    Ok(if added == 0 {
        Plan::Same
    } else {
        Plan::Append(add, added)
    })
}

/// Takes one `entry` out of the entries a log holds (counted with repeats): whether it was there.
fn take(have: &mut HashMap<String, usize>, entry: &str) -> bool {
    match have.get_mut(entry) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

fn shown(layout: LayoutName) -> &'static str {
    match layout {
        LayoutName::ClaudeCode => "Claude Code",
        LayoutName::OpenClaw => "OpenClaw",
        LayoutName::Memdir => "memdir",
    }
}

/// A description for a host's file that has no frontmatter.
fn describe(from: LayoutName, rel: &str) -> String {
    let what = match rel {
        "AGENTS.md" => "how the agent works (operating instructions)",
        "SOUL.md" => "the agent's persona and boundaries",
        "USER.md" => "who the user is",
        "TOOLS.md" => "notes on the user's tools",
        "IDENTITY.md" => "the agent's name and style",
        "HEARTBEAT.md" => "the agent's periodic checklist",
        _ => "",
    };
    match what {
        "" => format!("{}'s {rel}, imported", shown(from)),
        w => format!("{}'s {rel}: {w}", shown(from)),
    }
}

/// The note of one conversation (none for a conversation without turns): its path and text.
fn conversation_note(
    layout: &FolderLayout,
    format: ChatFormat,
    c: &Conversation,
    days: &[jiff::civil::Date],
) -> Option<(String, String)> {
    let first = *days.iter().min()?;
    let last = *days.iter().max()?;
    let stem = format!(
        "{first}-{}-{}",
        chat::title_slug(&c.title),
        chat::id_tag(&c.id)
    );
    let name = format!("{}-{stem}", format.writer());
    let path = layout.note_path(&format!("chats/{}/{stem}", format.writer()));
    let mut sorted = days.to_vec();
    sorted.sort();
    let logs: Vec<String> = sorted
        .iter()
        .map(|d| layout.writer_log_path(*d, format.writer()))
        .collect();
    Some((
        path,
        chat::conversation_note(&name, format.shown(), c, first, last, &logs),
    ))
}
