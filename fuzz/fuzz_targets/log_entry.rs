//! One log append is one entry (docs/format.md, log/YYYY-MM-DD.md): whatever text an agent
//! logs, after whatever a log already holds, the file reads back with exactly one more entry,
//! and that entry is the line memdir wrote, with its time.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use memdir_core::log::{format_entry, parse_entries};

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    hour: u8,
    minute: u8,
    earlier: &'a str,
    text: &'a str,
}

fuzz_target!(|input: Input<'_>| {
    let time = jiff::civil::time((input.hour % 24) as i8, (input.minute % 60) as i8, 0, 0);
    let Ok(entry) = format_entry(time, input.text) else {
        assert!(input.text.trim().is_empty(), "only blank text is refused");
        return;
    };
    assert_eq!(parse_entries(&entry).len(), 1, "{entry:?} is one entry");
    // What the store appends after: a log whose last line is ended (the store adds the
    // missing newline before it appends).
    let mut file = input.earlier.to_string();
    if !file.is_empty() && !file.ends_with('\n') {
        file.push('\n');
    }
    let before = parse_entries(&file);
    file.push_str(&entry);
    let after = parse_entries(&file);
    assert_eq!(after.len(), before.len() + 1, "{file:?}");
    let last = after.last().map(|e| (e.time.clone(), e.text.clone()));
    let want = time.strftime("%H:%M").to_string();
    assert_eq!(last, Some((Some(want), entry.clone())), "{file:?}");
});
