//! One module per command: an `Args` struct and a `run` function.

pub mod completions;
pub mod context;
pub mod edit;
pub mod flush_prompt;
pub mod hook;
pub mod index;
pub mod init;
pub mod links;
pub mod lint;
pub mod log;
pub mod ls;
pub mod man;
pub mod mcp;
pub mod mv;
pub mod note;
pub mod offload;
pub mod read;
pub mod rm;
pub mod scratch;
pub mod search;
pub mod serve;
pub mod sweep;
pub mod tool;
pub mod write;
