//! A whole log file as found on disk (hand-edited, cut short, hostile): parsing never panics,
//! every line lands in exactly one entry in file order, and every entry read on its own is one
//! entry with the same time.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_core::consolidate::log_lines;
use memdir_core::log::parse_entries;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let entries = parse_entries(text);
    let joined: String = entries.iter().map(|e| e.text.as_str()).collect();
    let lines: String = text.lines().map(|l| format!("{l}\n")).collect();
    assert_eq!(joined, lines, "every line in exactly one entry, in order");
    for e in &entries {
        let again = parse_entries(&e.text);
        assert_eq!(again.len(), 1, "{:?} reads back as one entry", e.text);
        assert_eq!(again[0].time, e.time);
        if let Some(t) = &e.time {
            assert_eq!(t.len(), 5);
        }
    }
    let day = jiff::civil::date(2026, 11, 30);
    for l in log_lines("log/2026-11-30.md", day, text) {
        assert!(
            l.line >= 1 && l.line <= text.lines().count().max(1),
            "{l:?}"
        );
    }
});
