//! `memdir import claude-code DIR` / `memdir import openclaw DIR` on any host folder (its
//! `MEMORY.md`, topic files, daily notes, hand-made names): the import writes only below the
//! memory root, only paths memdir itself accepts, every note it writes parses, every log it
//! writes names its day, and re-running it changes nothing.
//!
//! Input: the first line names the layout (`claude-code` or anything else for `openclaw`);
//! then files, each after a line `=== <path>`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir::import::ImportSource;
use memdir::{InMemoryStore, Store};
use memdir_core::host::LayoutName;
use memdir_core::log::date_of_file_name;
use memdir_core::note::Note;
use memdir_core::path::MemPath;
use memdir_fuzz::Fenced;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let layout = if first.trim() == "claude-code" {
        LayoutName::ClaudeCode
    } else {
        LayoutName::OpenClaw
    };
    let host = InMemoryStore::new();
    for part in rest.split("=== ").skip(1) {
        let (name, body) = part.split_once('\n').unwrap_or((part, ""));
        let Ok(p) = MemPath::parse_file(name) else {
            continue;
        };
        if p.components().count() > 6 {
            continue;
        }
        let _ = host.write(&p, body.as_bytes());
    }
    let f = Fenced::new();
    let report = match f.mem.import(
        ImportSource::Folder {
            layout,
            store: &host,
        },
        "host",
        false,
    ) {
        Ok(r) => r,
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "one-line error: {msg:?}");
            f.files();
            return;
        }
    };
    let after = f.files();
    for (path, bytes) in &after {
        let Ok(text) = std::str::from_utf8(bytes) else {
            panic!("{path}: memdir wrote bytes that are not UTF-8");
        };
        if let Some(name) = path.strip_prefix("log/") {
            assert!(
                date_of_file_name(name).is_some(),
                "log {path:?} does not name its day"
            );
        }
        if path.starts_with("notes/") {
            assert_eq!(Note::parse(text).render(), text);
        }
    }
    for file in &report.files {
        assert!(
            MemPath::parse(&file.path).is_ok_and(|p| p.as_str() == file.path),
            "{file:?}"
        );
    }
    let again = f
        .mem
        .import(
            ImportSource::Folder {
                layout,
                store: &host,
            },
            "host",
            false,
        )
        .expect("a second import of the same folder works");
    assert_eq!(again.entries_added, 0, "re-running added entries");
    assert_eq!(f.files(), after, "re-running changed files");
});
