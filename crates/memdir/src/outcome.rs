//! What a change to a file came to: made, or saved as a proposal for core that waits for a
//! person's review. A proposal is a result, not a failure of the engine: the change was
//! recorded (as `propose`), just not applied. Front ends decide how to show it; every one of
//! them today reports it as "not made", with the message, so an agent never goes on as if it were.

use serde::Serialize;

/// The result of a write or an edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[must_use = "a change to core may have become a proposal, and then it was not made"]
pub enum Outcome<T = ()> {
    /// The change was made; `T` is what the operation returns (an edit's one-line summary).
    Done(T),
    /// The change was saved as a proposal for core: core is gated for this writer.
    Proposed {
        /// The proposal's id (`proposals/<id>.md`).
        id: String,
        /// What happened and what to do, in one line.
        message: String,
    },
}

impl<T> Outcome<T> {
    /// The proposal's id when the change became one.
    pub fn proposal(&self) -> Option<&str> {
        match self {
            Outcome::Done(_) => None,
            Outcome::Proposed { id, .. } => Some(id),
        }
    }

    /// The operation's value when the change was made, else the proposal's message.
    pub fn done(self) -> Result<T, String> {
        match self {
            Outcome::Done(v) => Ok(v),
            Outcome::Proposed { message, .. } => Err(message),
        }
    }
}
