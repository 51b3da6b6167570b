//! A note's frontmatter and body: parsing never fails, and rendering a parsed note gives back
//! every byte of the file (docs/format.md: memdir never rewrites a note it only reads). A note
//! `memdir note new` writes reads back with the name and description it was given, and a note
//! marked external reads as external whatever its frontmatter holds, and search's prefilter
//! (`may_hold_external`) never rules out a note the parser calls external.
#![no_main]

//!
//! Input: the file's text; after a NUL, a new note's name, description, type, comma-separated
//! tags and body, separated by NULs (so the seeds are plain notes).
use libfuzzer_sys::fuzz_target;
use memdir_core::external::may_hold_external;
use memdir_core::note::{NewNote, Note, mark_external};

struct Input<'a> {
    text: &'a str,
    name: &'a str,
    description: &'a str,
    kind: Option<&'a str>,
    tags: Vec<String>,
    body: &'a str,
}

fuzz_target!(|data: &[u8]| {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    let mut f = all.split('\0');
    let mut next = || f.next().unwrap_or_default();
    let input = Input {
        text: next(),
        name: next(),
        description: next(),
        kind: Some(next()).filter(|k| !k.is_empty()),
        tags: next()
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        body: next(),
    };
    let note = Note::parse(input.text);
    assert_eq!(
        note.render(),
        input.text,
        "a parsed note renders back byte for byte"
    );
    let lines = input.text.lines().count() + 1;
    for e in &note.errors {
        assert!(
            e.line >= 1 && e.line <= lines,
            "error line {} of {lines}",
            e.line
        );
        assert!(!e.message.contains('\n'), "one-line error: {:?}", e.message);
    }
    if note.frontmatter.is_none() {
        assert_eq!(note.body, input.text);
    } else {
        assert!(input.text.ends_with(&note.body));
    }

    // Search skips the notes its prefilter rules out without parsing them: it may never rule
    // out one the parser calls external.
    if note.is_external() {
        assert!(
            may_hold_external(input.text.as_bytes()),
            "an external note the prefilter misses: {:?}",
            input.text
        );
    }

    let marked = mark_external(input.text);
    assert!(
        Note::parse(&marked).is_external(),
        "marked external: {marked:?}"
    );

    let day = jiff::civil::date(2026, 11, 30);
    let new = NewNote {
        name: input.name,
        description: input.description,
        kind: input.kind,
        tags: &input.tags,
        created: day,
        expires: None,
        body: input.body,
    };
    // Control characters are folded on the way in (to U+FFFD or a space): compare the rest.
    // (main folds other invisible characters too), so compare only plain ASCII text.
    let control = |s: &str| {
        !s.chars()
            .all(|c| c.is_ascii_graphic() || c == ' ' || c == '\n')
    };
    let plain = !control(input.name)
        && !control(input.description)
        && !control(input.kind.unwrap_or(""))
        && !control(input.body);
    if let Ok(text) = new.render()
        && plain
    {
        let back = Note::parse(&text);
        assert_eq!(back.render(), text);
        assert!(back.errors.is_empty(), "{text:?}: {:?}", back.errors);
        assert_eq!(back.meta.name.as_deref(), Some(input.name), "{text:?}");
        assert_eq!(
            back.meta.description.as_deref(),
            Some(input.description.trim()),
            "{text:?}"
        );
        assert_eq!(back.meta.kind.as_deref(), input.kind, "{text:?}");
        assert_eq!(back.meta.tags, input.tags, "{text:?}");
        assert!(back.body.starts_with(input.body), "{text:?}");
        assert!(back.is_indexable());
    }
});
