//! The folders memdir uses when told none: the memory folder and the cache home, from the XDG
//! variables, else under `HOME`.

use crate::ui::CliError;
use std::path::PathBuf;

/// The memory folder when neither `--root`, `--store` nor their variables name one:
/// `$XDG_DATA_HOME/memdir`, else `~/.local/share/memdir`.
pub(crate) fn default_root() -> Result<PathBuf, CliError> {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("memdir"));
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/share/memdir")),
        None => Err(CliError::invalid(
            "no memory folder: pass --root DIR or set MEMDIR_ROOT",
        )),
    }
}

/// `$XDG_CACHE_HOME`, else `~/.cache`: where memdir keeps caches of stores that are not folders.
pub(crate) fn cache_home() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".cache"))
}
