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

/// Any string, control characters and line separators made common.
fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => any::<char>(),
            1 => prop::sample::select(vec![
                '\0', '\x07', '\x1b', '\r', '\n', '\t', '\x7f', '\u{85}', '\u{9b}', '\u{2028}',
                '\u{2029}', ' ', '-', ':', '<', '>',
            ]),
        ],
        0..60,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Issue 37, item 4: whatever text reaches a write path (a log entry, a state entry, an
    /// imported turn and its speaker, an imported conversation's note, a new note's fields and
    /// body, a frontmatter value), no stored line holds a control character (tab excepted) or a
    /// line separator, an imported turn is exactly one line, and the context shows none either.
    #[test]
    fn no_write_path_stores_a_control_character(a in hostile(), b in hostile()) {
        use memdir_core::text::is_unsafe;
        let clean = |s: &str| !s.chars().any(is_unsafe);
        if let Ok(e) = format_entry(Time::constant(9, 15, 0, 0), &a) {
            prop_assert!(clean(&e), "{:?}", e);
        }
        let day = jiff::civil::date(2026, 11, 30);
        if let Ok(e) = memdir_core::state::format_entry(day, &a) {
            prop_assert!(clean(&e), "{:?}", e);
        }
        let turn = memdir_core::chat::Turn {
            at: jiff::Timestamp::UNIX_EPOCH,
            speaker: a.clone(),
            text: b.clone(),
            external: false,
        };
        let (_, e) = memdir_core::chat::turn_entry(&turn, &jiff::tz::TimeZone::UTC);
        prop_assert!(clean(&e), "{:?}", e);
        prop_assert_eq!(e.lines().count(), 1, "{:?}", e);
        let c = memdir_core::chat::Conversation {
            id: b.clone(),
            title: a.clone(),
            created: None,
            turns: vec![turn],
            undated: 0,
        };
        let note = memdir_core::chat::conversation_note("n", "ChatGPT", &c, day, day, &[]);
        prop_assert!(clean(&note), "{:?}", note);
        let new = memdir_core::note::NewNote {
            name: "n",
            description: &a,
            kind: None,
            tags: &[],
            created: day,
            expires: None,
            body: &b,
        };
        if let Ok(t) = new.render() {
            prop_assert!(clean(&t), "{:?}", t);
        }
        let v = memdir_core::note::yaml_scalar(&a);
        prop_assert!(clean(&v), "{:?}", v);
        let shown = memdir_core::context::render(&[memdir_core::context::Section::new(
            "core",
            a.clone(),
            None,
            format!("{b}\n{}", memdir_core::context::fence_untrusted(&a)),
        )]);
        prop_assert!(clean(&shown), "{:?}", shown);
    }
}
