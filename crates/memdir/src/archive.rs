//! The archive step of `sweep`: state entries older than `state.archive_after` and notes whose
//! `expires` date has passed move into `archive/`. Nothing is deleted; the archive is plain
//! Markdown that search covers and the context never loads.
//!
//! - State entries are appended, as written, to `archive/<date of the sweep>.md`; the archive is
//!   written before `state.md` is shortened, so a crash in between can only duplicate a line.
//! - A note moves to `archive/<its path>` (`notes/x.md` to `archive/notes/x.md`); when that name is
//!   taken, to `archive/notes/x.<date>.md`, then `x.<date>-2.md` and so on. Moves never overwrite.

use crate::change::Change;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::layers::SweepReport;
use crate::notes::{note_paths, read_text};
use crate::store::LockName;
use jiff::civil::Date;
use memdir_core::note::Note;
use memdir_core::path::MemPath;
use memdir_core::state::{ARCHIVE_DIR, STATE_FILE, split_older_than, state_archive_path};
use serde::Serialize;

/// A note moved into the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Archived {
    /// Where it was.
    pub from: String,
    /// Where it is now (or would be, on a dry run).
    pub to: String,
}

/// A note is expired once its `expires` date is over: on the next day.
pub fn is_expired(expires: Date, today: Date) -> bool {
    expires < today
}

/// Moves old state entries and expired notes into the archive, recording them in `report`;
/// without a change (a dry run), only records what it would move.
pub(crate) fn sweep(
    mem: &Ctx,
    tx: Option<&Change<'_>>,
    report: &mut SweepReport,
) -> Result<(), Error> {
    let today = mem.clock().now().date();
    sweep_state(mem, today, tx, report)?;
    sweep_notes(mem, today, tx, report)?;
    if let Some(tx) = tx
        && !report.archived_notes.is_empty()
    {
        crate::note_index::refresh(tx)?;
    }
    Ok(())
}

fn sweep_state(
    mem: &Ctx,
    today: Date,
    tx: Option<&Change<'_>>,
    report: &mut SweepReport,
) -> Result<(), Error> {
    let ms = memdir_core::duration::parse_ttl(&mem.config().state.archive_after)
        .map_err(Error::Invalid)?;
    let days = (ms / 86_400_000).max(1);
    let cutoff = today
        .checked_sub(jiff::Span::new().days(days))
        .unwrap_or(today);
    let path = MemPath::parse(STATE_FILE)?;
    let _lock = tx.map(|tx| tx.lock(LockName::File(&path))).transpose()?;
    let Some(text) = read_text(mem.store(), &path)? else {
        return Ok(());
    };
    let split = split_older_than(&text, cutoff);
    if split.moved_entries == 0 {
        return Ok(());
    }
    let archive = state_archive_path(today);
    report.archived_state_entries = split.moved_entries;
    report.state_archive = Some(archive.clone());
    let Some(tx) = tx else {
        return Ok(());
    };
    tx.append(&MemPath::parse(&archive)?, split.moved.as_bytes())?;
    tx.write(&path, split.kept.as_bytes())?;
    Ok(())
}

fn sweep_notes(
    mem: &Ctx,
    today: Date,
    tx: Option<&Change<'_>>,
    report: &mut SweepReport,
) -> Result<(), Error> {
    let store = mem.store();
    for path in note_paths(store, &mem.layout())? {
        let Some(text) = read_text(store, &path)? else {
            continue;
        };
        let Some(expires) = Note::parse(&text).meta.expires else {
            continue;
        };
        if !is_expired(expires, today) {
            continue;
        }
        let to = free_archive_path(mem, &path, today)?;
        if let Some(tx) = tx {
            tx.rename(&path, &to)?;
        }
        report.archived_notes.push(Archived {
            from: path.to_string(),
            to: to.to_string(),
        });
    }
    Ok(())
}

fn free_archive_path(mem: &Ctx, path: &MemPath, today: Date) -> Result<MemPath, Error> {
    let plain = MemPath::parse(&format!("{ARCHIVE_DIR}/{path}"))?;
    if mem.store().stat(&plain)?.is_none() {
        return Ok(plain);
    }
    let stem = plain.as_str().strip_suffix(".md").unwrap_or(plain.as_str());
    for n in 1..1000 {
        let candidate = if n == 1 {
            format!("{stem}.{today}.md")
        } else {
            format!("{stem}.{today}-{n}.md")
        };
        let c = MemPath::parse(&candidate)?;
        if mem.store().stat(&c)?.is_none() {
            return Ok(c);
        }
    }
    Err(Error::Invalid(format!(
        "cannot find a free name for {path} in {ARCHIVE_DIR}/: tidy that folder"
    )))
}
