//! What one change did to each file, stored backwards: how to get the content *before* the
//! change from the content *after* it.
//!
//! The newest content of a file is the file itself (`memdir.files`), so history never stores it
//! again. Each change keeps, per file, the bytes it removed or replaced: an append keeps nothing
//! but the length to cut back to, a one-line edit keeps the old line, a removal keeps the
//! removed file. Any version is the current file with the changes after it undone, newest first,
//! as RCS keeps its reverse deltas. A history therefore grows with the bytes changed, not with the
//! file's size times the number of changes.
//!
//! A change's files are encoded together with postcard (varint lengths) into one `bytea`, so a
//! change is one row whatever it touched.

use serde::{Deserialize, Serialize};

/// One file a change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rev {
    /// The file's path.
    pub path: String,
    /// The file as it was before the change.
    pub before: Before,
}

/// The content before a change, in terms of the content after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Before {
    /// The change created the file.
    Absent,
    /// The first `head` bytes of the content after (none when the change removed the file),
    /// then `data`, then its last `tail` bytes.
    Edit { head: u64, data: Vec<u8>, tail: u64 },
}

impl Before {
    /// How to get `before` back from `after`: the bytes they share at each end are referred to,
    /// the rest of `before` is kept. An append (`after` = `before` + new bytes) keeps nothing.
    pub(crate) fn between(before: Option<&[u8]>, after: Option<&[u8]>) -> Before {
        let Some(before) = before else {
            return Before::Absent;
        };
        let after = after.unwrap_or_default();
        let head = before.iter().zip(after).take_while(|(a, b)| a == b).count();
        let room = before.len().min(after.len()) - head;
        let tail = before
            .iter()
            .rev()
            .zip(after.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        Before::Edit {
            head: head as u64,
            data: before[head..before.len() - tail].to_vec(),
            tail: tail as u64,
        }
    }

    /// The content before, from the content after; `None` when the stored delta does not fit
    /// `after` (the history rows and the files disagree).
    pub(crate) fn apply(&self, after: Option<&[u8]>) -> Option<Option<Vec<u8>>> {
        match self {
            Before::Absent => Some(None),
            Before::Edit { head, data, tail } => {
                let after = after.unwrap_or_default();
                let (head, tail) = (usize::try_from(*head).ok()?, usize::try_from(*tail).ok()?);
                if head.checked_add(tail)? > after.len() {
                    return None;
                }
                let mut out = Vec::with_capacity(head + data.len() + tail);
                out.extend_from_slice(&after[..head]);
                out.extend_from_slice(data);
                out.extend_from_slice(&after[after.len() - tail..]);
                Some(Some(out))
            }
        }
    }
}

/// A change's files as stored.
pub(crate) fn encode(revs: &[Rev]) -> Vec<u8> {
    // Encoding plain structs and vectors into a vector cannot fail.
    postcard::to_allocvec(revs).unwrap_or_default()
}

/// A change's files from their stored bytes.
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<Rev>, String> {
    postcard::from_bytes(bytes).map_err(|e| format!("a stored change cannot be read: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// `between` then `apply` gives `before` back, and stores only what `after` lacks.
    fn check(before: Option<&str>, after: Option<&str>, kept: usize) {
        let d = Before::between(before.map(str::as_bytes), after.map(str::as_bytes));
        let back = d.apply(after.map(str::as_bytes)).unwrap();
        assert_eq!(back.as_deref(), before.map(str::as_bytes), "{d:?}");
        let stored = match &d {
            Before::Absent => 0,
            Before::Edit { data, .. } => data.len(),
        };
        assert_eq!(stored, kept, "{d:?}");
        let revs = vec![Rev {
            path: "log/2026-12-04.md".into(),
            before: d,
        }];
        assert_eq!(decode(&encode(&revs)).unwrap(), revs);
    }

    #[test]
    fn deltas_keep_only_what_the_change_removed() {
        // An append keeps nothing.
        check(Some("- 09:00 a\n"), Some("- 09:00 a\n- 09:05 b\n"), 0);
        // A created file, a removed one.
        check(None, Some("new\n"), 0);
        check(Some("gone\n"), None, 5);
        // One line replaced in the middle: the old line only.
        check(Some("a\nold\nc\n"), Some("a\nnew line\nc\n"), 3);
        // A prepend, a cut, a rewrite, and repeats that could match at either end.
        check(Some("b\n"), Some("a\nb\n"), 0);
        check(Some("a\nb\nc\n"), Some("a\nc\n"), 2);
        check(Some("xyz"), Some("abc"), 3);
        check(Some("aaaa"), Some("aa"), 2);
        check(Some("aa"), Some("aaaa"), 0);
        check(Some(""), Some(""), 0);
        check(Some(""), None, 0);
    }

    #[test]
    fn an_append_is_a_few_bytes_stored() {
        let day = "- 09:00 decided\n".repeat(200);
        let d = Before::between(
            Some(day.as_bytes()),
            Some(format!("{day}- 10:00 x\n").as_bytes()),
        );
        assert!(
            encode(&[Rev {
                path: "log/2026-12-04.md".into(),
                before: d
            }])
            .len()
                < 32
        );
    }

    #[test]
    fn a_delta_that_does_not_fit_is_refused() {
        let d = Before::between(Some(b"abcdef"), Some(b"abcxef"));
        assert_eq!(d.apply(Some(b"ab")), None);
        assert!(decode(b"\xff\xff\xff").is_err());
    }
}
