//! `consolidate`: a slow, careful pass after the agent. It reads the logs since the last run,
//! core, the notes and state, and writes what it finds as proposals to change core (with the
//! evidence), proposals to mark a note superseded where another note says it replaces it
//! ([`memdir_core::replaces`]), and a dated report, `consolidation/YYYY-MM-DD.md`. It never
//! changes core, notes or state itself, and content from an external source is never proposed
//! for core.
//!
//! The last run's day and what it proposed are remembered in `.memdir/consolidate.json`, so a
//! second run over the same days proposes nothing new. An optional OpenAI-compatible chat model
//! is asked the same question; every item of its answer is checked
//! ([`memdir_core::consolidate::check_answer`]) and what fails is dropped and reported.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::notes::{read_text, resolver, scan};
use crate::provenance::{Actor, Source};
use crate::store::{EntryKind, StoreError};
use jiff::civil::Date;
use memdir_core::consolidate::{
    ArchiveCandidate, Checked, Dropped, Evidence, LogLine, Merge, ModelInputs, NoteInfo, Settings,
    add_line, archive_candidates, check_answer, jaccard, key_of, log_lines, near_duplicates,
    parse_answer, prompt, recurring_statements, replace_line, report_path, stale_core_lines,
    term_set,
};
use memdir_core::log::date_of_file_name;
use memdir_core::path::MemPath;
use memdir_core::replaces::replaced_notes;
use memdir_core::state::split_older_than;
use memdir_core::tokenize::Tokenizer;
pub use memdir_embed::chat::{ChatError, ChatModel};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};

/// The writer consolidation's proposals and commits are recorded under.
pub const WRITER: &str = "consolidate";

/// Where the last run is remembered, under `.memdir/`.
const STATE_META: &str = "consolidate.json";

/// How many finding keys are remembered (the oldest are forgotten first).
const REMEMBERED: usize = 5000;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Read logs from this day on, instead of from the last run.
    pub since: Option<Date>,
    /// Find, but write nothing (no proposals, no report, no memory of the run).
    pub dry_run: bool,
    /// Also ask this model.
    pub model: Option<ChatModel>,
}

/// One proposal made (or, on a dry run, that would be made).
#[derive(Debug, Clone, Serialize)]
pub struct Proposed {
    /// The proposal's id; `None` on a dry run or when core's cap refused it.
    pub id: Option<String>,
    /// `core-fact`, `stale-core-line`, `model-addition`, `model-contradiction` (proposals to
    /// change core) or `note-superseded` (a proposal to mark a note superseded).
    pub kind: String,
    /// What it proposes, in one line.
    pub summary: String,
    /// The lines that support it, `file:line: text`.
    pub evidence: Vec<String>,
}

/// What the model path did.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRun {
    /// The model asked.
    pub model: String,
    /// Log lines shown to it.
    pub lines_shown: usize,
    /// Items that passed every check.
    pub accepted: usize,
    /// Items dropped, with the check each failed.
    pub dropped: Vec<Dropped>,
}

/// What a run found and did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The first day of logs read as new (`None`: every log).
    pub since: Option<String>,
    /// Today.
    pub until: String,
    /// Log files read (new ones and the window before them).
    pub files_read: usize,
    /// Log entries read as new.
    pub new_lines: usize,
    /// Proposals to change core.
    pub proposals: Vec<Proposed>,
    /// Findings left out because an earlier run proposed them.
    pub already_proposed: usize,
    /// Findings that would take core over its cap, with why.
    pub over_cap: Vec<String>,
    /// Notes that look like one (reported when the index is near its cap).
    pub merges: Vec<Merge>,
    /// Notes that could leave the index (reported when the index is near its cap).
    pub archive: Vec<ArchiveCandidate>,
    /// The index's use of its cap (1.0 = full).
    pub index_usage: f64,
    /// `state.md` entries old enough for `memdir sweep` to archive.
    pub state_to_archive: Vec<String>,
    /// The model path, when configured.
    pub model: Option<ModelRun>,
    /// The report file written (`None` on a dry run).
    pub report: Option<String>,
    /// True on a dry run.
    pub dry_run: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RunState {
    /// `YYYY-MM-DD`.
    last_run: Option<String>,
    #[serde(default)]
    proposed: Vec<String>,
}

/// A finding that becomes a proposal to change core.
struct Finding {
    kind: &'static str,
    summary: String,
    reason: String,
    new_core: Option<String>,
    /// For `note-superseded`: the notes, instead of a new core.
    supersede: Option<Supersede>,
    evidence: Vec<Evidence>,
    key: String,
}

