//! The one clock: real time, or a fixed instant for tests and replays (`MEMDIR_NOW`).

use jiff::{Timestamp, ZonedDateTime, tz::TimeZone};

/// Where "now" comes from, and the time zone that dates and log times use.
#[derive(Debug, Clone)]
pub struct Clock {
    fixed: Option<Timestamp>,
    tz: TimeZone,
}

impl Clock {
    /// The system clock in `tz`.
    pub fn system(tz: TimeZone) -> Clock {
        Clock { fixed: None, tz }
    }

    /// A clock stopped at `at`, seen in `tz`.
    pub fn fixed(at: Timestamp, tz: TimeZone) -> Clock {
        Clock {
            fixed: Some(at),
            tz,
        }
    }

    /// An instant as memdir shows it everywhere (history, blame, proposals): RFC 3339 in the
    /// clock's time zone, with its offset (`2026-11-30T10:15:00+01:00`). Logs and proposal ids
    /// use the same zone, so one change shows one local time everywhere.
    pub fn local(&self, at: Timestamp) -> String {
        at.to_zoned_datetime(self.tz.clone())
            .strftime("%Y-%m-%dT%H:%M:%S%:z")
            .to_string()
    }

    /// [`Clock::local`] of an RFC 3339 text; the text as it was when it does not parse.
    pub fn local_text(&self, rfc3339: &str) -> String {
        rfc3339
            .parse::<Timestamp>()
            .map(|t| self.local(t))
            .unwrap_or_else(|_| rfc3339.to_string())
    }

    /// The current instant in the clock's time zone.
    pub fn now(&self) -> ZonedDateTime {
        self.fixed
            .unwrap_or_else(Timestamp::now)
            .to_zoned_datetime(self.tz.clone())
    }
}
