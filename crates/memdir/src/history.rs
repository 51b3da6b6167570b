//! The change history: the seam every backend implements (`memdir-store`), a folder's git
//! history (`memdir-folder`), and the line diffs backends that keep versions share
//! (`memdir-core`).

pub use memdir_core::diff::{UndoConflict, carry_lines, merge_lines, undo_file};
pub use memdir_folder::git::GitHistory;
pub use memdir_store::history::{BlameLine, Change, Changes, FileChange, History, HistoryEntry};
