//! The SQLite files search keeps as caches, under `.memdir/` or the front end's cache folder.
//! Like every index they can be deleted at any time.

use crate::error::Error;

/// The keyword index of ranked mode.
pub(crate) const KEYWORD_DB: &str = "search.sqlite";

/// A failure of the keyword index, saying how to recover.
pub(crate) fn db_err(e: rusqlite::Error) -> Error {
    Error::Index(format!(
        "search index: {e}; delete .memdir/{KEYWORD_DB} to rebuild it"
    ))
}
