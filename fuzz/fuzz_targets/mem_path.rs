//! `MemPath`, the lexical half of confinement (docs/format.md, Paths): whatever an agent sends,
//! an accepted path never climbs out of the root (plainly or percent-encoded), never holds a
//! control character, never names `.memdir/` or `.git/` or a name git takes for `.git`, stays
//! within depth and length, and is a fixed point: parsing its own text (with or without
//! `/memories/`) gives it back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_core::path::{MAX_DEPTH, MAX_NAME_BYTES, MAX_PATH_BYTES, MemPath};

/// Every `%XX` decoded, as a URL decoder would.
fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// A name git refuses or reads as its own folder, by git's own rules (`is_ntfs_dotgit`,
/// `verify_dotfile`): `.git` or `git~1` in any case, then only dots and spaces, or `:` / `\`.
fn git_alias(c: &str) -> bool {
    let lower = c.to_ascii_lowercase();
    [".git", "git~1"].iter().any(|a| {
        lower.strip_prefix(a).is_some_and(|rest| {
            rest.starts_with([':', '\\']) || rest.bytes().all(|b| b == b'.' || b == b' ')
        })
    })
}

fn check(p: &MemPath, input: &str) {
    let s = p.as_str();
    assert!(!s.chars().any(char::is_control), "{input:?} -> {s:?}");
    assert!(
        !s.starts_with('/') && !s.ends_with('/'),
        "{input:?} -> {s:?}"
    );
    assert!(s.len() <= MAX_PATH_BYTES, "{input:?}");
    let comps: Vec<&str> = s.split('/').filter(|c| !c.is_empty()).collect();
    assert!(comps.len() <= MAX_DEPTH, "{input:?}");
    assert_eq!(comps.len(), p.components().count());
    for c in &comps {
        assert!(!matches!(*c, "." | ".."), "{input:?} -> {s:?}");
        assert!(c.len() <= MAX_NAME_BYTES, "{input:?}");
        assert!(
            *c != ".memdir" && !git_alias(c),
            "{input:?} -> {s:?} names {c:?}"
        );
        if c.contains('%') {
            let d = percent_decode(c);
            assert!(
                !d.contains(&b'/')
                    && d.iter().filter(|b| **b == b'\\').count() == c.matches('\\').count()
                    && d != b"..",
                "{input:?}: {c:?} decodes to {:?}",
                String::from_utf8_lossy(&d)
            );
        }
    }
    // Nothing escapes: joined onto a root, the path stays below it.
    let root = std::path::Path::new("/srv/memory");
    let full = root.join(s);
    assert!(full.starts_with(root));
    assert!(
        full.components()
            .all(|c| !matches!(c, std::path::Component::ParentDir))
    );
    // A fixed point.
    assert_eq!(MemPath::parse(s).as_ref(), Ok(p), "{input:?}");
    assert_eq!(MemPath::parse(&format!("/memories/{s}")).as_ref(), Ok(p));
    if let (Some(parent), Some(name)) = (p.parent(), p.file_name()) {
        assert_eq!(parent.join(name).as_ref(), Ok(p), "{input:?}");
        assert!(p.starts_with(&parent));
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = MemPath::parse(input) {
        check(&p, input);
    }
    if let Ok(p) = MemPath::parse_file(input) {
        assert!(!p.is_root());
    }
    // A name joined onto a folder obeys the same rules.
    if let Some((dir, name)) = input.split_once('\n')
        && let Ok(d) = MemPath::parse(dir)
        && let Ok(p) = d.join(name)
    {
        check(&p, input);
        assert!(p.starts_with(&d));
    }
});
