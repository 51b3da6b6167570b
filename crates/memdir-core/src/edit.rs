//! Partial edits of a text file, computed without I/O: add a line at the end or the start,
//! replace the body under a Markdown heading, or replace a text that occurs a known number of
//! times. The engine applies the result as one atomic write.
//!
//! ```
//! use memdir_core::edit::{EditOp, apply};
//! let text = "# Plan\nold step\n\n# Done\nx\n";
//! let out = apply(text, &EditOp::Section { heading: "Plan", new: "new step" }).unwrap();
//! assert_eq!(out.text, "# Plan\nnew step\n\n# Done\nx\n");
//! ```

use crate::note::Note;

/// One partial edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOp<'a> {
    /// Replace every occurrence of `old` with `new`, when there are exactly `expected`.
    Replace {
        /// The exact text to replace.
        old: &'a str,
        /// Its replacement (may be empty).
        new: &'a str,
        /// How many occurrences there must be (1 for a unique edit).
        expected: usize,
    },
    /// Add a line (or lines) at the end of the file.
    Append(&'a str),
    /// Add a line (or lines) at the start: after a note's frontmatter, if it has one.
    Prepend(&'a str),
    /// Replace the body under the heading whose text is `heading`, up to the next heading of
    /// the same or a higher level.
    Section {
        /// The heading's text, without the `#`s (a leading `#`s form is accepted too).
        heading: &'a str,
        /// The new body.
        new: &'a str,
    },
}

/// Why an edit could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The text or heading is not there: the message says what is.
    NotFound(String),
    /// The edit is ambiguous or malformed.
    Invalid(String),
}

/// An applied edit: the new text and what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The whole new text.
    pub text: String,
    /// One line saying what was done, e.g. `appended 1 line`.
    pub summary: String,
}

/// Applies `op` to `text` (the file's whole text); `file` names it in messages.
pub fn apply_to(file: &str, text: &str, op: &EditOp<'_>) -> Result<Edited, EditError> {
    match *op {
        EditOp::Replace { old, new, expected } => replace(file, text, old, new, expected),
        EditOp::Append(line) => {
            let line = non_empty(line, "append")?;
            let mut out = text.to_string();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            push_lines(&mut out, line);
            Ok(Edited {
                text: out,
                summary: format!("appended {}", lines_word(line)),
            })
        }
        EditOp::Prepend(line) => {
            let line = non_empty(line, "prepend")?;
            let start = body_start(text);
            let mut out = String::with_capacity(text.len() + line.len() + 1);
            out.push_str(&text[..start]);
            push_lines(&mut out, line);
            out.push_str(&text[start..]);
            Ok(Edited {
                text: out,
                summary: format!("prepended {}", lines_word(line)),
            })
        }
        EditOp::Section { heading, new } => section(file, text, heading, new),
    }
}

/// [`apply_to`] for a text that messages call "the file".
pub fn apply(text: &str, op: &EditOp<'_>) -> Result<Edited, EditError> {
    apply_to("the file", text, op)
}

fn non_empty<'a>(s: &'a str, what: &str) -> Result<&'a str, EditError> {
    if s.trim().is_empty() {
        return Err(EditError::Invalid(format!(
            "the text to {what} is empty: give the line to add"
        )));
    }
    Ok(s)
}

fn lines_word(s: &str) -> String {
    match s.lines().count() {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    }
}

/// Pushes `s` and ends it with a newline.
fn push_lines(out: &mut String, s: &str) {
    out.push_str(s);
    if !s.ends_with('\n') {
        out.push('\n');
    }
}

/// Where the body starts: after a closed frontmatter block, else at 0.
fn body_start(text: &str) -> usize {
    let note = Note::parse(text);
    if note.frontmatter.is_some() {
        text.len() - note.body.len()
    } else {
        0
    }
}

