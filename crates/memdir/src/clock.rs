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

    /// The current instant in the clock's time zone.
    pub fn now(&self) -> ZonedDateTime {
        self.fixed
            .unwrap_or_else(Timestamp::now)
            .to_zoned_datetime(self.tz.clone())
    }
}