/// A note to propose superseded: its path and text now, the note replacing it and the link its
/// `superseded_by` would name.
struct Supersede {
    old: String,
    text: String,
    new: String,
    link: String,
}

fn read_state(mem: &Ctx) -> Result<RunState, Error> {
    match mem.store().read_meta(STATE_META)? {
        None => Ok(RunState::default()),
        Some(b) => serde_json::from_slice(&b).map_err(|e| {
            Error::Invalid(format!(
                "bad .memdir/{STATE_META} ({e}): delete it to consolidate from the start, or pass --since"
            ))
        }),
    }
}

fn days_of(ttl: &str) -> Result<i64, Error> {
    let ms = memdir_core::duration::parse_ttl(ttl).map_err(Error::Invalid)?;
    Ok((ms / 86_400_000).max(1))
}

fn minus_days(d: Date, days: i64) -> Date {
    d.checked_sub(jiff::Span::new().days(days))
        .unwrap_or(Date::MIN)
}

/// Runs consolidation: see the module documentation.
pub(crate) fn consolidate(cx: &Ctx, opts: &Options) -> Result<Report, Error> {
    let mem = cx.with_actor(Actor {
        writer: WRITER.to_string(),
        source: Source::Agent,
    });
    consolidate_as(&mem, opts)
}

