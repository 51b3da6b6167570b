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
    let text = text.trim_end();
    if text.trim().is_empty() {
        return Err("log text is empty: say what happened".to_string());
    }
    let mut out = format!("- {} ", time.strftime("%H:%M"));
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line.trim_end_matches('\r'));
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
    }
}
