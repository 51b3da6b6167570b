//! `MEMORY.md`, the generated index (docs/format.md): whatever the index parser accepts renders
//! back to exactly the same bytes, and an index memdir renders from any notes reads back (when
//! it reads back at all) as entries that render the same index again, so updating the index
//! from itself is stable.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use memdir_core::note::{IndexEntry, parse_index, render_index};

#[derive(Arbitrary, Debug)]
struct Line {
    name: String,
    path: String,
    description: String,
    kind: Option<String>,
    external: bool,
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    text: &'a str,
    lines: Vec<Line>,
}

fuzz_target!(|input: Input<'_>| {
    if let Some(entries) = parse_index(input.text) {
        assert_eq!(render_index(&entries), input.text, "parse accepts only what it renders");
    }
    let entries: Vec<IndexEntry> = input
        .lines
        .into_iter()
        .map(|l| IndexEntry {
            name: l.name,
            path: l.path,
            description: l.description,
            kind: l.kind,
            external: l.external,
        })
        .collect();
    let text = render_index(&entries);
    assert_eq!(render_index(&entries), text, "the same notes give the same bytes");
    if let Some(back) = parse_index(&text) {
        assert_eq!(back.len(), entries.len(), "{text:?}");
        assert_eq!(render_index(&back), text, "render after parse is stable");
    }
});
