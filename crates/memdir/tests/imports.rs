//! Imports found wanting by the fuzz targets (`fuzz/`), each pinned by the input that found it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memdir::import::ImportSource;
use memdir::{Clock, InMemoryStore, Memory, Store};
use memdir_core::host::LayoutName;
use memdir_core::path::MemPath;

fn memory(dir: &std::path::Path) -> Memory {
    let at: jiff::Timestamp = "2026-11-30T09:00:00Z".parse().unwrap();
    Memory::init_with(dir, Clock::fixed(at, jiff::tz::TimeZone::UTC), false).unwrap()
}

/// Found by `cargo fuzz run import_host`: OpenClaw's `memory/2026-11-30.md` and
/// `memory/2026-11-30..md` both go to `log/2026-11-30.openclaw.md`; the second file's plan
/// replaced the first's, so the first one's entries were left out, then added by the next
/// import of the same folder ("re-running adds nothing" did not hold).
#[test]
fn fuzz_import_host_two_files_for_one_log_are_imported_once() {
    let host = InMemoryStore::new();
    for (path, text) in [
        ("memory/2026-11-30.md", "- 09:00 a day note\n"),
        ("memory/2026-11-30..md", "- 10:00 another note\n"),
    ] {
        host.write(&MemPath::parse(path).unwrap(), text.as_bytes())
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let mem = memory(dir.path());
    let source = || ImportSource::Folder {
        layout: LayoutName::OpenClaw,
        store: &host,
    };
    let first = mem.import(source(), "host", false).unwrap();
    assert_eq!(first.entries_added, 2);
    let log = std::fs::read_to_string(dir.path().join("log/2026-11-30.openclaw.md")).unwrap();
    // In the source's (name) order: `2026-11-30..md` sorts first.
    assert_eq!(log, "- 10:00 another note\n- 09:00 a day note\n");
    let again = mem.import(source(), "host", false).unwrap();
    assert_eq!(again.entries_added, 0, "{again:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("log/2026-11-30.openclaw.md")).unwrap(),
        log
    );
}