fn consolidate_as(cx: &Ctx, opts: &Options) -> Result<Report, Error> {
    let cfg = &cx.config().consolidate;
    let tok = Tokenizer::new();
    let now = cx.clock().now();
    let today = now.date();
    let mut state = read_state(cx)?;
    let last_run = match &state.last_run {
        None => None,
        Some(d) => Some(d.parse::<Date>().map_err(|_| {
            Error::Invalid(format!(
                "bad .memdir/{STATE_META}: last_run {d:?} is not a day: delete it to consolidate from the start, or pass --since"
            ))
        })?),
    };
    let since = opts.since.or(last_run);
    // Recurrence is counted over a window that reaches back before the new days.
    let window_from = match since {
        Some(s) => Some(minus_days(s, days_of(&cfg.window)?)),
        None => None,
    };

    // The logs: every file of the window, in date order, then path order.
    let store = cx.store();
    let mut files: Vec<(Date, MemPath)> = match store.list(&MemPath::parse(cx.layout().log_dir)?) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    }
    .into_iter()
    .filter(|e| e.kind == EntryKind::File)
    .filter_map(|e| {
        let d = e.path.file_name().and_then(date_of_file_name)?;
        Some((d, e.path))
    })
    .filter(|(d, _)| window_from.is_none_or(|w| *d >= w) && *d <= today)
    .collect();
    files.sort();
    let mut lines: Vec<LogLine> = Vec::new();
    for (d, p) in &files {
        if let Some(text) = read_text(store, p)? {
            lines.extend(log_lines(p.as_str(), *d, &text));
        }
    }
    let is_new = |l: &LogLine| since.is_none_or(|s| l.date >= s);
    let new: Vec<LogLine> = lines.iter().filter(|l| is_new(l)).cloned().collect();
    let new_cites: HashSet<String> = new.iter().map(LogLine::cite).collect();
    let core = read_text(store, &MemPath::parse(cx.layout().core)?)?.unwrap_or_default();

    // Deterministic findings.
    let settings = Settings {
        min_days: cfg.min_days,
        ..Settings::default()
    };
    let mut findings = Vec::new();
    for f in recurring_statements(&lines, &core, &settings, &tok) {
        // Said again in the new days: otherwise an earlier run saw it all.
        if !f.evidence.iter().any(|e| new_cites.contains(&e.cite)) {
            continue;
        }
        findings.push(Finding {
            kind: "core-fact",
            summary: format!("add \"{}\" (said on {} days)", f.text, f.days),
            reason: format!("the user said it on {} days: {}", f.days, f.text),
            new_core: Some(add_line(&core, &f.text)),
            supersede: None,
            evidence: f.evidence,
            key: format!("fact:{}", f.key),
        });
    }
    for s in stale_core_lines(&core, &new, &tok) {
        findings.push(Finding {
            kind: "stale-core-line",
            summary: format!(
                "core.md:{} may be out of date (\"{}\" in a later log): replace it",
                s.core_line, s.change_word
            ),
            reason: format!(
                "possibly stale: core.md:{} vs {}",
                s.core_line, s.evidence[1].cite
            ),
            new_core: replace_line(&core, s.core_line, &s.replacement),
            supersede: None,
            evidence: s.evidence,
            key: format!("stale:{}", s.key),
        });
    }

    // Notes and the index.
    let files_scanned = scan(store, &cx.layout())?;
    let resolve = resolver(&files_scanned);
    let mut linked: BTreeSet<String> = BTreeSet::new();
    for f in &files_scanned {
        for l in memdir_core::links::extract(&f.text) {
            if let Some(to) = resolve.resolve(&l.target)
                && to != f.path.as_str()
            {
                linked.insert(to.to_string());
            }
        }
    }
    let mut notes = Vec::new();
    for f in files_scanned.iter().filter(|f| f.is_note) {
        let modified = store
            .stat(&f.path)?
            .filter(|e| e.modified_ms > 0)
            .and_then(|e| jiff::Timestamp::from_millisecond(e.modified_ms).ok())
            .map(|t| t.to_zoned_datetime(now.time_zone().clone()).date());
        notes.push(NoteInfo {
            path: f.path.to_string(),
            name: f.note.meta.name.clone(),
            description: f.note.meta.description.clone(),
            expires: f.note.meta.expires,
            modified,
            linked: linked.contains(f.path.as_str()),
        });
    }
    // Notes that another note says it replaces: proposals to mark them superseded.
    let parsed: Vec<(&str, &memdir_core::note::Note)> = files_scanned
        .iter()
        .filter(|f| f.is_note)
        .map(|f| (f.path.as_str(), &f.note))
        .collect();
    for x in replaced_notes(&parsed, &resolve, &tok) {
        let find = |p: &str| files_scanned.iter().find(|f| f.path.as_str() == p);
        let (Some(old), Some(new)) = (find(&x.old), find(&x.new)) else {
            continue;
        };
        findings.push(Finding {
            kind: "note-superseded",
            summary: format!(
                "{} is superseded by {} ({} says so): mark it",
                x.old, x.new, x.evidence.cite
            ),
            reason: format!("{} replaces {}: {}", x.new, x.old, x.evidence.cite),
            new_core: None,
            supersede: Some(Supersede {
                old: x.old.clone(),
                text: old.text.clone(),
                new: x.new.clone(),
                link: crate::notes::successor_link(new, &resolve),
            }),
            key: format!("superseded:{}|{}", x.old, x.new),
            evidence: vec![x.evidence],
        });
    }
    let index = read_text(store, &MemPath::parse(cx.layout().index_file)?)?.unwrap_or_default();
    let index_usage = cx.config().index.cap().usage(&index);
    let crowded = index_usage >= crate::note_index::GROWTH_WARNING;
    let (mut merges, archive) = if crowded {
        let untouched = minus_days(today, days_of(&cfg.archive_untouched)?);
        (
            near_duplicates(&notes, &tok),
            archive_candidates(&notes, today, untouched),
        )
    } else {
        (Vec::new(), Vec::new())
    };

    // State lines old enough to archive.
    let state_text = read_text(store, &MemPath::parse(cx.layout().state)?)?.unwrap_or_default();
    let cutoff = minus_days(today, days_of(&cx.config().state.archive_after)?);
    let state_to_archive: Vec<String> = split_older_than(&state_text, cutoff)
        .moved
        .lines()
        .filter(|l| l.starts_with("- "))
        .map(str::to_string)
        .collect();

    // The model, when configured.
    let model = match &opts.model {
        None => None,
        Some(m) => {
            let paths: Vec<String> = notes
                .iter()
                .map(|n| match &n.description {
                    Some(d) => format!("{} — {d}", n.path),
                    None => n.path.clone(),
                })
                .collect();
            let (text, shown) = prompt(&core, &new, &paths, cfg.max_prompt_bytes);
            let answer = ask(m, &text)?;
            let note_paths: Vec<String> = notes.iter().map(|n| n.path.clone()).collect();
            let run = match parse_answer(&answer) {
                Err(reason) => ModelRun {
                    model: m.model.clone(),
                    lines_shown: shown.len(),
                    accepted: 0,
                    dropped: vec![Dropped {
                        item: "the whole answer".to_string(),
                        reason,
                    }],
                },
                Ok(answer) => {
                    let inputs = ModelInputs {
                        core: &core,
                        lines: &shown,
                        notes: &note_paths,
                        cap: cx.config().core.cap(),
                    };
                    let (ok, dropped) = check_answer(&answer, &inputs, &tok);
                    let accepted = ok.len();
                    for item in ok {
                        match item {
                            Checked::Addition { text, evidence } => findings.push(Finding {
                                kind: "model-addition",
                                summary: format!("add \"{text}\" (model)"),
                                reason: format!("the model read it in the logs: {text}"),
                                new_core: Some(add_line(&core, &text)),
                                supersede: None,
                                key: format!("fact:{}", key_of(&term_set(&tok, &text))),
                                evidence,
                            }),
                            Checked::Contradiction {
                                core_line,
                                replacement,
                                evidence,
                            } => findings.push(Finding {
                                kind: "model-contradiction",
                                summary: format!(
                                    "core.md:{core_line} contradicted by the logs (model): replace it"
                                ),
                                reason: format!(
                                    "possibly stale: core.md:{core_line} vs {} (model)",
                                    evidence.get(1).map(|e| e.cite.as_str()).unwrap_or("")
                                ),
                                new_core: replace_line(&core, core_line, &replacement),
                                supersede: None,
                                key: format!(
                                    "stale:{}|{}",
                                    evidence[0].text.trim(),
                                    evidence.get(1).map(|e| e.cite.as_str()).unwrap_or("")
                                ),
                                evidence,
                            }),
                            Checked::Merge(m) => {
                                if !merges.iter().any(|x| x.notes == m.notes) {
                                    merges.push(m);
                                }
                            }
                        }
                    }
                    ModelRun {
                        model: m.model.clone(),
                        lines_shown: shown.len(),
                        accepted,
                        dropped,
                    }
                }
            };
            Some(run)
        }
    };

    // Under the history's lock, read what earlier runs proposed again (a run that overlapped
    // this one may have finished meanwhile), then leave that out, and duplicates in this run.
    let tx = if opts.dry_run {
        None
    } else {
        let tx = crate::change::begin(cx, "consolidate", &report_path(today))?;
        state.proposed = read_state(cx)?.proposed;
        Some(tx)
    };
    let mut already_proposed = 0;
    let mut keep: Vec<Finding> = Vec::new();
    for f in findings {
        if state.proposed.iter().any(|k| same_finding(k, &f.key)) {
            already_proposed += 1;
            continue;
        }
        if keep.iter().any(|k| same_finding(&k.key, &f.key)) {
            continue;
        }
        keep.push(f);
    }
    let mut proposals = Vec::new();
    let mut over_cap = Vec::new();
    for f in keep {
        if let Some(s) = &f.supersede {
            let evidence: Vec<String> = f.evidence.iter().map(ToString::to_string).collect();
            let id = match &tx {
                None => None,
                Some(tx) => {
                    let id = crate::proposals::write_superseded_proposal(
                        tx,
                        &crate::guard::reason(cx, &f.reason),
                        (&s.old, &s.text),
                        (&s.new, &s.link),
                        evidence.clone(),
                    )?;
                    state.proposed.push(f.key.clone());
                    Some(id)
                }
            };
            proposals.push(Proposed {
                id,
                kind: f.kind.to_string(),
                summary: f.summary,
                evidence,
            });
            continue;
        }
        let Some(new_core) = &f.new_core else {
            continue;
        };
        if let Err(e) = cx
            .config()
            .core
            .cap()
            .check(cx.layout().core, &core, new_core)
        {
            over_cap.push(format!("{}: {e}", f.summary));
            continue;
        }
        let evidence: Vec<String> = f.evidence.iter().map(ToString::to_string).collect();
        let id = match &tx {
            None => None,
            Some(tx) => {
                let id = crate::proposals::write_proposal_with(
                    tx,
                    &crate::guard::reason(cx, &f.reason),
                    &core,
                    new_core,
                    evidence.clone(),
                )?;
                state.proposed.push(f.key.clone());
                Some(id)
            }
        };
        proposals.push(Proposed {
            id,
            kind: f.kind.to_string(),
            summary: f.summary,
            evidence,
        });
    }

    let mut report = Report {
        since: since.map(|d| d.to_string()),
        until: today.to_string(),
        files_read: files.len(),
        new_lines: new.len(),
        proposals,
        already_proposed,
        over_cap,
        merges,
        archive,
        index_usage,
        state_to_archive,
        model,
        report: None,
        dry_run: opts.dry_run,
    };
    if let Some(tx) = tx {
        let path = report_path(today);
        let p = MemPath::parse_file(&path)?;
        let mut text = String::new();
        if store.stat(&p)?.is_none() {
            text.push_str(&format!("# Consolidation {today}\n"));
        }
        text.push_str(&render(&report, &now.strftime("%H:%M").to_string()));
        tx.append(&p, text.as_bytes())?;
        report.report = Some(path);
        let skip = state.proposed.len().saturating_sub(REMEMBERED);
        state.proposed.drain(..skip);
        state.last_run = Some(today.to_string());
        let bytes = serde_json::to_vec_pretty(&state)
            .map_err(|e| Error::Invalid(format!("cannot record the run: {e}")))?;
        tx.write_meta(STATE_META, &bytes)?;
        tx.commit()?;
    }
    Ok(report)
}

