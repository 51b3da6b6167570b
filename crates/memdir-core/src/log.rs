//! Daily logs: `log/YYYY-MM-DD.md`, one entry per line, `- HH:MM text`.
//!
//! Text with several lines keeps its later lines indented by two spaces under the entry, so the
//! file stays a Markdown list and one append is always one entry.

use jiff::civil::{Date, Time};

/// The folder that holds daily logs.
pub const LOG_DIR: &str = "log";

/// The path of the log for `date`, e.g. `log/2026-11-30.md`.
pub fn log_path(date: Date) -> String {
    format!("{LOG_DIR}/{}.md", date.strftime("%Y-%m-%d"))
}

/// The marker at the start of a log entry whose content came from outside (web, files, tools).
pub const EXTERNAL_MARK: &str = "[external]";

/// The first line of a scratch note whose content came from outside.
pub const EXTERNAL_SCRATCH_MARK: &str = "<!-- source: external -->";

/// The path of a non-main writer's log for `date`, e.g. `log/2026-11-30.sub1.md`.
pub fn writer_log_path(date: Date, writer: &str) -> String {
    format!("{LOG_DIR}/{}.{writer}.md", date.strftime("%Y-%m-%d"))
}

/// The writer in a log file name: `None` for the main log `2026-11-30.md`.
pub fn writer_of_file_name(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".md")?;
    stem.get(10..)?.strip_prefix('.').filter(|w| !w.is_empty())
}

/// One entry of a log file: its `HH:MM` time (if the line has one) and its full text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// `HH:MM`, when the first line has it.
    pub time: Option<String>,
    /// The entry's lines as written, newline-terminated.
    pub text: String,
}

/// Splits a log file into entries: a line starting `- ` opens one; indented lines continue it.
pub fn parse_entries(text: &str) -> Vec<LogEntry> {
    let mut out: Vec<LogEntry> = Vec::new();
    for line in text.lines() {
        let continues = line.starts_with(' ') || line.starts_with('\t');
        if continues && let Some(last) = out.last_mut() {
            last.text.push_str(line);
            last.text.push('\n');
            continue;
        }
        let time = line
            .strip_prefix("- ")
            .and_then(|r| r.get(..5))
            .filter(|t| Time::strptime("%H:%M", t).is_ok())
            .map(str::to_string);
        out.push(LogEntry {
            time,
            text: format!("{line}\n"),
        });
    }
    out
}

/// The date in a log file name such as `2026-11-30.md` (or `2026-11-30.writer.md`).
pub fn date_of_file_name(name: &str) -> Option<Date> {
    let stem = name.strip_suffix(".md")?;
    let date = stem.get(..10)?;
    let rest = &stem[10..];
    if !(rest.is_empty() || rest.starts_with('.')) {
        return None;
    }
    date.parse::<Date>().ok()
}

/// Renders one log entry, newline-terminated. Fails on empty text.
pub fn format_entry(time: Time, text: &str) -> Result<String, String> {
    list_item(
        &time.strftime("%H:%M").to_string(),
        text,
        "log text is empty: say what happened",
    )
}

/// A Markdown list item `- <stamp> text`, later lines indented by two spaces so one item stays
/// one entry; `empty` is the error for blank text. Logs and `state.md` share this shape.
pub(crate) fn list_item(stamp: &str, text: &str, empty: &str) -> Result<String, String> {
    // Control characters are folded first, so a lone CR or U+2028 is a later line of this
    // entry, indented, and can never pass for an entry of its own.
    let text = crate::text::scrub(text);
    let text = text.trim_end();
    if text.trim().is_empty() {
        return Err(empty.to_string());
    }
    let mut out = format!("- {stamp} ");
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line);
    }
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::{date, time};

    #[test]
    fn entry_and_paths() {
        assert_eq!(
            format_entry(time(9, 5, 0, 0), "shipped v2").unwrap(),
            "- 09:05 shipped v2\n"
        );
        assert_eq!(
            format_entry(time(23, 59, 0, 0), "two\nlines\n").unwrap(),
            "- 23:59 two\n  lines\n"
        );
        assert!(format_entry(time(0, 0, 0, 0), "  \n").is_err());
        assert_eq!(log_path(date(2026, 1, 2)), "log/2026-01-02.md");
        assert_eq!(date_of_file_name("2026-01-02.md"), Some(date(2026, 1, 2)));
        assert_eq!(
            date_of_file_name("2026-01-02.bob.md"),
            Some(date(2026, 1, 2))
        );
        assert_eq!(date_of_file_name("2026-01-02x.md"), None);
        assert_eq!(date_of_file_name("notes.md"), None);
        assert_eq!(date_of_file_name("2026-13-02.md"), None);
        assert_eq!(writer_of_file_name("2026-01-02.bob.md"), Some("bob"));
        assert_eq!(writer_of_file_name("2026-01-02.md"), None);
        assert_eq!(
            writer_log_path(date(2026, 1, 2), "bob"),
            "log/2026-01-02.bob.md"
        );
    }

    #[test]
    fn entries_keep_continuations() {
        let e = parse_entries("- 09:05 a\n  more\n- 10:00 b\nfree text\n");
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].time.as_deref(), Some("09:05"));
        assert_eq!(e[0].text, "- 09:05 a\n  more\n");
        assert_eq!(e[2].time, None);
    }
}
