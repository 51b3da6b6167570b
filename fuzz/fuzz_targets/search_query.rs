//! The ranked query syntax (quoted phrases, `-word`, `type:`/`tag:`/`name:` filters): parsing
//! never fails, every part it finds is text the query holds (nothing invented, nothing empty),
//! and reading dates and terms out of any query never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_core::dates::{asks_when, names_time, query_days};
use memdir_core::query::{Filter, Query};
use memdir_core::tokenize::Tokenizer;
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let q = Query::parse(input);
    for p in &q.phrases {
        assert!(
            !p.trim().is_empty() && p.trim() == p,
            "{input:?}: phrase {p:?}"
        );
        assert!(input.contains(p.as_str()), "{input:?}: phrase {p:?}");
        assert!(!p.contains('"'));
    }
    for w in &q.excluded {
        assert!(!w.is_empty() && !w.starts_with('-'), "{input:?}: -{w:?}");
        assert!(!w.chars().any(char::is_whitespace), "{input:?}: -{w:?}");
        assert!(input.contains(&format!("-{w}")), "{input:?}: -{w:?}");
    }
    for f in &q.filters {
        let v = match f {
            Filter::Type(v) | Filter::Tag(v) | Filter::Name(v) => v,
        };
        assert!(
            !v.is_empty() && v.trim() == v && input.contains(v.as_str()),
            "{input:?}: {f:?}"
        );
    }
    for w in q.text.split(' ') {
        assert!(input.contains(w), "{input:?}: word {w:?}");
    }
    assert_eq!(q.text.trim(), q.text);
    let parts: usize = q.text.len()
        + q.phrases.iter().map(String::len).sum::<usize>()
        + q.excluded.iter().map(String::len).sum::<usize>();
    assert!(parts <= input.len(), "{input:?}: {q:?}");
    assert_eq!(Query::parse(input), q, "deterministic");

    static TOK: OnceLock<Tokenizer> = OnceLock::new();
    let tok = TOK.get_or_init(Tokenizer::new);
    let terms = tok.query_terms(input);
    assert!(terms.iter().all(|t| !t.is_empty()));
    let today = jiff::civil::date(2026, 11, 30);
    if let Some(days) = query_days(input, today) {
        let c = days.closeness(today);
        assert!((0.0..=1.0).contains(&c), "{input:?}: closeness {c}");
    }
    let _ = (asks_when(input), names_time(input));
});
