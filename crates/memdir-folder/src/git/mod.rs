//! A memory folder's history in git: every change made through memdir is a commit by its writer.

pub mod forget;
pub mod history;
pub mod repo;

pub use history::GitHistory;
pub use repo::{GIT_LOCK_GRACE, Git};
