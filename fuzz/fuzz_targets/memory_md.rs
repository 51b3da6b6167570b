//! `MEMORY.md`, the generated index (docs/format.md): whatever the index parser accepts renders
//! back to exactly the same bytes, and an index memdir renders from any notes reads back (when
//! it reads back at all) as entries that render the same index again, so updating the index
//! from itself is stable.
#![no_main]

//!
//! Input: an index's text; after a NUL, notes to index, one per line, fields separated by tabs:
//! name, path, description, type (empty for none), `x` for external.
use libfuzzer_sys::fuzz_target;
use memdir_core::note::{IndexEntry, parse_index, render_index};

fuzz_target!(|data: &[u8]| {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    let (text, notes) = all.split_once('\0').unwrap_or((all, ""));
    if let Some(entries) = parse_index(text) {
        assert_eq!(
            render_index(&entries),
            text,
            "parse accepts only what it renders"
        );
    }
    let entries: Vec<IndexEntry> = notes
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            let mut next = || f.next().unwrap_or_default().to_string();
            IndexEntry {
                name: next(),
                path: next(),
                description: next(),
                kind: Some(next()).filter(|k| !k.is_empty()),
                external: next() == "x",
            }
        })
        .collect();
    let text = render_index(&entries);
    assert_eq!(
        render_index(&entries),
        text,
        "the same notes give the same bytes"
    );
    if let Some(back) = parse_index(&text) {
        assert_eq!(back.len(), entries.len(), "{text:?}");
        assert_eq!(render_index(&back), text, "render after parse is stable");
    }
});
