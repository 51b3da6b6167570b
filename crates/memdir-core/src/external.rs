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
use crate::note::EXTERNAL;

/// False only when no line of `text` can be external, decided from its bytes alone, so search
/// neither decodes nor parses the frontmatter of every note it finds a line in. Every mark
/// [`external_lines`] knows spells "external" (a note's `source` in any ASCII case), unless the
/// frontmatter spells the word otherwise, which YAML allows only through an escape (`\`) or a
/// tag (`!`, as in `!!binary`).
pub fn may_hold_external(text: &[u8]) -> bool {
    // Found by its rarest letter: an `x` is a few bytes in a thousand of English text, so the
    // scan runs at memchr's speed and few places are compared.
    let word = EXTERNAL.as_bytes();
    let spelled = memchr::memchr2_iter(b'x', b'X', text).any(|i| {
        i.checked_sub(1)
            .and_then(|start| text.get(start..start + word.len()))
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    });
    spelled
        || crate::note::frontmatter_bytes(text)
            .iter()
            .any(|&c| c == b'\\' || c == b'!')
}

/// [`external_lines`] of a file's bytes, empty when none can be external (most files: those
/// are neither decoded nor split into lines).
pub fn external_lines_of(bytes: &[u8]) -> Vec<bool> {
    if !may_hold_external(bytes) {
        return Vec::new();
    }
    marked_lines(&String::from_utf8_lossy(bytes))
}

/// One flag per line of `text` (as [`str::lines`] splits it): true where the line came from an
/// external source.
pub fn external_lines(text: &str) -> Vec<bool> {
    if !may_hold_external(text.as_bytes()) {
        return vec![false; text.lines().count()];
    }
    marked_lines(text)
}

/// [`external_lines`] of text the prefilter did not rule out.
fn marked_lines(text: &str) -> Vec<bool> {
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
    use crate::note::Note;
    use proptest::prelude::*;

    /// Every way the tests know of to make a note external is seen by the prefilter, and text
    /// that cannot spell the word is not (so search skips it unparsed).
    #[test]
    fn the_prefilter_sees_every_spelling_of_an_external_source() {
        let external = [
            "---\nsource: external\n---\nbody\n",
            "---\nsource: ExTeRnAl\n---\n",
            "---\nsource: \"\\x65xternal\"\n---\n",
            "---\nsource: \"\\u0045XTERNAL\"\n---\n",
            "---\n\"sourc\\x65\": \"ext\\\n  ernal\"\n---\n",
            "\u{feff}---\nsource: \"\\x65xternal\"\n---\n",
            "---\x0b\nsource: \"\\x65xternal\"\n---\n",
        ];
        for t in external {
            assert!(Note::parse(t).is_external(), "{t:?} is external");
            assert!(may_hold_external(t.as_bytes()), "{t:?}");
        }
        for t in [
            "- 09:00 [external] fetched\n",
            "<!-- source: external -->\nscratch\n",
            "---\nsource: !!binary ZXh0ZXJuYWw=\n---\n",
        ] {
            assert!(may_hold_external(t.as_bytes()), "{t:?}");
        }
        for t in [
            "- 09:00 a plain entry\n",
            "---\nname: x\ndescription: 50% done\n---\nGreat! A \\ in the body.\n",
            "no frontmatter! \\ here\n",
        ] {
            assert!(!may_hold_external(t.as_bytes()), "{t:?}");
            assert_eq!(external_lines(t), vec![false; t.lines().count()], "{t:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        /// A note the parser calls external always passes the prefilter, whatever its source
        /// value's spelling: quoted, escaped, cased, tagged or folded.
        #[test]
        fn no_external_note_escapes_the_prefilter(
            key in prop::sample::select(vec!["source", "\"source\"", "'source'", "\"sourc\\x65\"", "Source"]),
            value in "[\"' ]{0,2}(\\\\[xu]00?[46]5|[eE])[xX](\\\\x74|[tT])[eE][rR][nN][aA][lL][\"' ]{0,2}",
            tag in prop::sample::select(vec!["", "!!str ", "! "]),
            before in "[a-z: \n]{0,12}",
        ) {
            let t = format!("---\n{before}\n{key}: {tag}{value}\n---\nbody\n");
            if Note::parse(&t).is_external() {
                prop_assert!(may_hold_external(t.as_bytes()), "{t:?}");
            }
        }
    }

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
