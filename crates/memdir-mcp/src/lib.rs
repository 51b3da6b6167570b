//! memdir's agent surface: one transport-free tool layer, the Anthropic memory tool contract, and
//! the MCP server (stdio and streamable HTTP) built on the official Rust SDK, `rmcp`.
//!
//! Every front end calls [`Tools::call`], so `memdir tool`, MCP over stdio and MCP over HTTP give
//! the same answers. Only [`server`], [`stdio`] and [`http`] know MCP; nothing else here touches rmcp.
//!
//! ```
//! use memdir::{Clock, Memory};
//! use memdir_mcp::Tools;
//! use std::sync::Arc;
//! let dir = tempfile::tempdir().unwrap();
//! let clock = Clock::fixed("2026-11-30T09:15:00Z".parse().unwrap(), jiff::tz::TimeZone::UTC);
//! let tools = Tools::new(Arc::new(Memory::init(dir.path(), clock).unwrap()));
//! let out = tools.call("memory_log", serde_json::json!({"text": "chose PostgreSQL"})).unwrap();
//! assert!(!out.is_error);
//! let view = tools
//!     .call("memory", serde_json::json!({"command": "view", "path": "/memories/log/2026-11-30.md"}))
//!     .unwrap();
//! assert!(view.text.ends_with("     1\t- 09:15 chose PostgreSQL"));
//! ```
#![deny(missing_docs)]

pub mod anthropic;
mod disk_cache;
pub mod hook;
pub mod http;
pub mod jobs;
pub mod offload;
pub mod prompts;
pub mod quota;
pub mod recall;
pub mod server;
pub mod service;
pub mod session;
pub mod stdio;
mod token_cache;
pub mod tokens;
pub mod tools;

pub use tools::{ToolSpec, Tools, UnknownTool};

/// A tool's answer: text for the model, and whether it is an error result (`isError` in MCP,
/// `is_error` in the Messages API).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolText {
    /// What the model reads.
    pub text: String,
    /// True when the call failed; the text then says what to do instead.
    pub is_error: bool,
}

impl ToolText {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> ToolText {
        ToolText {
            text: text.into(),
            is_error: false,
        }
    }

    /// An error result the model can act on.
    pub fn error(text: impl Into<String>) -> ToolText {
        ToolText {
            text: text.into(),
            is_error: true,
        }
    }
}
