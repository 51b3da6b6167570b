//! The credential detector on any text: it never panics; findings are in order, disjoint, on
//! character boundaries and name a real line; redaction removes every secret it found, and a
//! redacted text has nothing left to find (redaction is stable, so a rewrite never grows).
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
    let again = memdir_secrets::scan(&redacted, Some("notes/x.md"));
    assert!(again.is_empty(), "{text:?} -> {redacted:?}: {again:?}");
});
