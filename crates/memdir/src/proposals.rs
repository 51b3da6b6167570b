//! The gate on core memory: who may write it directly, proposals for everyone else, and a guard
//! against automated rewrites that drop much of it.
//!
//! A proposal is a reviewable Markdown file, `proposals/<id>.md`: a small header, the diff, and
//! the full proposed content in a fenced block. `memdir review accept ID` applies it (if core has
//! not changed since) and `reject` drops it; either way the file moves to `archive/proposals/`.
//!
//! A proposal of kind [`NOTE_SUPERSEDED`] (made by `memdir consolidate`) proposes instead that
//! one note is superseded by another: it holds the two notes and the diff of the old note's
//! frontmatter, and accepting it marks the note through [`crate::notes::supersede`], the
//! function `memdir note supersede` runs, in the change that files the proposal away.

use crate::change::Change;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::provenance::{Actor, Source};
use crate::store::{EntryKind, StoreError, Version};
use memdir_core::path::MemPath;
use memdir_core::state::ARCHIVE_DIR;
use serde::Serialize;

/// The folder that holds proposals.
pub const PROPOSALS_DIR: &str = "proposals";

/// The kind of a proposal to change core (a file without a `kind` key is one).
pub const CORE: &str = "core";

/// The kind of a proposal that a note is superseded by another.
pub const NOTE_SUPERSEDED: &str = "note-superseded";

/// A pending change for a person to review: to core memory, or a note superseded.
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    /// Its id (the file stem).
    pub id: String,
    /// Its file.
    pub path: String,
    /// [`CORE`] or [`NOTE_SUPERSEDED`].
    pub kind: String,
    /// The file it changes: core's, or the note to mark superseded.
    pub target: String,
    /// For [`NOTE_SUPERSEDED`]: the note that replaces `target`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// Who proposed it.
    pub writer: String,
    /// Why, when given.
    pub reason: String,
    /// When, RFC 3339.
    pub created: String,
    /// The target's version the proposal was made against.
    pub base: String,
    /// The unified diff.
    pub diff: String,
    /// The lines that support the change (`file:line: text`), so a person can check it in one
    /// look; empty for a change an agent asked for.
    pub evidence: Vec<String>,
    /// The full proposed content of core.md (empty for [`NOTE_SUPERSEDED`]).
    #[serde(skip)]
    pub content: String,
}

