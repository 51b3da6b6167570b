//! What `memdir forget` removes, as a pure function of a path and its bytes: every backend's
//! history rewrite and the engine's rewrite of the current files apply the same [`Forget`], so
//! the newest version in history is exactly the files as forget leaves them.
//!
//! A forget names either one file ([`Forget::file`], removed from every version) or a text
//! ([`Forget::lines`]): every line containing it is removed, in every file (or those a glob
//! matches), in every version. The text is matched byte for byte, case and all, so what is
//! removed is exactly what a `grep -F` of the text finds.
//!
//! ```
//! use memdir_core::forget::{Forget, Scrub};
//! let f = Forget::lines("12 Elm Street", None).unwrap();
//! let out = f.scrub("notes/me.md", b"name: Ann\naddress: 12 Elm Street\nlikes: tea\n");
//! assert_eq!(out, Scrub::Rewrite(b"name: Ann\nlikes: tea\n".to_vec(), 1));
//! assert_eq!(f.scrub("notes/me.md", b"nothing here\n"), Scrub::Keep);
//! ```

use crate::path::MemPath;
use globset::GlobSet;

/// What to forget.
#[derive(Debug, Clone)]
pub struct Forget {
    target: Target,
}

#[derive(Debug, Clone)]
enum Target {
    File(MemPath),
    Lines {
        text: String,
        glob: Option<(String, GlobSet)>,
    },
}

/// What forgetting does to one version of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scrub {
    /// Nothing in it is forgotten.
    Keep,
    /// The whole file goes.
    Drop,
    /// The file without the forgotten lines, and how many lines went.
    Rewrite(Vec<u8>, usize),
}

impl Forget {
    /// Forgets the file at `path`, in every version.
    pub fn file(path: MemPath) -> Forget {
        Forget {
            target: Target::File(path),
        }
    }

    /// Forgets every line containing `text`, in the files `glob` matches (every file when
    /// `None`; a glob like `notes/**`, or a folder, which means everything under it).
    pub fn lines(text: &str, glob: Option<&str>) -> Result<Forget, String> {
        if text.trim().is_empty() {
            return Err(
                "forget --match needs a text that is not blank: every line would match".into(),
            );
        }
        if text.contains('\n') {
            return Err(
                "forget --match takes text within one line: lines are removed whole, one at a time"
                    .into(),
            );
        }
        let glob = glob
            .map(|g| crate::path::path_glob(g).map(|set| (g.to_string(), set)))
            .transpose()?;
        Ok(Forget {
            target: Target::Lines {
                text: text.to_string(),
                glob,
            },
        })
    }

    /// The file this forgets, when it forgets a file.
    pub fn path(&self) -> Option<&MemPath> {
        match &self.target {
            Target::File(p) => Some(p),
            Target::Lines { .. } => None,
        }
    }

    /// The text whose lines this forgets, when it forgets lines.
    pub fn text(&self) -> Option<&str> {
        match &self.target {
            Target::File(_) => None,
            Target::Lines { text, .. } => Some(text),
        }
    }

    /// True when the file at `path` is one this forget looks into.
    pub fn covers(&self, path: &str) -> bool {
        match &self.target {
            Target::File(p) => p.as_str() == path || index_link(p, path).is_some(),
            Target::Lines { glob, .. } => glob.as_ref().is_none_or(|(_, g)| g.is_match(path)),
        }
    }

    /// What forgetting does to the version `bytes` of the file at `path`.
    pub fn scrub(&self, path: &str, bytes: &[u8]) -> Scrub {
        if !self.covers(path) {
            return Scrub::Keep;
        }
        match &self.target {
            Target::File(p) if p.as_str() == path => Scrub::Drop,
            // A generated index (`MEMORY.md`, a folder's index) lists the file by its
            // description: that line goes with it.
            Target::File(p) => {
                match index_link(p, path).and_then(|link| remove_lines(bytes, link.as_bytes())) {
                    Some((out, n)) => Scrub::Rewrite(out, n),
                    None => Scrub::Keep,
                }
            }
            Target::Lines { text, .. } => match remove_lines(bytes, text.as_bytes()) {
                Some((out, n)) => Scrub::Rewrite(out, n),
                None => Scrub::Keep,
            },
        }
    }

