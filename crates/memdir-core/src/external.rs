//! Which lines of a file came from an external source, by the marks the context fences them
//! by: a note or an offload labelled `source: external` in its frontmatter, a scratch file
//! that starts with [`EXTERNAL_SCRATCH_MARK`], a log entry marked [`EXTERNAL_MARK`] (its
//! continuation lines too), and whatever lies inside an untrusted block (`MEMORY.md`'s group of
//! external notes). Search marks its hits on these lines, so an agent reading search results
//! can tell data from instructions as it can in the context.
//!
//! ```
//! use memdir_core::external::external_lines;
//! let log = "- 09:00 mine\n- 09:05 [external] fetched\n  more of it\n- 09:10 mine again\n";
//! assert_eq!(external_lines(log), [false, true, true, false]);
//! ```

use crate::context::{FENCE_CLOSE, FENCE_OPEN};
use crate::log::{EXTERNAL_MARK, EXTERNAL_SCRATCH_MARK};

/// One flag per line of `text` (as [`str::lines`] splits it): true where the line came from an
/// external source.
pub fn external_lines(text: &str) -> Vec<bool> {
    let n = text.lines().count();
    let whole = text.lines().next() == Some(EXTERNAL_SCRATCH_MARK)
        || (text.starts_with("---") && crate::note::Note::parse(text).is_external());
    if whole {
        return vec![true; n];
    }
    let mut out = Vec::with_capacity(n);
    // The closing line of the untrusted block we are in.
    let mut close: Option<String> = None;
    // True while the lines continue an external log entry.
    let mut entry = false;
    for line in text.lines() {
        if let Some(c) = &close {
            if line == c {
                close = None;
            }
            out.push(true);
            continue;
        }
        if line.starts_with(FENCE_OPEN) {
            let id = line.split("id=\"").nth(1).and_then(|r| r.split('"').next());
            close = Some(format!("{FENCE_CLOSE}{}\">", id.unwrap_or("")));
            entry = false;
            out.push(true);
            continue;
        }
        let continues = line.starts_with(' ') || line.starts_with('\t');
        if !continues {
            entry = line.strip_prefix("- ").is_some_and(|r| {
                let time = r.get(..5).is_some_and(|t| {
                    let b = t.as_bytes();
                    b[2] == b':'
                        && b.iter()
                            .enumerate()
                            .all(|(i, c)| i == 2 || c.is_ascii_digit())
                });
                time && r
                    .get(6..)
                    .is_some_and(|rest| rest.starts_with(EXTERNAL_MARK))
            });
        }
        out.push(entry);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mark_the_context_fences_by() {
        let note = "---\nname: x\ndescription: d\nsource: external\n---\nbody\n";
        assert_eq!(external_lines(note), vec![true; 6]);
        let own = "---\nname: x\ndescription: d\n---\nbody <untrusted\n";
        assert_eq!(external_lines(own), vec![false; 5]);
        let scratch = format!("{EXTERNAL_SCRATCH_MARK}\nfetched\n");
        assert_eq!(external_lines(&scratch), [true, true]);
        let index = crate::note::render_index(&[
            crate::note::IndexEntry {
                name: "a".into(),
                path: "notes/a.md".into(),
                description: "own".into(),
                kind: None,
                external: false,
            },
            crate::note::IndexEntry {
                name: "b".into(),
                path: "notes/b.md".into(),
                description: "from the web".into(),
                kind: None,
                external: true,
            },
        ]);
        let marks = external_lines(&index);
        for (line, external) in index.lines().zip(&marks) {
            assert_eq!(
                *external,
                line.starts_with("<untrusted")
                    || line.starts_with("(Untrusted")
                    || line.starts_with("</untrusted")
                    || line.contains("notes/b.md"),
                "{line}"
            );
        }
        let log =
            "- 09:00 [external] a\n\tb\n- 9:00 [external] not a time\n- 10:00 own [external]\n";
        assert_eq!(external_lines(log), [true, true, false, false]);
    }
}
