//! The engine's error, with a kind that front ends map to exit codes or tool errors.

use crate::store::StoreError;
use memdir_core::caps::CapExceeded;
use memdir_core::path::PathError;

/// Broad classes of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing at that path, or nothing matched.
    NotFound,
    /// Bad input: a path outside memory, a cap exceeded, a bad name, an ambiguous edit.
    Invalid,
    /// The operation clashes with what is there.
    Conflict,
    /// The storage, an index or a model failed (I/O, database, network).
    Unavailable,
}

/// An engine error; its message is one lowercase line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A refused path string.
    #[error(transparent)]
    Path(#[from] PathError),
    /// A storage failure.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A write over a hard cap.
    #[error(transparent)]
    Cap(#[from] CapExceeded),
    /// Any other bad input.
    #[error("{0}")]
    Invalid(String),
    /// Something asked for is not there.
    #[error("{0}")]
    NotFound(String),
    /// The change clashes with what is there (a stale version, a lock held elsewhere).
    #[error("{0}")]
    Conflict(String),
    /// A search index (keyword or vector) failed; the message says how to rebuild it.
    #[error("{0}")]
    Index(String),
    /// The embedder or the chat model failed or answered wrongly.
    #[error("{0}")]
    Model(String),
}

impl Error {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Path(_) | Error::Cap(_) | Error::Invalid(_) => ErrorKind::Invalid,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Store(StoreError::NotFound(_)) => ErrorKind::NotFound,
            Error::Store(StoreError::InvalidPath(_)) => ErrorKind::Invalid,
            Error::Store(StoreError::Conflict(_)) => ErrorKind::Conflict,
            Error::Store(StoreError::Unavailable(_)) | Error::Index(_) | Error::Model(_) => {
                ErrorKind::Unavailable
            }
        }
    }
}

impl From<memdir_search::Error> for Error {
    fn from(e: memdir_search::Error) -> Error {
        match e {
            memdir_search::Error::Invalid(m) => Error::Invalid(m),
            memdir_search::Error::Store(e) => Error::Store(e),
            memdir_search::Error::Index(m) => Error::Index(m),
            memdir_search::Error::Embed(m) => Error::Model(m),
        }
    }
}
