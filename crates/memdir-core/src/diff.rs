//! Line diffs for history: carrying blame through versions and undoing one change on top of
//! later ones, for backends that keep each version of a file (in memory, PostgreSQL, S3).
//! Pure: bytes and lines in, bytes and lines out.

/// One step of blame for a backend that keeps each version of a file: `lines` are the previous
/// version's lines with the change each came from; returns `text`'s lines, where a line kept
/// from the previous version keeps its change and every other line is `me`'s.
pub fn carry_lines(lines: &[(String, usize)], text: &str, me: usize) -> Vec<(String, usize)> {
    let new: Vec<&str> = text.lines().collect();
    let old: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    let mut next = Vec::with_capacity(new.len());
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for i in 0..len {
                    next.push((new[new_index + i].to_string(), lines[old_index + i].1));
                }
            }
            similar::DiffOp::Delete { .. } => {}
            similar::DiffOp::Insert {
                new_index, new_len, ..
            }
            | similar::DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for i in 0..new_len {
                    next.push((new[new_index + i].to_string(), me));
                }
            }
        }
    }
    next
}

/// Lines with their endings, so a merge gives back bytes exactly.
fn split_lines(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|&c| c == b'\n').collect()
}

/// The edits that turn `base` into `other`: (base range, replacement lines).
fn hunks<'a>(
    base: &[&'a [u8]],
    other: &[&'a [u8]],
) -> Vec<(std::ops::Range<usize>, Vec<&'a [u8]>)> {
    similar::capture_diff_slices(similar::Algorithm::Myers, base, other)
        .iter()
        .filter_map(|op| match *op {
            similar::DiffOp::Equal { .. } => None,
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => Some((old_index..old_index + old_len, Vec::new())),
            similar::DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => Some((
                old_index..old_index,
                other[new_index..new_index + new_len].to_vec(),
            )),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => Some((
                old_index..old_index + old_len,
                other[new_index..new_index + new_len].to_vec(),
            )),
        })
        .collect()
}

/// Later changes touch the same lines as the change being undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoConflict;

/// What undoing one file's change gives, for a backend that keeps each version (its revert):
/// the file's content `before` and `after` the change (`None`: absent) and `now`.
/// `Ok(None)` when there is nothing to write (the file is already as the undo wants);
/// `Ok(Some(want))` to write `want` (`None`: remove the file); a conflict when later changes
/// touch the same or neighbouring lines, or the file was created or removed since.
pub fn undo_file(
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
    now: Option<Vec<u8>>,
) -> Result<Option<Option<Vec<u8>>>, UndoConflict> {
    let want = if now == after {
        before
    } else if now == before {
        return Ok(None);
    } else {
        match (&before, &after, &now) {
            (Some(b), Some(a), Some(n)) => Some(merge_lines(a, n, b).ok_or(UndoConflict)?),
            _ => return Err(UndoConflict),
        }
    };
    Ok((want != now).then_some(want))
}

/// A three-way merge of line edits, for a backend's revert: `base` changed to `ours` by later
/// changes and to `theirs` by the undo. `None` when the two touch the same or neighbouring
/// lines (as git refuses).
pub fn merge_lines(base: &[u8], ours: &[u8], theirs: &[u8]) -> Option<Vec<u8>> {
    let b = split_lines(base);
    let mut edits: Vec<(std::ops::Range<usize>, Vec<&[u8]>)> = hunks(&b, &split_lines(ours));
    let mine = hunks(&b, &split_lines(theirs));
    for (r, _) in &mine {
        if edits
            .iter()
            .any(|(o, _)| r.start <= o.end && o.start <= r.end)
        {
            return None;
        }
    }
    edits.extend(mine);
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = Vec::with_capacity(ours.len());
    let mut at = 0;
    for (r, lines) in edits {
        for l in &b[at..r.start] {
            out.extend_from_slice(l);
        }
        for l in lines {
            out.extend_from_slice(l);
        }
        at = r.end;
    }
    for l in &b[at..] {
        out.extend_from_slice(l);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{UndoConflict, carry_lines, merge_lines, undo_file};

    #[test]
    fn undo_file_restores_skips_merges_or_refuses() {
        let v = |s: &str| Some(s.as_bytes().to_vec());
        // Untouched since: back to before; a created file is removed.
        assert_eq!(undo_file(v("a\n"), v("b\n"), v("b\n")), Ok(Some(v("a\n"))));
        assert_eq!(undo_file(None, v("b\n"), v("b\n")), Ok(Some(None)));
        // Already as before: nothing to write.
        assert_eq!(undo_file(v("a\n"), v("b\n"), v("a\n")), Ok(None));
        // A later edit elsewhere merges; one on the same line, or a removal, conflicts.
        assert_eq!(
            undo_file(v("a\nx\ny\nz\n"), v("A\nx\ny\nz\n"), v("A\nx\ny\nZ\n")),
            Ok(Some(v("a\nx\ny\nZ\n")))
        );
        assert_eq!(undo_file(v("a\n"), v("b\n"), v("c\n")), Err(UndoConflict));
        assert_eq!(undo_file(v("a\n"), v("b\n"), None), Err(UndoConflict));
    }

    #[test]
    fn merge_applies_edits_to_separate_lines_and_refuses_overlaps() {
        let base = b"a\nb\nc\nd\ne\n";
        // Later: line e changed; undo wants line a back to its old text.
        assert_eq!(
            merge_lines(base, b"a\nb\nc\nd\nE\n", b"A\nb\nc\nd\ne\n").as_deref(),
            Some(&b"A\nb\nc\nd\nE\n"[..])
        );
        assert_eq!(
            merge_lines(base, b"X\nb\nc\nd\ne\n", b"A\nb\nc\nd\ne\n"),
            None
        );
        // Neighbouring lines conflict, as in git.
        assert_eq!(
            merge_lines(base, b"a\nB\nc\nd\ne\n", b"A\nb\nc\nd\ne\n"),
            None
        );
    }

    #[test]
    fn blame_keeps_the_change_of_kept_lines() {
        let one = carry_lines(&[], "a\nb\n", 0);
        let two = carry_lines(&one, "a\nx\nb\n", 1);
        let owners: Vec<(&str, usize)> = two.iter().map(|(l, o)| (l.as_str(), *o)).collect();
        assert_eq!(owners, [("a", 0), ("x", 1), ("b", 0)]);
    }
}
