//! `state.md` (docs/format.md): an appended entry reads back as one more dated entry with its
//! text, and a sweep's split keeps every byte, each line either kept or moved, never both.
#![no_main]

//!
//! Input: `state.md`'s text, a NUL, then the text of a new entry (the days come from the bytes).
use libfuzzer_sys::fuzz_target;
use memdir_core::state::{append_entry, entries, format_entry, split_older_than};

struct Input<'a> {
    current: &'a str,
    text: &'a str,
    day: u16,
    cutoff: u16,
}

fn day(n: u16) -> jiff::civil::Date {
    let base = jiff::civil::date(2020, 1, 1);
    base.checked_add(jiff::Span::new().days(i64::from(n % 4000)))
        .unwrap_or(base)
}

fuzz_target!(|data: &[u8]| {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    let (current, text) = all.split_once('\0').unwrap_or((all, "x"));
    let sum: u16 = data
        .iter()
        .fold(0u16, |a, b| a.wrapping_mul(31).wrapping_add(u16::from(*b)));
    let input = Input {
        current,
        text,
        day: sum,
        cutoff: (data.len() as u16).wrapping_mul(97),
    };
    let current = input.current;
    let before = entries(current);
    for e in &before {
        assert!(e.line >= 1 && e.line <= current.lines().count(), "{e:?}");
    }

    let split = split_older_than(current, day(input.cutoff));
    // Lines are kept or moved whole; interleaving them back in file order gives the text
    // (the moved part gets a final newline if the file had none).
    let (mut kept, mut moved) = (split.kept.as_str(), split.moved.as_str());
    for line in current.split_inclusive('\n') {
        if let Some(rest) = kept.strip_prefix(line) {
            kept = rest;
        } else if !line.ends_with('\n') && moved == format!("{line}\n") {
            moved = "";
        } else if let Some(rest) = moved.strip_prefix(line) {
            moved = rest;
        } else {
            panic!("line {line:?} neither kept nor moved: {split:?}");
        }
    }
    assert!(
        kept.is_empty() && moved.is_empty(),
        "bytes added: {split:?}"
    );
    assert_eq!(
        entries(&split.moved).len(),
        split.moved_entries,
        "{split:?}"
    );
    assert!(
        entries(&split.kept)
            .iter()
            .all(|e| e.date >= day(input.cutoff))
    );

    let Ok(entry) = format_entry(day(input.day), input.text) else {
        assert!(input.text.trim().is_empty());
        return;
    };
    let after = entries(&append_entry(current, &entry));
    assert_eq!(after.len(), before.len() + 1, "{current:?} + {entry:?}");
    let last = after.last().map(|e| (e.date, e.text.clone()));
    let want: Vec<&str> = input
        .text
        .trim_end()
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    let got = last.as_ref().map(|(_, t)| t.clone()).unwrap_or_default();
    assert_eq!(last.map(|(d, _)| d), Some(day(input.day)));
    // The entry's text is the logged text with each line's edges trimmed.
    let want_trimmed: Vec<&str> = want.iter().map(|l| l.trim()).collect();
    let got_lines: Vec<&str> = got.lines().map(str::trim).collect();
    // Control characters are folded on the way in (to U+FFFD): compare texts without them.
    if input
        .text
        .chars()
        .all(|c| c.is_ascii_graphic() || c == ' ' || c == '\n')
    {
        assert_eq!(got_lines, want_trimmed, "{entry:?}");
    }
});
