//! Search's error: bad input (a pattern, a glob, a mode, a missing embedder) or a store or
//! index failure. The engine turns it into its own error of the same kind.

use memdir_store::store::StoreError;

/// A search error; its message is one lowercase line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: an empty pattern, a bad regular expression or glob, an unknown mode, no
    /// embedder for a mode that needs one.
    #[error("{0}")]
    Invalid(String),
    /// The store, or the vector index, failed or disagrees (a stale vector index is a
    /// [`StoreError::Conflict`]).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The keyword index failed or is damaged; the message says how to rebuild it.
    #[error("{0}")]
    Index(String),
    /// The embedder failed or answered wrongly.
    #[error("{0}")]
    Embed(String),
}
