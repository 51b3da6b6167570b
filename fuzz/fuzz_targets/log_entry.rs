//! One log append is one entry (docs/format.md, log/YYYY-MM-DD.md): whatever text an agent
//! logs, after whatever a log already holds, the file reads back with exactly one more entry,
//! and that entry is the line memdir wrote, with its time.
#![no_main]

//!
//! Input: the log's earlier text, a NUL, then the text logged (the time comes from the bytes).
use libfuzzer_sys::fuzz_target;
use memdir_core::log::{format_entry, parse_entries};

struct Input<'a> {
    earlier: &'a str,
    text: &'a str,
}

fuzz_target!(|data: &[u8]| {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    let (earlier, text) = all.split_once('\0').unwrap_or(("", all));
    let input = Input { earlier, text };
    let sum: usize = data.iter().map(|b| usize::from(*b)).sum();
    let time = jiff::civil::time((data.len() % 24) as i8, (sum % 60) as i8, 0, 0);
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
