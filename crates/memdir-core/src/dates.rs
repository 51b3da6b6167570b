//! Dates named in a query ("on 9 November, 2022", "in May 2023", "yesterday", "last week"), so
//! hybrid search can prefer lines of the daily logs those dates point at.
//!
//! Pure: text and today's date in, a range of days out. Only forms that name one day, one month
//! or a span relative to today are read; a bare year or a weekday names too much to help.

use jiff::ToSpan;
use jiff::civil::Date;

/// A query's days: `first..=last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Days {
    /// The first day named.
    pub first: Date,
    /// The last day named.
    pub last: Date,
}

/// How many days outside the named range a file still gets some credit: people often say on
/// Monday what they did "on Friday", and a question's date is rarely the exact day written.
const SLACK_DAYS: f64 = 7.0;

impl Days {
    /// 1 for a file dated inside the range, falling linearly to 0 at [`SLACK_DAYS`] outside it.
    pub fn closeness(&self, date: Date) -> f64 {
        let off = if date < self.first {
            (self.first - date).get_days()
        } else if date > self.last {
            (date - self.last).get_days()
        } else {
            0
        };
        (1.0 - f64::from(off) / SLACK_DAYS).max(0.0)
    }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// `"May"`, `"sept"`, `"Dec."` -> 5, 9, 12.
fn month(word: &str) -> Option<i8> {
    let w = word.trim_end_matches('.').to_lowercase();
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| *m == w || (w.len() <= 4 && m.starts_with(&w)))
        .and_then(|i| i8::try_from(i + 1).ok())
}

/// `"9"`, `"9th"`, `"21st,"` -> 9, 9, 21.
fn day(word: &str) -> Option<i8> {
    let w = word.trim_end_matches(',');
    let w = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| w.strip_suffix(s))
        .unwrap_or(w);
    w.parse::<i8>().ok().filter(|d| (1..=31).contains(d))
}

/// `"2022"`, `"2022?"` -> 2022.
fn year(word: &str) -> Option<i16> {
    let w = word.trim_end_matches(|c: char| !c.is_ascii_digit());
    (w.len() == 4)
        .then(|| w.parse::<i16>().ok())
        .flatten()
        .filter(|y| (1900..=2200).contains(y))
}

fn month_days(y: i16, m: i8) -> Option<Days> {
    let first = Date::new(y, m, 1).ok()?;
    Some(Days {
        first,
        last: first.last_of_month(),
    })
}

fn one_day(y: i16, m: i8, d: i8) -> Option<Days> {
    let at = Date::new(y, m, d).ok()?;
    Some(Days {
        first: at,
        last: at,
    })
}

/// The days a query names, if it names any: the first absolute date (`9 November, 2022`,
/// `November 9, 2022`, `8th December 2023`, `2022-11-09`, `May 2023`), else a span relative to
/// `today` (`today`, `yesterday`, `this week`, `last week`, `last month`).
pub fn query_days(query: &str, today: Date) -> Option<Days> {
    // Split "December 1,2023" into its parts as well as on spaces.
    let words: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let at = |k: usize| words.get(i + k).copied().unwrap_or("");
        if let Some(m) = month(w) {
            // "November 9, 2022", "November 9th 2022".
            if let (Some(d), Some(y)) = (day(at(1)), year(at(2)))
                && let Some(days) = one_day(y, m, d)
            {
                return Some(days);
            }
            // "November 2022".
            if let Some(y) = year(at(1))
                && let Some(days) = month_days(y, m)
            {
                return Some(days);
            }
        }
        // "9 November, 2022", "8th December 2023".
        if let (Some(d), Some(m), Some(y)) = (day(w), month(at(1)), year(at(2)))
            && let Some(days) = one_day(y, m, d)
        {
            return Some(days);
        }
        if let Ok(d) = w
            .trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse::<Date>()
        {
            return Some(Days { first: d, last: d });
        }
    }
    let lower = query.to_lowercase();
    // A whole-word match: "todays" is not "today".
    let has = |p: &str| {
        lower.match_indices(p).any(|(i, _)| {
            !lower[..i].ends_with(|c: char| c.is_alphanumeric())
                && !lower[i + p.len()..].starts_with(|c: char| c.is_alphanumeric())
        })
    };
    let monday = i32::from(today.weekday().to_monday_zero_offset());
    let back = |days: i32| today.checked_sub(days.days()).ok();
    if has("yesterday") {
        let d = back(1)?;
        return Some(Days { first: d, last: d });
    }
    if has("last week") {
        return Some(Days {
            first: back(monday + 7)?,
            last: back(monday + 1)?,
        });
    }
    if has("this week") {
        return Some(Days {
            first: back(monday)?,
            last: today,
        });
    }
    if has("last month") {
        let first = today.first_of_month().checked_sub(1.month()).ok()?;
        return Some(Days {
            first,
            last: first.last_of_month(),
        });
    }
    if has("today") {
        return Some(Days {
            first: today,
            last: today,
        });
    }
    None
}

