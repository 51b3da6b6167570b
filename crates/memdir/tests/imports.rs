//! Imports found wanting by the fuzz targets (`fuzz/`), each pinned by the input that found it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memdir::import::ImportSource;
use memdir::{Clock, InMemoryStore, Memory, Store};
use memdir_core::host::LayoutName;
use memdir_core::path::MemPath;

/// A host's folder holding `files` (path, text).
fn host_folder(files: &[(&str, &str)]) -> InMemoryStore {
    let host = InMemoryStore::new();
    for (path, text) in files {
        host.write(&MemPath::parse(path).unwrap(), text.as_bytes())
            .unwrap();
    }
    host
}

/// `host` imported as an OpenClaw folder.
fn openclaw(host: &InMemoryStore) -> ImportSource<'_> {
    ImportSource::Folder {
        layout: LayoutName::OpenClaw,
        store: host,
    }
}

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
    let host = host_folder(&[
        ("memory/2026-11-30.md", "- 09:00 a day note\n"),
        ("memory/2026-11-30..md", "- 10:00 another note\n"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mem = memory(dir.path());
    let source = || openclaw(&host);
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

/// Found by `cargo fuzz run import_chatgpt`: a turn holding a credential was stored redacted
/// (the guard ran after the import was planned), so the next import of the same export
/// compared the export's own text with the redacted entry, found it missing and appended it
/// again: one more redacted copy of the line on every re-run.
#[test]
fn fuzz_import_chatgpt_a_redacted_turn_is_not_added_again() {
    let json = r#"[{"title":"Deploy","create_time":1764493200,"conversation_id":"abc",
        "current_node":"n2","mapping":{
        "n1":{"id":"n1","message":{"author":{"role":"user"},"content":{"content_type":"text","parts":["deploy with API_TOKEN=Zq8vR3kT9wLp2XyB7nQe4Hs6 today"]},"create_time":1764493200},"parent":null,"children":["n2"]},
        "n2":{"id":"n2","message":{"author":{"role":"assistant"},"content":{"content_type":"text","parts":["done"]},"create_time":1764493260},"parent":"n1","children":[]}}}]"#;
    let dir = tempfile::tempdir().unwrap();
    let mem = memory(dir.path());
    let source = || ImportSource::Chats {
        format: memdir::import::ChatFormat::ChatGpt,
        json,
    };
    let first = mem.import(source(), "conversations.json", false).unwrap();
    assert_eq!(first.entries_added, 2, "{first:?}");
    let files = || {
        let mut all = Vec::new();
        for sub in ["log", "notes"] {
            files_under(&dir.path().join(sub), &mut all);
        }
        all.sort();
        all
    };
    let after = files();
    let log: String = after
        .iter()
        .filter(|(p, _)| p.starts_with(dir.path().join("log")))
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(log.contains("[redacted:generic-api-key:Zq8v…]"), "{log}");
    assert!(!log.contains("R3kT9wLp"), "{log}");
    for _ in 0..2 {
        let again = mem.import(source(), "conversations.json", false).unwrap();
        assert_eq!(again.entries_added, 0, "{again:?}");
        assert_eq!(again.entries_present, 2, "{again:?}");
        assert_eq!(files(), after, "re-running changed files");
    }
}

/// The same for a host's folder: a log entry and a note that held a credential are, on the
/// second import, already there as they would be written (not a new entry, not "a different
/// file is at that path").
#[test]
fn import_host_a_redacted_file_is_unchanged_on_a_second_import() {
    let host = host_folder(&[
        (
            "memory/2026-11-30.md",
            "- 09:00 deploy with API_TOKEN=Zq8vR3kT9wLp2XyB7nQe4Hs6 today\n",
        ),
        (
            "memory/notes/deploy.md",
            "---\nname: deploy\ndescription: how we deploy\n---\nAPI_TOKEN=Zq8vR3kT9wLp2XyB7nQe4Hs6\n",
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mem = memory(dir.path());
    let source = || openclaw(&host);
    let first = mem.import(source(), "host", false).unwrap();
    assert_eq!(first.entries_added, 1, "{first:?}");
    let log_path = dir.path().join("log/2026-11-30.openclaw.md");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("[redacted:generic-api-key:Zq8v…]"), "{log}");
    let again = mem.import(source(), "host", false).unwrap();
    assert_eq!(again.entries_added, 0, "{again:?}");
    for f in &again.files {
        assert_eq!(
            f.action,
            memdir::import::FileAction::Unchanged,
            "{}: {again:?}",
            f.path
        );
    }
    assert_eq!(std::fs::read_to_string(&log_path).unwrap(), log);
}

/// Every file under `dir` with its text.
fn files_under(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// A log entry stored as it was (imported under `[secrets] policy = "off"`) is there already
/// when the policy redacts: the next import compares the source's own text too, so it adds no
/// redacted copy beside it.
#[test]
fn import_an_entry_stored_verbatim_is_not_added_again_redacted() {
    let entry = "- 09:00 deploy with API_TOKEN=Zq8vR3kT9wLp2XyB7nQe4Hs6 today\n";
    let host = host_folder(&[("memory/2026-11-30.md", entry)]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".memdir/config.toml");
    memory(dir.path());
    let with_policy = |policy: &str| {
        std::fs::write(&config, format!("[secrets]\npolicy = \"{policy}\"\n")).unwrap();
        let at: jiff::Timestamp = "2026-11-30T09:00:00Z".parse().unwrap();
        Memory::open(dir.path(), Clock::fixed(at, jiff::tz::TimeZone::UTC)).unwrap()
    };
    let source = || openclaw(&host);
    let first = with_policy("off").import(source(), "host", false).unwrap();
    assert_eq!(first.entries_added, 1, "{first:?}");
    let log_path = dir.path().join("log/2026-11-30.openclaw.md");
    assert_eq!(std::fs::read_to_string(&log_path).unwrap(), entry);
    let again = with_policy("redact")
        .import(source(), "host", false)
        .unwrap();
    assert_eq!(again.entries_added, 0, "{again:?}");
    assert_eq!(std::fs::read_to_string(&log_path).unwrap(), entry);
}

/// Found by `cargo fuzz run import_host` (against a first fix that guarded each entry alone): a
/// secret's keyword and its value on two lines of a daily note. The whole file was redacted
/// at once when it was first imported, each line alone on the next import, where the value's
/// line no longer looked like a secret: it was appended again, verbatim.
#[test]
fn fuzz_import_host_a_secret_across_two_lines_stays_redacted_on_a_second_import() {
    let host = host_folder(&[(
        "memory/2026-11-30.md",
        "- 09:00 e day n: x\ndd`\nssecretandup\n==standupsat.mdrmMEMO9Y.md\u{c}",
    )]);
    let dir = tempfile::tempdir().unwrap();
    let mem = memory(dir.path());
    let source = || openclaw(&host);
    mem.import(source(), "host", false).unwrap();
    let log_path = dir.path().join("log/2026-11-30.openclaw.md");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("[redacted:generic-api-key:stan…]"), "{log}");
    let again = mem.import(source(), "host", false).unwrap();
    assert_eq!(again.entries_added, 0, "{again:?}");
    let now = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(now, log);
    assert!(!now.contains("standupsat.mdrm"), "{now}");
}

/// Found by `cargo fuzz run import_host` (against a second fix that guarded a file against what
/// it held, as an edit is): a host's core whose secret value also stands, unflagged, on another
/// line. Once imported, the value was in `core.md` verbatim, so the next import's guard kept it
/// as "already there", the text no longer matched `core.md`, and the core went to a new note.
/// A plan's guard never looks at what the file holds.
#[test]
fn fuzz_import_host_a_secret_also_written_unflagged_changes_nothing_on_a_second_import() {
    let host = host_folder(&[(
        "MEMORY.md",
        "core\nssecretandup\n=tedsMORYsmorym/Ydn\n.mdu[[[t.0: xcretandup\n=tedsMORYsmorym/Ydn\n.m fabts\n",
    )]);
    let dir = tempfile::tempdir().unwrap();
    let mem = memory(dir.path());
    let source = || openclaw(&host);
    mem.import(source(), "host", false).unwrap();
    let core = std::fs::read_to_string(dir.path().join("core.md")).unwrap();
    assert!(core.contains("[redacted:generic-api-key:teds…]"), "{core}");
    let again = mem.import(source(), "host", false).unwrap();
    for f in &again.files {
        assert_eq!(
            f.action,
            memdir::import::FileAction::Unchanged,
            "{}: {again:?}",
            f.path
        );
    }
    assert!(!dir.path().join("notes/openclaw/MEMORY.md").exists());
}
