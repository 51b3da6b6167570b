//! One module per command: an `Args` struct and a `run` function.

pub mod blame;
pub mod completions;
pub mod consolidate;
pub mod context;
pub mod edit;
pub mod export;
pub mod flush_prompt;
pub mod forget;
pub mod gate;
pub mod history;
pub mod hook;
pub mod import;
pub mod index;
pub mod init;
pub mod install;
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
pub mod recent;
pub mod reindex;
pub mod review;
pub mod rm;
pub mod scratch;
pub mod search;
pub mod serve;
pub mod sessions;
pub mod state;
pub mod sweep;
pub mod tenant;
pub mod tool;
pub mod ui;
pub mod undo;
pub mod version;
pub mod write;

/// A count for `--limit` or `--max-bytes`: a whole number above zero (0 would print nothing).
pub fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("0 would print nothing: give 1 or more, or leave the option out".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number: give 1 or more")),
    }
}
