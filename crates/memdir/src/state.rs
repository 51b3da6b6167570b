//! `state.md` through memdir: add a dated entry, list the entries.
//!
//! The format (one `- YYYY-MM-DD text` entry per item, lines indented under it) lives in
//! [`memdir_core::state`]; sweeping old entries into the archive lives in [`crate::archive`].

use crate::ctx::Ctx;
use crate::error::Error;
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

/// Adds `- <today> text` at the end of the layout's running-state file (`state.md`;
/// created when absent) as one change, under its cap. External content is refused: the file
/// loads on every turn.
pub(crate) fn state_add(cx: &Ctx, text: &str) -> Result<StateReceipt, Error> {
    let state_file = cx.layout().state;
    let guarded = crate::guard::content(cx, state_file, text, None)?;
    let entry = format_entry(cx.clock().now().date(), &guarded.text).map_err(Error::Invalid)?;
    let path = MemPath::parse_file(state_file)?;
    let tx = crate::change::begin(cx, "state add", state_file)?.redacted(&guarded.redacted);
    let _lock = tx.lock(LockName::File(&path))?;
    let (current, pre) = match cx.store().stat(&path)? {
        None => (String::new(), Precondition::Absent),
        Some(_) => {
            let (bytes, version) = cx.store().read_versioned(&path)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Error::Invalid(format!(
                    "{state_file} is not UTF-8 text: fix or remove it by hand first"
                ))
            })?;
            (text, Precondition::Matches(version))
        }
    };
    let updated = append_entry(&current, &entry);
    let updated = crate::trust::label(cx, &path, Some(&current), &updated)?;
    match crate::notes::write_hook(&tx, &path, &updated, true, &pre) {
        Some(done) => done?,
        None => drop(tx.write_if(&path, updated.as_bytes(), &pre)?),
    }
    tx.commit()?;
    Ok(StateReceipt {
        path: state_file.to_string(),
        entry,
    })
}

/// The dated entries of the running-state file (`state.md`), in file order (none when the
/// file is absent).
pub(crate) fn state_entries(cx: &Ctx) -> Result<Vec<Entry>, Error> {
    let path = MemPath::parse_file(cx.layout().state)?;
    let text = crate::notes::read_text(cx.store(), &path)?.unwrap_or_default();
    Ok(entries(&text))
}
