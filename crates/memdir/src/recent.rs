//! Recent activity: what changed, who changed it and why, newest first. Served from the
//! memory's [`History`](crate::history::History) when it keeps one (git for a folder, tables
//! for PostgreSQL), from the files' modification times otherwise.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::store::EntryKind;
use jiff::{Timestamp, ZonedDateTime as Zoned};
use memdir_core::day::parse_day;
use memdir_core::path::MemPath;
use serde::Serialize;

/// The most changes one [`Memory::recent`] returns unless asked for fewer.
pub const DEFAULT_LIMIT: usize = 20;
/// How far back history is read when filtering by time or writer.
const SCAN_LIMIT: usize = 5_000;

/// What [`Memory::recent`] is asked for.
#[derive(Debug, Clone, Default)]
pub struct RecentQuery {
    /// Only changes at or after this instant.
    pub since: Option<Timestamp>,
    /// Only changes that touched this file or folder.
    pub path: Option<String>,
    /// Only changes by this writer.
    pub writer: Option<String>,
    /// At most this many (default [`DEFAULT_LIMIT`]).
    pub limit: Option<usize>,
}

/// One change.
#[derive(Debug, Clone, Serialize)]
pub struct RecentChange {
    /// When, RFC 3339 in local time.
    pub at: String,
    /// Who made it, when known (a history records it; modification times do not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    /// What was done: `op path` from history, `changed PATH` from modification times.
    pub summary: String,
    /// Why, when the writer said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The source label, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The change's id in the history, for `memdir undo`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Recent changes and where they came from.
#[derive(Debug, Clone, Serialize)]
pub struct Recent {
    /// `history` or `modification times`.
    pub from: &'static str,
    /// The changes, newest first.
    pub changes: Vec<RecentChange>,
}

/// The forms [`parse_window`] accepts.
pub const WINDOW_FORMS: &str =
    "today, yesterday, 3d, 2w, 6h, 30m, last week, last month or YYYY-MM-DD";

/// Parses a plain-language window into the instant it starts: a day form of
/// [`parse_day`] starts at that local midnight (`3d`: three days ago, `today`: since midnight);
/// `6h` and `30m` count back from now.
pub fn parse_window(input: &str, now: &Zoned) -> Result<Timestamp, String> {
    let s = input.trim().to_ascii_lowercase();
    if let Some(unit) = s.strip_suffix(['h', 'm'])
        && !unit.is_empty()
        && unit.bytes().all(|b| b.is_ascii_digit())
    {
        let bad = || format!("bad window {input:?}: use {WINDOW_FORMS}");
        let n: i64 = unit.parse().map_err(|_| bad())?;
        let span = if s.ends_with('h') {
            jiff::Span::new().try_hours(n)
        } else {
            jiff::Span::new().try_minutes(n)
        }
        .map_err(|_| bad())?;
        return now.timestamp().checked_sub(span).map_err(|_| bad());
    }
    let day = parse_day(input, now.date())
        .map_err(|_| format!("bad window {input:?}: use {WINDOW_FORMS}"))?;
    day.to_zoned_datetime(now.time_zone().clone())
        .map(|z| z.timestamp())
        .map_err(|e| format!("bad window {input:?}: {e}"))
}

/// Recent changes, newest first: from history when this memory keeps one, else from the
/// files' modification times (no writer or reason then).
pub(crate) fn recent(cx: &Ctx, q: &RecentQuery) -> Result<Recent, Error> {
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let path = q
        .path
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(MemPath::parse)
        .transpose()?
        .filter(|p| !p.is_root());
    let tz = cx.clock().now().time_zone().clone();
    let local = |t: Timestamp| {
        t.to_zoned_datetime(tz.clone())
            .strftime("%Y-%m-%dT%H:%M:%S%:z")
            .to_string()
    };
    if let Some(h) = cx.history_backend() {
        let filtered = q.since.is_some() || q.writer.is_some();
        let entries = h.history(path.as_ref(), if filtered { SCAN_LIMIT } else { limit })?;
        let mut changes = Vec::new();
        for e in entries {
            let at: Option<Timestamp> = e.date.parse().ok();
            if let (Some(since), Some(at)) = (q.since, at)
                && at < since
            {
                // Newest first: everything after this is older still.
                break;
            }
            if q.writer.as_deref().is_some_and(|w| w != e.writer) {
                continue;
            }
            changes.push(RecentChange {
                at: at.map(local).unwrap_or(e.date),
                writer: Some(e.writer),
                summary: e.summary,
                reason: e.reason,
                source: e.source,
                id: Some(e.commit.chars().take(12).collect()),
            });
            if changes.len() >= limit {
                break;
            }
        }
        return Ok(Recent {
            from: "history",
            changes,
        });
    }
    if q.writer.is_some() {
        return Err(Error::Invalid(
            "this memory keeps no history, so changes have no writer: leave out writer, or start history with `memdir init`".into(),
        ));
    }
    let dir = path.clone().unwrap_or_default();
    let mut files = match cx.store().stat(&dir)? {
        Some(e) if e.kind == EntryKind::File => vec![e],
        Some(_) => cx.store().walk(&dir)?,
        None => Vec::new(),
    };
    files.retain(|e| e.modified_ms > 0);
    if let Some(since) = q.since {
        let ms = since.as_millisecond();
        files.retain(|e| e.modified_ms >= ms);
    }
    files.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(a.path.cmp(&b.path)));
    files.truncate(limit);
    Ok(Recent {
        from: "modification times",
        changes: files
            .into_iter()
            .map(|e| RecentChange {
                at: Timestamp::from_millisecond(e.modified_ms)
                    .map(local)
                    .unwrap_or_default(),
                writer: None,
                summary: format!("changed {}", e.path),
                reason: None,
                source: None,
                id: None,
            })
            .collect(),
    })
}

impl Recent {
    /// One line per change: `time writer: summary (reason)`, or a line saying there is none.
    pub fn render(&self) -> String {
        if self.changes.is_empty() {
            return "no changes in that window".to_string();
        }
        let mut out = String::new();
        for c in &self.changes {
            out.push_str(&c.at);
            if let Some(w) = &c.writer {
                out.push_str(&format!(" {w}"));
            }
            out.push_str(&format!(": {}", c.summary));
            if let Some(r) = &c.reason {
                out.push_str(&format!(" (why: {r})"));
            }
            if c.source.as_deref() == Some("external") {
                out.push_str(" [external]");
            }
            if let Some(id) = &c.id {
                out.push_str(&format!(" [{id}]"));
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        let now: Zoned = "2026-11-30T15:20:00+01:00[Europe/Berlin]".parse().unwrap();
        let at = |s: &str| parse_window(s, &now).map(|t| t.to_string());
        assert_eq!(at("today").unwrap(), "2026-11-29T23:00:00Z");
        assert_eq!(at("3d").unwrap(), "2026-11-26T23:00:00Z");
        assert_eq!(at("last week").unwrap(), "2026-11-22T23:00:00Z");
        assert_eq!(at("6h").unwrap(), "2026-11-30T08:20:00Z");
        assert_eq!(at("30m").unwrap(), "2026-11-30T13:50:00Z");
        let e = at("a while").unwrap_err();
        assert!(e.starts_with("bad window \"a while\": use today"), "{e}");
    }
}
