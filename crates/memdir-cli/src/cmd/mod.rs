//! One module per command: an `Args` struct and a `run` function.

pub mod context;
pub mod edit;
pub mod init;
pub mod log;
pub mod ls;
pub mod mv;
pub mod read;
pub mod rm;
pub mod scratch;
pub mod search;
pub mod sweep;
pub mod write;
