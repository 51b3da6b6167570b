//! The credential detector on any text: it never panics; findings are in order, disjoint, on
//! character boundaries and name a real line; redaction removes every secret it found, and a
//! text redacted until clean has nothing left to find.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let found = memdir_secrets::scan(text, Some("notes/x.md"));
    let mut at = 0;
    for f in &found {
        assert!(at <= f.start && f.start < f.end && f.end <= text.len(), "{found:?}");
        assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
        assert_eq!(f.line, text[..f.start].matches('\n').count() + 1);
        at = f.end;
    }
    let redacted = memdir_secrets::redact(text, &found);
    if found.is_empty() {
        assert_eq!(redacted, text);
        return;
    }
    // One round can leave a match that the first one hid (it runs across the gap a marker
    // leaves); redacting until clean must leave nothing.
    let (clean, _) = memdir_secrets::redact_fully(text, Some("notes/x.md"), &|_| false);
    let again = memdir_secrets::scan(&clean, Some("notes/x.md"));
    assert!(again.is_empty(), "{text:?} -> {clean:?}: {again:?}");
});
