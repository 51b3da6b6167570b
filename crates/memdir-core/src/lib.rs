//! The pure core of memdir: the on-disk format of a memory folder, its caps and its dates.
//!
//! Nothing in this crate does I/O or reads the clock: every function takes `&str` and values,
//! so the format can be tested (and property-tested) without a file system.
//!
//! ```
//! use memdir_core::path::MemPath;
//!
//! let p = MemPath::parse("/memories/people/priya.md").unwrap();
//! assert_eq!(p.as_str(), "people/priya.md");
//! assert!(MemPath::parse("../etc/passwd").is_err());
//! ```
#![deny(missing_docs)]

pub mod caps;
pub mod chat;
pub mod config;
pub mod consolidate;
pub mod context;
pub mod dates;
pub mod day;
pub mod diff;
pub mod duration;
pub mod edit;
pub mod external;
pub mod forget;
pub mod gates;
pub mod host;
pub mod layout;
pub mod links;
pub mod log;
pub mod note;
pub mod path;
pub mod query;
pub mod replaces;
pub mod scratch;
pub mod state;
pub mod text;
pub mod tokenize;
pub mod transcript;