    /// A commit message (or any recorded text: a reason) without the forgotten text: each
    /// line holding it becomes `[forgotten]`; `None` when nothing in it is forgotten. A file
    /// forget leaves messages alone: they name the path, not the content.
    pub fn scrub_message(&self, message: &str) -> Option<String> {
        let text = self.text()?;
        if !message.contains(text) {
            return None;
        }
        let mut out = String::with_capacity(message.len());
        for line in message.split_inclusive('\n') {
            if line.contains(text) {
                out.push_str("[forgotten]");
                if line.ends_with('\n') {
                    out.push('\n');
                }
            } else {
                out.push_str(line);
            }
        }
        Some(out)
    }
}

/// When `index` is a generated index (`MEMORY.md`) in a folder above `file`, the link target
/// its line for `file` holds: `(notes/a.md)`, relative to the index's folder.
fn index_link(file: &MemPath, index: &str) -> Option<String> {
    let dir = index.strip_suffix(crate::note::INDEX_FILE)?;
    if !(dir.is_empty() || dir.ends_with('/')) {
        return None;
    }
    let rel = file.as_str().strip_prefix(dir)?;
    Some(format!("]({rel})"))
}

/// `bytes` without every line that contains `needle` (a line keeps its own line ending), and
/// how many lines went; `None` when no line does.
fn remove_lines(bytes: &[u8], needle: &[u8]) -> Option<(Vec<u8>, usize)> {
    if needle.is_empty() || !contains(bytes, needle) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut removed = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if contains(line, needle) {
            removed += 1;
        } else {
            out.extend_from_slice(line);
        }
    }
    Some((out, removed))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_whole_and_the_rest_stays_byte_for_byte() {
        let f = Forget::lines("sk-live", None).unwrap();
        let text = b"a\r\nkey sk-live-1\r\nb\nlast sk-live";
        assert_eq!(
            f.scrub("x.md", text),
            Scrub::Rewrite(b"a\r\nb\n".to_vec(), 2)
        );
        assert_eq!(f.scrub("x.md", b"sk-liv\n"), Scrub::Keep);
    }

    #[test]
    fn a_glob_limits_the_files() {
        let f = Forget::lines("x", Some("notes/**")).unwrap();
        assert_eq!(f.scrub("log/2026-01-01.md", b"x\n"), Scrub::Keep);
        assert_eq!(
            f.scrub("notes/a/b.md", b"x\n"),
            Scrub::Rewrite(Vec::new(), 1)
        );
        let folder = Forget::lines("x", Some("notes")).unwrap();
        assert!(folder.covers("notes/a.md"));
        assert!(Forget::lines("x", Some("a[")).is_err());
    }

    #[test]
    fn a_file_forget_drops_only_that_file() {
        let f = Forget::file(MemPath::parse("notes/a.md").unwrap());
        assert_eq!(f.scrub("notes/a.md", b"x"), Scrub::Drop);
        assert_eq!(f.scrub("notes/ab.md", b"x"), Scrub::Keep);
        assert_eq!(f.scrub_message("write notes/a.md\n"), None);
        // Its line in a generated index goes with it, and only its line.
        let index = b"# Memory index\n- [a](notes/a.md) \xe2\x80\x94 x\n- [ab](notes/ab.md) \xe2\x80\x94 y\n";
        match f.scrub("MEMORY.md", index) {
            Scrub::Rewrite(out, 1) => {
                assert!(!String::from_utf8(out).unwrap().contains("(notes/a.md)"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            f.scrub("notes/MEMORY.md", b"- [a](a.md) x\n"),
            Scrub::Rewrite(Vec::new(), 1)
        );
        assert_eq!(f.scrub("log/x.md", b"- [a](notes/a.md)\n"), Scrub::Keep);
    }

    #[test]
    fn messages_lose_the_lines_that_hold_the_text() {
        let f = Forget::lines("Elm", None).unwrap();
        assert_eq!(
            f.scrub_message("write a\n\nmoved to Elm St\n\nMemdir-Reason: moved to Elm St\n")
                .unwrap(),
            "write a\n\n[forgotten]\n\n[forgotten]\n"
        );
        assert!(Forget::lines("  ", None).is_err());
        assert!(Forget::lines("a\nb", None).is_err());
    }
}
