//! A folder's change feed where there is no inotify: never available, so its readers walk the
//! folder instead (see `feed.rs` for the Linux implementation).

use std::path::Path;

/// The feed is not available here: readers walk the folder.
#[derive(Debug)]
pub(crate) struct Lost;

/// What happened to a path (never produced here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The path, relative to the root.
    pub rel: String,
    /// True for a folder.
    pub dir: bool,
    /// What happened to it.
    pub kind: Kind,
}

/// The kind of an [`Event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Created or moved in.
    Arrived,
    /// Deleted or moved away.
    Left,
    /// Changed.
    Changed,
}

/// Never starts.
pub(crate) struct Feed;

impl Feed {
    /// Always [`Lost`].
    pub fn start(_root: &Path, _file: &mut dyn FnMut(String)) -> Result<Feed, Lost> {
        Err(Lost)
    }

    /// Never reached.
    pub fn drain(&mut self) -> Result<Vec<Event>, Lost> {
        Err(Lost)
    }
}
