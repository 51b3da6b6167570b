//! `state.md` through memdir: add a dated entry, list the entries.
//!
//! The format (one `- YYYY-MM-DD text` entry per item, lines indented under it) lives in
//! [`memdir_core::state`]; sweeping old entries into the archive lives in [`crate::archive`].

use crate::error::Error;
use crate::memory::Memory;
use crate::store::{LockName, Precondition};
use memdir_core::path::MemPath;
use memdir_core::state::{append_entry, entries, format_entry};

pub use memdir_core::state::Entry;

/// What [`Memory::state_add`] wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StateReceipt {
    /// The file, `state.md`.
    pub path: String,
    /// The entry as written, newline-terminated.
    pub entry: String,
}

impl Memory {
    /// Adds `- <today> text` at the end of the layout's running-state file (`state.md`;
    /// created when absent) as one change, under its cap. External content is refused: the file
    /// loads on every turn.
    pub fn state_add(&self, text: &str) -> Result<StateReceipt, Error> {
        let state_file = self.layout().state;
        let guarded = crate::guard::content(self, state_file, text, None)?;
        let entry =
            format_entry(self.clock().now().date(), &guarded.text).map_err(Error::Invalid)?;
        let path = MemPath::parse_file(state_file)?;
        let tx = self
            .begin("state add", state_file)?
            .redacted(&guarded.redacted);
        let _lock = self.store().lock(LockName::File(&path))?;
        let (current, pre) = match self.store().stat(&path)? {
            None => (String::new(), Precondition::Absent),
            Some(_) => {
                let (bytes, version) = self.store().read_versioned(&path)?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    Error::Invalid(format!(
                        "{state_file} is not UTF-8 text: fix or remove it by hand first"
                    ))
                })?;
                (text, Precondition::Matches(version))
            }
        };
        let updated = append_entry(&current, &entry);
        let updated = crate::trust::label(self, &path, Some(&current), &updated)?;
        match crate::notes::write_hook(self, &path, &updated, true, &pre) {
            Some(done) => done?,
            None => drop(self.store().write_if(&path, updated.as_bytes(), &pre)?),
        }
        tx.commit()?;
        Ok(StateReceipt {
            path: state_file.to_string(),
            entry,
        })
    }

    /// The dated entries of the running-state file (`state.md`), in file order (none when the
    /// file is absent).
    pub fn state_entries(&self) -> Result<Vec<Entry>, Error> {
        let path = MemPath::parse_file(self.layout().state)?;
        let text = crate::notes::read_text(self.store().as_ref(), &path)?.unwrap_or_default();
        Ok(entries(&text))
    }
}
