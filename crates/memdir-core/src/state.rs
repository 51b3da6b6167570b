//! `state.md`: running state, one dated line per entry, `- YYYY-MM-DD text`.
//!
//! Lines indented under an entry belong to it. Any other line (a heading, a blank line, an undated
//! item) is kept where it is and never archived. `sweep` moves entries older than the configured
//! age to `archive/<date of the sweep>.md`, in their original form.

use jiff::civil::Date;

/// The running-state file at the root.
pub const STATE_FILE: &str = "state.md";
/// The folder archived state lines and expired notes go to.
pub const ARCHIVE_DIR: &str = "archive";

/// The archive file for state lines moved on `day`: `archive/YYYY-MM-DD.md`.
pub fn state_archive_path(day: Date) -> String {
    format!("{ARCHIVE_DIR}/{}.md", day.strftime("%Y-%m-%d"))
}

/// Renders one state entry, newline-terminated; later lines are indented by two spaces.
pub fn format_entry(day: Date, text: &str) -> Result<String, String> {
    crate::log::list_item(
        &day.strftime("%Y-%m-%d").to_string(),
        text,
        "state text is empty: say what holds now",
    )
}

/// The date of a line that starts a state entry (`- 2026-11-30 text`), if it does.
pub fn entry_date(line: &str) -> Option<Date> {
    let rest = line.strip_prefix("- ")?;
    let date = rest.get(..10)?;
    let after = &rest[10..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    date.parse().ok()
}

/// A line that looks like a list item but has no date: lint warns about these.
pub fn undated_items(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- ") && entry_date(l).is_none())
        .map(|(i, _)| i + 1)
        .collect()
}

/// One dated entry of `state.md`, as [`entries`] reads it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The entry's date.
    #[serde(serialize_with = "day_as_text")]
    pub date: Date,
    /// Its text: the first line after the date, then the lines indented under it (unindented).
    pub text: String,
    /// The 1-based line it starts on.
    pub line: usize,
}

fn day_as_text<S: serde::Serializer>(d: &Date, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(d)
}

/// The dated entries of state text, in file order; headings, blank lines and undated items are
/// not entries.
pub fn entries(text: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        let continues = line.starts_with(' ') || line.starts_with('\t');
        if continues {
            if open && let Some(e) = out.last_mut() {
                e.text.push('\n');
                e.text.push_str(line.trim_start());
            }
            continue;
        }
        open = false;
        if let Some(date) = entry_date(line) {
            let text = line.get(12..).unwrap_or_default().trim().to_string();
            out.push(Entry {
                date,
                text,
                line: i + 1,
            });
            open = true;
        }
    }
    out
}

/// `current` state text with `entry` (from [`format_entry`]) added at the end, on a line of its
/// own.
pub fn append_entry(current: &str, entry: &str) -> String {
    let mut out = String::with_capacity(current.len() + entry.len() + 1);
    out.push_str(current);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(entry);
    out
}

/// The result of splitting state text at a cutoff date.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Split {
    /// The text that stays in `state.md`.
    pub kept: String,
    /// The entries that move, in file order, with their indented lines.
    pub moved: String,
    /// How many entries move.
    pub moved_entries: usize,
}

/// Splits state text: entries dated before `cutoff` move, everything else stays, byte for byte.
pub fn split_older_than(text: &str, cutoff: Date) -> Split {
    let mut split = Split::default();
    let mut moving = false;
    for line in text.split_inclusive('\n') {
        let continues = line.starts_with(' ') || line.starts_with('\t');
        if !continues {
            moving = entry_date(line).is_some_and(|d| d < cutoff);
            if moving {
                split.moved_entries += 1;
            }
        }
        if moving {
            split.moved.push_str(line);
        } else {
            split.kept.push_str(line);
        }
    }
    if !split.moved.is_empty() && !split.moved.ends_with('\n') {
        split.moved.push('\n');
    }
    split
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn entries_and_dates() {
        let d = date(2026, 11, 30);
        assert_eq!(
            format_entry(d, "on call").unwrap(),
            "- 2026-11-30 on call\n"
        );
        assert_eq!(format_entry(d, "a\nb").unwrap(), "- 2026-11-30 a\n  b\n");
        assert!(format_entry(d, " \n").is_err());
        assert_eq!(entry_date("- 2026-11-30 x"), Some(d));
        assert_eq!(entry_date("- 2026-11-30"), Some(d));
        assert_eq!(entry_date("- 2026-11-30x"), None);
        assert_eq!(entry_date("- someday"), None);
        assert_eq!(entry_date("2026-11-30 x"), None);
        assert_eq!(state_archive_path(d), "archive/2026-11-30.md");
        assert_eq!(undated_items("# State\n- 2026-01-01 a\n- b\n"), vec![3]);
    }

    #[test]
    fn reads_entries_and_appends() {
        let text = "# State\n- 2026-11-29 on call\n  until Friday\n- undated\n  not an entry\n- 2026-11-30 shipping v2";
        let e = entries(text);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].date, date(2026, 11, 29));
        assert_eq!(e[0].text, "on call\nuntil Friday");
        assert_eq!(e[0].line, 2);
        assert_eq!(e[1].text, "shipping v2");
        assert_eq!(e[1].line, 6);
        let added = append_entry(text, "- 2026-12-01 x\n");
        assert!(added.ends_with("shipping v2\n- 2026-12-01 x\n"), "{added}");
        assert_eq!(append_entry("", "- 2026-12-01 x\n"), "- 2026-12-01 x\n");
        assert_eq!(entries(&added).len(), 3);
    }

    #[test]
    fn splits_old_entries_with_their_lines() {
        let text = "# State\n- 2026-10-01 old\n  more old\n- 2026-11-29 new\n- undated stays\n- 2026-09-01 older";
        let s = split_older_than(text, date(2026, 11, 1));
        assert_eq!(s.kept, "# State\n- 2026-11-29 new\n- undated stays\n");
        assert_eq!(
            s.moved,
            "- 2026-10-01 old\n  more old\n- 2026-09-01 older\n"
        );
        assert_eq!(s.moved_entries, 2);
        let none = split_older_than("- 2026-11-29 new\n", date(2026, 11, 1));
        assert_eq!(none.kept, "- 2026-11-29 new\n");
        assert_eq!(none.moved_entries, 0);
    }
}