/// The error returned when a change became a proposal.
pub(crate) fn proposed<T>(core_file: &str, id: String) -> Outcome<T> {
    Outcome::Proposed {
        message: format!(
            "{core_file} is gated: your change was saved as proposal {id} (proposals/{id}.md) for the user to review with `memdir review`"
        ),
        id,
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Renders a proposal file.
fn render(p: &Proposal, core_file: &str) -> String {
    if p.kind == NOTE_SUPERSEDED {
        return render_superseded(p);
    }
    let longest = p
        .content
        .lines()
        .map(|l| l.len() - l.trim_start_matches('`').len())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(3) + 1);
    let evidence = if p.evidence.is_empty() {
        String::new()
    } else {
        let lines: String = p
            .evidence
            .iter()
            .map(|e| format!("- {}\n", one_line(e)))
            .collect();
        format!("## Evidence\n\n{lines}\n")
    };
    format!(
        "---\nid: {}\ntarget: {core_file}\nwriter: {}\nreason: {}\ncreated: {}\nbase: {}\n---\n\
         # Proposed change to {core_file}\n\nReview with `memdir review accept {}` or `memdir review reject {}`.\n\n\
         {evidence}## Diff\n\n```diff\n{}```\n\n## Proposed content\n\n{fence}markdown\n{}{}{fence}\n",
        p.id,
        p.writer,
        one_line(&p.reason),
        p.created,
        p.base,
        p.id,
        p.id,
        p.diff,
        p.content,
        if p.content.ends_with('\n') || p.content.is_empty() {
            ""
        } else {
            "\n"
        },
    )
}

/// Renders a proposal that a note is superseded: no proposed content, since accepting it
/// rewrites the note as it is then.
fn render_superseded(p: &Proposal) -> String {
    let evidence: String = p
        .evidence
        .iter()
        .map(|e| format!("- {}\n", one_line(e)))
        .collect();
    let successor = p.superseded_by.as_deref().unwrap_or_default();
    format!(
        "---\nid: {}\nkind: {NOTE_SUPERSEDED}\ntarget: {}\nsuperseded_by: {successor}\nwriter: {}\nreason: {}\ncreated: {}\nbase: {}\n---\n\
         # Proposed: {} is superseded by {successor}\n\nReview with `memdir review accept {}` or `memdir review reject {}`.\n\n\
         ## Evidence\n\n{evidence}\n## Diff\n\n```diff\n{}```\n",
        p.id,
        p.target,
        p.writer,
        one_line(&p.reason),
        p.created,
        p.base,
        p.target,
        p.id,
        p.id,
        p.diff,
    )
}

/// Parses a proposal file; `None` when it is not one.
fn parse(id: &str, path: &str, text: &str) -> Option<Proposal> {
    let rest = text.strip_prefix("---\n")?;
    let (head, body) = rest.split_once("\n---\n")?;
    let field = |k: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(": ")))
            .unwrap_or_default()
            .to_string()
    };
    let kind = match field("kind") {
        k if k.is_empty() => CORE.to_string(),
        k => k,
    };
    // A proposal of another kind holds no proposed content; a core one must.
    let content = if kind == CORE {
        let after = body.split_once("\n## Proposed content\n\n")?.1;
        let (fence_line, content) = after.split_once('\n')?;
        let fence = fence_line.strip_suffix("markdown")?;
        let end = content
            .rfind(&format!("{fence}\n"))
            .or_else(|| content.rfind(fence))?;
        content[..end].to_string()
    } else {
        String::new()
    };
    let diff = body
        .split_once("## Diff\n\n```diff\n")
        .and_then(|(_, d)| d.split_once("```\n"))
        .map(|(d, _)| d.to_string())
        .unwrap_or_default();
    // Evidence comes before the diff; the proposed content after it may hold anything.
    let evidence = body
        .split_once("## Diff\n\n```diff\n")
        .and_then(|(head, _)| head.split_once("\n## Evidence\n\n"))
        .map(|(_, rest)| {
            rest.lines()
                .map_while(|l| l.strip_prefix("- "))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let successor = field("superseded_by");
    Some(Proposal {
        id: id.to_string(),
        path: path.to_string(),
        target: field("target"),
        superseded_by: (!successor.is_empty()).then_some(successor),
        kind,
        writer: field("writer"),
        reason: field("reason"),
        created: field("created"),
        base: field("base"),
        diff,
        evidence,
        content,
    })
}

/// Lines of `old` missing from `new`, counted with multiplicity.
fn dropped_lines(old: &str, new: &str) -> usize {
    let mut pool: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in new.lines() {
        *pool.entry(l.trim()).or_default() += 1;
    }
    old.lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| match pool.get_mut(l.trim()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .count()
}

/// Decides a change to core: `Ok(true)` to write it, `Ok(false)` to turn it into a proposal,
/// or an error when it is refused outright.
pub(crate) fn gate_core(cx: &Ctx, current: &str, new: &str) -> Result<bool, Error> {
    let source = cx.actor().source;
    if source == Source::External {
        return Err(Error::Invalid(
            "core memory never takes external content: save it as a note instead, e.g. `memdir --source external note new NAME -d DESCRIPTION TEXT` (it is labelled source: external and shown fenced)".into(),
        ));
    }
    if !cx
        .config()
        .policy
        .core_writers
        .iter()
        .any(|w| w == source.as_str())
    {
        return Ok(false);
    }
    let total = current.lines().filter(|l| !l.trim().is_empty()).count();
    let dropped = dropped_lines(current, new);
    let share = cx.config().policy.max_core_drop;
    if source != Source::User && !cx.forced() && total > 0 && dropped as f64 > share * total as f64
    {
        return Err(Error::Invalid(format!(
            "this rewrite of core.md drops {dropped} of its {total} lines (over {:.0}%): edit single lines instead, or force it (the old version stays in git)",
            share * 100.0
        )));
    }
    Ok(true)
}

/// Moving or deleting core.md is for the user only.
pub(crate) fn refuse_core_move_unless_user(cx: &Ctx) -> Result<(), Error> {
    if cx.actor().source != Source::User {
        return Err(Error::Invalid(format!(
            "only the user may move or delete {}: edit it instead, or ask the user",
            cx.core_file()
        )));
    }
    Ok(())
}

/// Saves a proposal to change core from `current` to `new`; returns its id.
pub(crate) fn write_proposal(tx: &Change<'_>, current: &str, new: &str) -> Result<String, Error> {
    let reason = tx.cx().reason().unwrap_or_default().to_string();
    write_proposal_with(tx, &reason, current, new, Vec::new())
}

/// Saves a proposal, giving `reason`, that cites `evidence` (`file:line: text` each); returns
/// its id.
pub(crate) fn write_proposal_with(
    tx: &Change<'_>,
    reason: &str,
    current: &str,
    new: &str,
    evidence: Vec<String>,
) -> Result<String, Error> {
    let cx = tx.cx();
    let writer = &cx.actor().writer;
    let base = Version::of(current.as_bytes()).to_string();
    let now = cx.clock().now();
    let id = new_id(cx, &now, new.as_bytes());
    let diff = similar::TextDiff::from_lines(current, new)
        .unified_diff()
        .context_radius(2)
        .header(cx.core_file(), cx.core_file())
        .to_string();
    let p = Proposal {
        id: id.clone(),
        path: format!("{PROPOSALS_DIR}/{id}.md"),
        kind: CORE.to_string(),
        target: cx.core_file().to_string(),
        superseded_by: None,
        writer: writer.clone(),
        reason: reason.to_string(),
        created: cx.clock().local(now.timestamp()),
        base,
        diff,
        evidence,
        content: new.to_string(),
    };
    tx.write(
        &MemPath::parse_file(&p.path)?,
        render(&p, cx.core_file()).as_bytes(),
    )?;
    Ok(id)
}

/// A new proposal's id: `YYYYMMDD-HHMMSS-<writer>-<6 hex of what it proposes>`.
fn new_id(cx: &Ctx, now: &jiff::ZonedDateTime, proposed: &[u8]) -> String {
    let tag: String = Version::of(proposed).as_str().chars().take(6).collect();
    format!(
        "{}-{}-{tag}",
        now.strftime("%Y%m%d-%H%M%S"),
        slug(&cx.actor().writer)
    )
}

/// Saves a proposal that the note `old` is superseded by the note `new` (paths), giving
/// `reason`, citing `evidence`, with `text` the old note as it is now and `link` what its
/// `superseded_by` would name; returns its id.
pub(crate) fn write_superseded_proposal(
    tx: &Change<'_>,
    reason: &str,
    (old, text): (&str, &str),
    (new, link): (&str, &str),
    evidence: Vec<String>,
) -> Result<String, Error> {
    let cx = tx.cx();
    let updated = memdir_core::note::mark_superseded(text, link);
    let now = cx.clock().now();
    let id = new_id(cx, &now, format!("{old}\n{new}").as_bytes());
    let diff = similar::TextDiff::from_lines(text, &updated)
        .unified_diff()
        .context_radius(2)
        .header(old, old)
        .to_string();
    let p = Proposal {
        id: id.clone(),
        path: format!("{PROPOSALS_DIR}/{id}.md"),
        kind: NOTE_SUPERSEDED.to_string(),
        target: old.to_string(),
        superseded_by: Some(new.to_string()),
        writer: cx.actor().writer.clone(),
        reason: reason.to_string(),
        created: cx.clock().local(now.timestamp()),
        base: Version::of(text.as_bytes()).to_string(),
        diff,
        evidence,
        content: String::new(),
    };
    tx.write(
        &MemPath::parse_file(&p.path)?,
        render(&p, cx.core_file()).as_bytes(),
    )?;
    Ok(id)
}

/// Pending proposals, oldest first.
pub(crate) fn proposals(cx: &Ctx) -> Result<Vec<Proposal>, Error> {
    let dir = MemPath::parse(PROPOSALS_DIR)?;
    let entries = match cx.store().list(&dir) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for e in entries.into_iter().filter(|e| e.kind == EntryKind::File) {
        let Some(id) = e.path.file_name().and_then(|n| n.strip_suffix(".md")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cx.store().read(&e.path)?).into_owned();
        if let Some(p) = parse(id, e.path.as_str(), &text) {
            out.push(p);
        }
    }
    Ok(out)
}

fn proposal(cx: &Ctx, id: &str) -> Result<Proposal, Error> {
    proposals(cx)?
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no proposal {id:?}: list them with `memdir review`"
            ))
        })
}

