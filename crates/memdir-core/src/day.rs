//! Days as people type them on the command line: `2026-11-30`, or relative to today: `today`,
//! `yesterday`, `7d` (seven days ago), `2w` (two weeks ago), `last week` (seven days ago) and
//! `last month` (the same day a month ago). Today comes from the caller's clock.

use jiff::ToSpan as _;
use jiff::civil::Date;

/// The forms [`parse_day`] accepts, for error messages and help.
pub const DAY_FORMS: &str =
    "YYYY-MM-DD, today, yesterday, Nd or Nw (days or weeks ago: 7d, 2w), last week or last month";

/// Parses a day, resolving relative forms against `today`.
pub fn parse_day(input: &str, today: Date) -> Result<Date, String> {
    let s = input.trim().to_ascii_lowercase();
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let bad = || format!("bad date {input:?}: use {DAY_FORMS}");
    let ago = |span: jiff::Span| today.checked_sub(span).map_err(|_| bad());
    match s.as_str() {
        "today" => return Ok(today),
        "yesterday" => return ago(1.day()),
        "last week" => return ago(1.week()),
        "last month" => return ago(1.month()),
        _ => {}
    }
    if let Some(unit) = s.strip_suffix(['d', 'w'])
        && !unit.is_empty()
        && unit.bytes().all(|b| b.is_ascii_digit())
    {
        let n: i64 = unit.parse().map_err(|_| bad())?;
        let span = if s.ends_with('d') {
            jiff::Span::new().try_days(n)
        } else {
            jiff::Span::new().try_weeks(n)
        };
        return ago(span.map_err(|_| bad())?);
    }
    // Only the exact YYYY-MM-DD form: jiff also reads "2026-11-30T10:00" and the like.
    if s.len() == 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' {
        return s.parse().map_err(|_| {
            format!("bad date {input:?}: not a day of the calendar; use {DAY_FORMS}")
        });
    }
    Err(bad())
}

/// The forms [`parse_future_day`] accepts, for error messages and help.
pub const FUTURE_DAY_FORMS: &str =
    "YYYY-MM-DD, tomorrow, or Nd or Nw (days or weeks from today: 30d, 2w)";

/// Parses a day from today on, as an expiry date is given: `2026-12-31`, `tomorrow`, `30d`
/// (thirty days from today) or `2w` (two weeks from today). A day before today is refused: it
/// would have expired already.
pub fn parse_future_day(input: &str, today: Date) -> Result<Date, String> {
    let s = input.trim().to_ascii_lowercase();
    let bad = || format!("bad date {input:?}: use {FUTURE_DAY_FORMS}");
    let ahead = |span: jiff::Span| today.checked_add(span).map_err(|_| bad());
    let day = if s == "tomorrow" {
        ahead(1.day())?
    } else if let Some(unit) = s.strip_suffix(['d', 'w'])
        && !unit.is_empty()
        && unit.bytes().all(|b| b.is_ascii_digit())
    {
        let n: i64 = unit.parse().map_err(|_| bad())?;
        let span = if s.ends_with('d') {
            jiff::Span::new().try_days(n)
        } else {
            jiff::Span::new().try_weeks(n)
        };
        ahead(span.map_err(|_| bad())?)?
    } else if s.len() == 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' {
        s.parse().map_err(|_| {
            format!("bad date {input:?}: not a day of the calendar; use {FUTURE_DAY_FORMS}")
        })?
    } else {
        return Err(bad());
    };
    if day < today {
        return Err(format!(
            "{input:?} is before today ({today}): give a day from today on ({FUTURE_DAY_FORMS})"
        ));
    }
    Ok(day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn future_forms() {
        let today = Date::constant(2026, 11, 30);
        let day = |s: &str| parse_future_day(s, today);
        assert_eq!(day("2026-12-31"), Ok(Date::constant(2026, 12, 31)));
        assert_eq!(day("2026-11-30"), Ok(today));
        assert_eq!(day("tomorrow"), Ok(Date::constant(2026, 12, 1)));
        assert_eq!(day("30d"), Ok(Date::constant(2026, 12, 30)));
        assert_eq!(day("2W"), Ok(Date::constant(2026, 12, 14)));
        assert!(day("2026-11-29").unwrap_err().contains("before today"));
        for bad in ["", "soon", "-3d", "yesterday", "2026-02-30", "99999999w"] {
            let e = day(bad).unwrap_err();
            assert!(e.contains("YYYY-MM-DD"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn forms() {
        let today = Date::constant(2026, 11, 30);
        let day = |s: &str| parse_day(s, today);
        assert_eq!(day("2026-11-01"), Ok(Date::constant(2026, 11, 1)));
        assert_eq!(day("today"), Ok(today));
        assert_eq!(day(" Yesterday "), Ok(Date::constant(2026, 11, 29)));
        assert_eq!(day("7d"), Ok(Date::constant(2026, 11, 23)));
        assert_eq!(day("0d"), Ok(today));
        assert_eq!(day("2w"), Ok(Date::constant(2026, 11, 16)));
        assert_eq!(day("last  week"), Ok(Date::constant(2026, 11, 23)));
        assert_eq!(day("last month"), Ok(Date::constant(2026, 10, 30)));
        for bad in [
            "",
            "d",
            "soon",
            "-7d",
            "1.5d",
            "2026-02-30",
            "2026-11-30T10:00",
            "99999999d",
        ] {
            let e = day(bad).unwrap_err();
            assert!(
                e.contains("YYYY-MM-DD") && e.contains(&format!("{bad:?}")),
                "{e}"
            );
        }
    }
}
