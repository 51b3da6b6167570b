//! Property tests of the on-disk format's parsers (issue 13: hostile input never panics, and
//! what memdir writes reads back as written): log lines, note frontmatter, the index.
#![allow(clippy::unwrap_used)]

use jiff::civil::Time;
use memdir_core::log::{format_entry, parse_entries};
use memdir_core::note::{Note, parse_index, render_index};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever an agent logs (several lines, blank lines, markup, control characters), the
    /// rendered entry is one entry when read back, with its time, after any earlier entries.
    #[test]
    fn a_log_entry_reads_back_as_one_entry(text in "\\PC*(\n\\PC*){0,4}", earlier in "(- 08:00 [a-z ]{1,20}\n){0,3}") {
        let time = Time::constant(9, 15, 0, 0);
        if let Ok(entry) = format_entry(time, &text) {
            let before = parse_entries(&earlier).len();
            let all = parse_entries(&format!("{earlier}{entry}"));
            prop_assert_eq!(all.len(), before + 1);
            let last = all.last().unwrap();
            prop_assert_eq!(&last.text, &entry);
            prop_assert_eq!(last.time.as_deref(), Some("09:15"));
        } else {
            prop_assert!(text.trim().is_empty());
        }
    }

    /// A note's text never fails to parse, and its body is the text's tail byte for byte.
    #[test]
    fn any_note_text_parses_and_keeps_its_body(text in "(---\n)?([a-z]{0,8}: ?\\PC{0,30}\n){0,6}(---\n)?\\PC{0,200}") {
        let note = Note::parse(&text);
        prop_assert!(text.ends_with(&note.body));
        if note.frontmatter.is_none() {
            prop_assert_eq!(&note.body, &text);
        }
    }

    /// Arbitrary text given as an index never panics the parser, and an index it accepts
    /// renders back to one it accepts with the same entries.
    #[test]
    fn the_index_parser_takes_only_what_it_renders(text in "(# [A-Za-z ]{0,12}\n|- \\[[a-z-]{1,10}\\]\\([a-z/.-]{1,20}\\) \\PC{0,30}\n|\n|\\PC{0,40}\n){0,12}") {
        if let Some(entries) = parse_index(&text) {
            let again = parse_index(&render_index(&entries));
            prop_assert_eq!(again.map(|e| e.len()), Some(entries.len()));
        }
    }
}