/// Applies a proposal as the user would, then deletes it. A change to core is refused if core
/// changed since; a note superseded is marked as `memdir note supersede` marks it.
pub(crate) fn accept_proposal(cx: &Ctx, id: &str) -> Result<Proposal, Error> {
    let p = proposal(cx, id)?;
    let reason = match p.reason.trim() {
        "" => format!("accept proposal {id} by {}", p.writer),
        r => format!("accept proposal {id} by {}: {r}", p.writer),
    };
    let person = cx
        .with_actor(Actor {
            writer: cx.actor().writer.clone(),
            source: Source::User,
        })
        .with_reason(Some(&reason));
    match p.kind.as_str() {
        CORE => {}
        NOTE_SUPERSEDED => {
            let Some(new) = p.superseded_by.as_deref() else {
                return Err(Error::Invalid(format!(
                    "proposal {id} names no note in superseded_by: reject it"
                )));
            };
            let file_away = |tx: &Change<'_>| file_away(tx, &p);
            crate::notes::supersede(
                &person,
                &p.target,
                new,
                Some(crate::notes::Also {
                    op: "review accept",
                    path: &p.path,
                    work: &file_away,
                }),
            )?;
            return Ok(p);
        }
        other => {
            return Err(Error::Invalid(format!(
                "proposal {id} is of kind {other:?}, which this memdir does not know: reject it, or upgrade memdir"
            )));
        }
    }
    let user = person.with_base(Some(&p.base));
    let core_file = cx.core_file();
    let tx = crate::change::begin(&user, "review accept", core_file)?;
    let core = MemPath::parse_file(core_file)?;
    let current = match cx.store().read(&core) {
        Ok(b) => b,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    if Version::of(&current).as_str() != p.base {
        return Err(Error::Conflict(format!(
            "{core_file} changed since proposal {id} was made: reject it and propose again"
        )));
    }
    cx.config()
        .core
        .cap()
        .check(core_file, &String::from_utf8_lossy(&current), &p.content)?;
    tx.write(&core, p.content.as_bytes())?;
    file_away(&tx, &p)?;
    tx.commit()?;
    Ok(p)
}

/// Rejects a proposal: it moves to `archive/proposals/`, like an accepted one.
pub(crate) fn reject_proposal(cx: &Ctx, id: &str) -> Result<Proposal, Error> {
    let p = proposal(cx, id)?;
    let tx = crate::change::begin(cx, "review reject", &p.path)?;
    file_away(&tx, &p)?;
    tx.commit()?;
    Ok(p)
}

/// Moves a decided proposal to `archive/proposals/<id>.md`, so its text stays readable (and
/// searchable) with or without git; an archived copy of the same id is kept, and this one
/// goes.
fn file_away(tx: &Change<'_>, p: &Proposal) -> Result<(), Error> {
    let from = MemPath::parse_file(&p.path)?;
    let to = MemPath::parse_file(&format!("{ARCHIVE_DIR}/{}", p.path))?;
    match tx.rename(&from, &to) {
        Err(Error::Store(StoreError::Conflict(_))) => tx.remove(&from),
        other => Ok(other?),
    }
}

fn slug(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').chars().take(32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposal_round_trips_even_with_fences_inside() {
        let p = Proposal {
            id: "20261130-091500-bot-abc123".into(),
            path: "proposals/20261130-091500-bot-abc123.md".into(),
            kind: CORE.into(),
            target: "core.md".into(),
            superseded_by: None,
            writer: "bot".into(),
            reason: "tidy".into(),
            created: "2026-11-30T09:15:00Z".into(),
            base: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".into(),
            diff: "@@ -0,0 +1 @@\n+a\n".into(),
            evidence: vec![
                "log/2026-11-01.md:3: - 09:00 ```diff".into(),
                "core.md:1: a".into(),
            ],
            content: "a\n```\ncode\n```\nno newline".into(),
        };
        let q = parse(&p.id, &p.path, &render(&p, "core.md")).unwrap();
        assert_eq!(q.content, "a\n```\ncode\n```\nno newline\n");
        assert_eq!(q.writer, "bot");
        assert_eq!(q.base, p.base);
        assert_eq!(q.diff, p.diff);
        assert_eq!(q.evidence, p.evidence);
        let plain = Proposal {
            evidence: Vec::new(),
            ..p
        };
        let q = parse(&plain.id, &plain.path, &render(&plain, "core.md")).unwrap();
        assert!(q.evidence.is_empty());
        assert_eq!(q.diff, plain.diff);
        assert_eq!((q.kind.as_str(), q.target.as_str()), (CORE, "core.md"));
    }

    #[test]
    fn a_superseded_proposal_round_trips_without_content() {
        let p = Proposal {
            id: "20261130-091500-consolidate-abc123".into(),
            path: "proposals/20261130-091500-consolidate-abc123.md".into(),
            kind: NOTE_SUPERSEDED.into(),
            target: "notes/retry-v1.md".into(),
            superseded_by: Some("notes/retry-v2.md".into()),
            writer: "consolidate".into(),
            reason: "notes/retry-v2.md replaces it".into(),
            created: "2026-11-30T09:15:00+00:00".into(),
            base: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".into(),
            diff: "@@ -1,2 +1,3 @@\n name: retry-v1\n+superseded_by: \"[[retry-v2]]\"\n".into(),
            evidence: vec!["notes/retry-v2.md:5: This replaces [[retry-v1]].".into()],
            content: String::new(),
        };
        let text = render(&p, "core.md");
        assert!(text.contains("\nkind: note-superseded\ntarget: notes/retry-v1.md\nsuperseded_by: notes/retry-v2.md\n"), "{text}");
        let q = parse(&p.id, &p.path, &text).unwrap();
        assert_eq!(q.kind, NOTE_SUPERSEDED);
        assert_eq!(q.target, p.target);
        assert_eq!(q.superseded_by, p.superseded_by);
        assert_eq!(q.evidence, p.evidence);
        assert_eq!(q.diff, p.diff);
        assert!(q.content.is_empty());
    }

    #[test]
    fn dropped_lines_counts_removed_lines() {
        assert_eq!(dropped_lines("a\nb\nc\nd\n", "a\nb\nc\nd\ne\n"), 0);
        assert_eq!(dropped_lines("a\nb\nc\nd\n", "a\nx\n"), 3);
        assert_eq!(dropped_lines("a\na\n", "a\n"), 1);
    }
}