/// Two finding keys name the same finding: stale keys when equal, fact keys when their terms
/// overlap as much as two wordings of one statement do.
fn same_finding(a: &str, b: &str) -> bool {
    match (a.strip_prefix("fact:"), b.strip_prefix("fact:")) {
        (Some(x), Some(y)) => {
            let x: BTreeSet<String> = x.split(' ').map(str::to_string).collect();
            let y: BTreeSet<String> = y.split(' ').map(str::to_string).collect();
            jaccard(&x, &y) >= Settings::default().same_statement
        }
        _ => a == b,
    }
}

impl Report {
    /// The report's section for this run, in Markdown (`time` is the run's `HH:MM`).
    pub fn render(&self, time: &str) -> String {
        render(self, time)
    }
}

fn render(r: &Report, time: &str) -> String {
    let mut s = format!(
        "\n## Run at {time}\n\nLogs since {} to {}: {} file(s) read, {} new entr{}.\n",
        r.since.as_deref().unwrap_or("the first"),
        r.until,
        r.files_read,
        r.new_lines,
        if r.new_lines == 1 { "y" } else { "ies" }
    );
    s.push_str("\n### Proposed for core and notes\n\n");
    if r.proposals.is_empty() {
        s.push_str("Nothing new.\n");
    }
    for p in &r.proposals {
        s.push_str(&format!(
            "- {} ({}): {}\n",
            p.id.as_deref().unwrap_or("not written"),
            p.kind,
            p.summary
        ));
        for e in &p.evidence {
            s.push_str(&format!("  - {e}\n"));
        }
    }
    if r.already_proposed > 0 {
        s.push_str(&format!(
            "\n{} finding(s) left out: an earlier run proposed them.\n",
            r.already_proposed
        ));
    }
    for o in &r.over_cap {
        s.push_str(&format!("\nNot proposed, core is full: {o}\n"));
    }
    s.push_str(&format!(
        "\n### Index\n\nMEMORY.md is at {:.0}% of its cap.\n",
        (r.index_usage * 100.0).floor()
    ));
    for m in &r.merges {
        s.push_str(&format!("- merge {}: {}\n", m.notes.join(" and "), m.why));
    }
    for a in &r.archive {
        s.push_str(&format!(
            "- archive {}: {} (`memdir mv {} archive/{}`)\n",
            a.path, a.why, a.path, a.path
        ));
    }
    if !r.state_to_archive.is_empty() {
        s.push_str(&format!(
            "\n### State\n\n{} state.md entr{} old enough to archive (`memdir sweep` moves them):\n",
            r.state_to_archive.len(),
            if r.state_to_archive.len() == 1 {
                "y is"
            } else {
                "ies are"
            }
        ));
        for l in &r.state_to_archive {
            s.push_str(&format!("  {l}\n"));
        }
    }
    if let Some(m) = &r.model {
        s.push_str(&format!(
            "\n### Language model\n\nAsked {} about {} log line(s): {} item(s) passed the checks, {} dropped.\n",
            m.model,
            m.lines_shown,
            m.accepted,
            m.dropped.len()
        ));
        for d in &m.dropped {
            s.push_str(&format!("- dropped {}: {}\n", d.item, d.reason));
        }
    }
    s
}

/// Sends the prompt to the chat endpoint and returns the answer's text, worded for
/// `[consolidate]`.
fn ask(m: &ChatModel, prompt: &str) -> Result<String, Error> {
    m.ask(prompt).map_err(|e| match e {
        ChatError::BadUrl => Error::Invalid(format!(
            "bad .memdir/config.toml: consolidate.url {:?} must start with http:// or https://",
            m.url
        )),
        ChatError::Failed(why) => Error::Model(format!(
            "the consolidation model at {} failed: {why}; check [consolidate] url and model, or set provider = \"none\"",
            m.url
        )),
        ChatError::NotEnabled => Error::Invalid(
            "the consolidation model is not enabled in this build: set [consolidate] provider = \"none\""
                .to_string(),
        ),
    })
}