/// True for a question that asks for a time: "When did ...", "what date ...", "how long ago
/// ...", "since when ...", "what year ...".
pub fn asks_when(query: &str) -> bool {
    let words: Vec<String> = crate::tokenize::words(query).collect();
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map_or("", String::as_str);
        match w.as_str() {
            "when" => true,
            "what" | "which" => matches!(
                next,
                "date" | "day" | "time" | "year" | "month" | "week" | "weekend"
            ),
            "how" => next == "long" && words.get(i + 2).is_some_and(|a| a == "ago"),
            _ => false,
        }
    })
}

/// Words that place an event in time on their own: relative days and spans, weekdays and
/// months (a month name in a line is nearly always a date).
const TIME_WORDS: &[&str] = &[
    "ago",
    "earlier",
    "lately",
    "recently",
    "today",
    "tomorrow",
    "tonight",
    "yesterday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Words that name a span when "last", "next", "this", "past" or "few" comes before them.
const SPANS: &[&str] = &[
    "afternoon",
    "days",
    "evening",
    "month",
    "months",
    "morning",
    "night",
    "summer",
    "week",
    "weekend",
    "weeks",
    "winter",
    "year",
    "years",
    "spring",
    "fall",
    "autumn",
];

/// True for text that says when something happened: "yesterday", "last week", "two days ago",
/// "on Friday", "in May", "in 2022". What hybrid search credits in the lines a "when" question
/// is answered by: a line that tells the time of an event is what such a question asks for.
pub fn names_time(text: &str) -> bool {
    let words: Vec<String> = crate::tokenize::words(text).collect();
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map_or("", String::as_str);
        TIME_WORDS.contains(&w.as_str())
            // "may" is also a verb: only a full month name other than it counts alone.
            || (w != "may" && MONTHS.contains(&w.as_str()))
            || (matches!(w.as_str(), "last" | "next" | "this" | "past" | "few" | "couple")
                && SPANS.contains(&next))
            || year(w).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn check(query: &str, expect: Option<(Date, Date)>) {
        let today = date(2026, 12, 2); // a Wednesday
        let got = query_days(query, today).map(|d| (d.first, d.last));
        assert_eq!(got, expect, "{query}");
    }

    #[test]
    fn absolute_dates_in_questions() {
        let d = |y, m, dd| date(y, m, dd);
        let one = |y, m, dd| Some((d(y, m, dd), d(y, m, dd)));
        check(
            "What dish did Nate make on 9 November, 2022?",
            one(2022, 11, 9),
        );
        check(
            "What movie did Nate watch on October 6, 2022?",
            one(2022, 10, 6),
        );
        check(
            "What book did Tim finish on 8th December, 2023?",
            one(2023, 12, 8),
        );
        check(
            "Where was the picture shared on December 1,2023 taken?",
            one(2023, 12, 1),
        );
        check("what did we decide on 2026-11-30", one(2026, 11, 30));
        check(
            "Where did Joanna travel to in July 2022?",
            Some((d(2022, 7, 1), d(2022, 7, 31))),
        );
        check(
            "What happened in Sept. 2023?",
            Some((d(2023, 9, 1), d(2023, 9, 30))),
        );
        // A day that does not exist still names its month; a bare year or month names nothing.
        check(
            "on 31 February, 2023",
            Some((d(2023, 2, 1), d(2023, 2, 28))),
        );
        check("What did John do in 2023?", None);
        check("Which outdoor spot did Joanna visit in May?", None);
        check("I may go 12 times in 2023", None);
    }

    #[test]
    fn relative_dates_count_from_today() {
        let d = |m, dd| date(2026, m, dd);
        check("what did I do yesterday", Some((d(12, 1), d(12, 1))));
        check("notes from last week", Some((d(11, 23), d(11, 29))));
        check("this week's plan", Some((d(11, 30), d(12, 2))));
        check("what happened last month", Some((d(11, 1), d(11, 30))));
        check("todays plan", None);
        check("the mastodon meeting", None);
    }

    #[test]
    fn questions_that_ask_when() {
        for q in [
            "When did Caroline go to the LGBTQ support group?",
            "what date is the dentist",
            "How long ago was Melanie's trip?",
            "In what year did John move?",
            "since when have we used sqlite",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in [
            "What did Caroline research?",
            "How long is the river?",
            "what is the time complexity",
        ] {
            assert!(!asks_when(q), "{q}");
        }
    }

    #[test]
    fn lines_that_say_when() {
        for t in [
            "I went to a support group yesterday",
            "We moved there last year.",
            "two days ago we met",
            "see you on Friday!",
            "the trip in August was fun",
            "back in 2019 I started",
        ] {
            assert!(names_time(t), "{t}");
        }
        for t in [
            "I may paint the fence",
            "that was the last straw",
            "a week-long course in painting? Sounds like a lot",
            "the dog loves the beach",
        ] {
            assert!(!names_time(t), "{t}");
        }
    }

    #[test]
    fn closeness_falls_off_outside_the_range() {
        let days = Days {
            first: date(2022, 7, 1),
            last: date(2022, 7, 31),
        };
        assert_eq!(days.closeness(date(2022, 7, 15)), 1.0);
        assert!((days.closeness(date(2022, 8, 3)) - (1.0 - 3.0 / 7.0)).abs() < 1e-9);
        assert_eq!(days.closeness(date(2022, 6, 1)), 0.0);
        assert_eq!(days.closeness(date(2021, 7, 15)), 0.0);
    }
}