fn replace(
    file: &str,
    text: &str,
    old: &str,
    new: &str,
    expected: usize,
) -> Result<Edited, EditError> {
    if old.is_empty() {
        return Err(EditError::Invalid(
            "the text to replace is empty: give the exact text to change".into(),
        ));
    }
    if expected == 0 {
        return Err(EditError::Invalid(
            "expected_count is 0: give how many occurrences to replace (1 or more)".into(),
        ));
    }
    let found = text.matches(old).count();
    if found == 0 {
        return Err(EditError::NotFound(format!(
            "the text to replace was not found in {file}: read the file and copy the text exactly"
        )));
    }
    if found != expected {
        return Err(EditError::Invalid(if expected == 1 {
            format!(
                "the text to replace occurs {found} times in {file}: include more surrounding text so it occurs once, or set the expected count to {found} to replace them all"
            )
        } else {
            format!(
                "the text to replace occurs {found} times in {file}, not {expected}: nothing was changed; set the expected count to {found} to replace them all"
            )
        }));
    }
    Ok(Edited {
        text: text.replace(old, new),
        summary: if found == 1 {
            "replaced the one occurrence".to_string()
        } else {
            format!("replaced {found} occurrences")
        },
    })
}

/// A Markdown ATX heading line: its level and text.
fn heading_of(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_end_matches(['\n', '\r']);
    let indent = t.len() - t.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = &t[indent..];
    let level = t.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    // A closing run of `#`s is not part of the text.
    let rest = rest.trim();
    let rest = rest.trim_end_matches('#');
    let rest = if rest.is_empty() || rest.ends_with([' ', '\t']) {
        rest.trim_end()
    } else {
        // `# C#` keeps its `#`.
        t[level..].trim()
    };
    Some((level, rest))
}

/// The headings of a text outside fenced code: (line index, level, text).
fn headings(lines: &[&str]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if t.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        if let Some((level, text)) = heading_of(line) {
            out.push((i, level, text.to_string()));
        }
    }
    out
}

fn section(file: &str, text: &str, heading: &str, new: &str) -> Result<Edited, EditError> {
    let wanted = heading_of(heading)
        .map(|(_, t)| t)
        .unwrap_or(heading)
        .trim()
        .to_string();
    if wanted.is_empty() {
        return Err(EditError::Invalid(
            "the section heading is empty: give the heading's text, e.g. Status".into(),
        ));
    }
    let start = body_start(text);
    let (head, body) = text.split_at(start);
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let all = headings(&lines);
    let same = |t: &str| t == wanted || t.eq_ignore_ascii_case(&wanted);
    let hits: Vec<&(usize, usize, String)> = all.iter().filter(|(_, _, t)| same(t)).collect();
    let &(at, level, _) = match hits.as_slice() {
        [one] => *one,
        [] => {
            let names: Vec<String> = all.iter().map(|(_, _, t)| format!("{t:?}")).collect();
            return Err(EditError::NotFound(if names.is_empty() {
                format!(
                    "{file} has no headings, so there is no section {wanted:?}: append instead, or add the heading"
                )
            } else {
                format!(
                    "{file} has no heading {wanted:?}: its headings are {}",
                    names.join(", ")
                )
            }));
        }
        many => {
            return Err(EditError::Invalid(format!(
                "{file} has {} headings {wanted:?} (lines {}): edit with old/new instead",
                many.len(),
                many.iter()
                    .map(|(i, _, _)| (i + 1 + text[..start].lines().count()).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    let end = all
        .iter()
        .find(|(i, l, _)| *i > at && *l <= level)
        .map_or(lines.len(), |(i, _, _)| *i);
    // Blank lines that end the old section stay, so the next heading keeps its spacing.
    let mut keep_from = end;
    while keep_from > at + 1 && lines[keep_from - 1].trim().is_empty() {
        keep_from -= 1;
    }
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(head);
    for l in &lines[..=at] {
        out.push_str(l);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if !new.is_empty() {
        push_lines(&mut out, new);
    }
    for l in &lines[keep_from..] {
        out.push_str(l);
    }
    Ok(Edited {
        text: out,
        summary: format!("replaced the section {wanted:?}"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn check(text: &str, op: EditOp<'_>, want: &str) {
        assert_eq!(apply(text, &op).unwrap().text, want, "{op:?}");
    }

    fn fails(text: &str, op: EditOp<'_>) -> EditError {
        apply(text, &op).unwrap_err()
    }

    #[test]
    fn append_and_prepend() {
        check("a\nb", EditOp::Append("c"), "a\nb\nc\n");
        check("a\n", EditOp::Append("c\n"), "a\nc\n");
        check("", EditOp::Append("c"), "c\n");
        check("a\n", EditOp::Prepend("z"), "z\na\n");
        let note = "---\nname: n\ndescription: d\n---\nbody\n";
        check(
            note,
            EditOp::Prepend("first"),
            "---\nname: n\ndescription: d\n---\nfirst\nbody\n",
        );
        check(note, EditOp::Append("last"), &format!("{note}last\n"));
        assert!(matches!(
            fails("a", EditOp::Append(" ")),
            EditError::Invalid(_)
        ));
    }

    #[test]
    fn section_replaces_up_to_the_next_heading_of_its_level() {
        let text = "# Top\nintro\n\n## Status\nold 1\nold 2\n\n### Detail\ndeep\n\n## Next\nkeep\n";
        check(
            text,
            EditOp::Section {
                heading: "Status",
                new: "new",
            },
            "# Top\nintro\n\n## Status\nnew\n\n## Next\nkeep\n",
        );
        check(
            text,
            EditOp::Section {
                heading: "## next",
                new: "n1\nn2\n",
            },
            "# Top\nintro\n\n## Status\nold 1\nold 2\n\n### Detail\ndeep\n\n## Next\nn1\nn2\n",
        );
        // A heading inside a code fence is not a heading.
        let fenced = "## A\nx\n```\n## B\n```\n## B\ny\n";
        check(
            fenced,
            EditOp::Section {
                heading: "A",
                new: "z",
            },
            "## A\nz\n## B\ny\n",
        );
        check(
            "---\nname: n\n---\n# S\nold\n",
            EditOp::Section {
                heading: "S",
                new: "",
            },
            "---\nname: n\n---\n# S\n",
        );
        let e = fails(
            text,
            EditOp::Section {
                heading: "Missing",
                new: "x",
            },
        );
        assert_eq!(
            e,
            EditError::NotFound(
                "the file has no heading \"Missing\": its headings are \"Top\", \"Status\", \"Detail\", \"Next\"".into()
            )
        );
        let twice = "## A\n1\n## A\n2\n";
        assert!(matches!(
            fails(twice, EditOp::Section { heading: "A", new: "x" }),
            EditError::Invalid(m) if m.contains("lines 1, 3")
        ));
    }

    #[test]
    fn replace_needs_the_expected_count() {
        let text = "tea, tea and tea\n";
        check(
            text,
            EditOp::Replace {
                old: "tea",
                new: "coffee",
                expected: 3,
            },
            "coffee, coffee and coffee\n",
        );
        let e = fails(
            text,
            EditOp::Replace {
                old: "tea",
                new: "x",
                expected: 2,
            },
        );
        assert!(
            matches!(&e, EditError::Invalid(m) if m.contains("3 times") && m.contains("not 2")),
            "{e:?}"
        );
        let e = fails(
            text,
            EditOp::Replace {
                old: "tea",
                new: "x",
                expected: 1,
            },
        );
        assert!(
            matches!(&e, EditError::Invalid(m) if m.contains("occurs once")),
            "{e:?}"
        );
        assert!(matches!(
            fails(
                text,
                EditOp::Replace {
                    old: "milk",
                    new: "x",
                    expected: 1
                }
            ),
            EditError::NotFound(_)
        ));
        assert!(matches!(
            fails(
                text,
                EditOp::Replace {
                    old: "tea",
                    new: "x",
                    expected: 0
                }
            ),
            EditError::Invalid(_)
        ));
    }

    #[test]
    fn heading_forms() {
        assert_eq!(heading_of("## Status ##\n"), Some((2, "Status")));
        assert_eq!(heading_of("# C#\n"), Some((1, "C#")));
        assert_eq!(heading_of("#hashtag\n"), None);
        assert_eq!(heading_of("    # code\n"), None);
    }
}
