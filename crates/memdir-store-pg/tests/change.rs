//! A change on PostgreSQL is one transaction (issue 35): what a thread writes and records while
//! it holds the change lock is invisible to others until the lock is released, is all kept then,
//! and is all gone if the change's session dies first. A log append and its record are one
//! statement, whose delta (the length the file had) blame and undo read back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir::{Clock, Memory};
use memdir_core::path::MemPath;
use memdir_store::history::{Change, History};
use memdir_store::store::{LockName, Locks};
use memdir_store::{Actor, Source, Store};
use memdir_store_pg::{PgStore, pg_or_skip};

fn p(s: &str) -> MemPath {
    MemPath::parse(s).unwrap()
}

fn record(h: &dyn History, op: &str, path: &str, at: i64) -> Option<String> {
    let actor = Actor {
        writer: "agent".into(),
        source: Source::Agent,
    };
    h.commit(&Change {
        op,
        path,
        reason: None,
        actor: &actor,
        at: jiff::Timestamp::from_second(1_790_000_000 + at).unwrap(),
        via: None,
        whole_tree: false,
    })
    .unwrap()
}

#[test]
fn a_change_is_kept_whole_on_release_and_not_at_all_when_its_session_dies() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let other = PgStore::open(&db.url("alice")).unwrap();
    let h = s.history();
    let log = p("log/2026-12-05.md");
    // Past 16 KiB, so the recorded length is a three-byte varint.
    let day = "- 09:00 an entry of the morning, long enough to count\n".repeat(400);
    s.write(&log, day.as_bytes()).unwrap();
    record(&h, "write", log.as_str(), 0).unwrap();

    // An append and its record, in one statement, visible to others only on release.
    let g = s.lock(LockName::Git).unwrap();
    assert!(g.atomic());
    s.append(&log, b"- 10:00 one\n").unwrap();
    let id = record(&h, "log", log.as_str(), 1).unwrap();
    assert_eq!(other.read(&log).unwrap(), day.as_bytes());
    g.release().unwrap();
    let one = format!("{day}- 10:00 one\n");
    assert_eq!(other.read(&log).unwrap(), one.as_bytes());
    let (full, files) = h.files_of(&id).unwrap();
    assert_eq!(full, id);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].before.as_deref(), Some(day.as_bytes()));
    assert_eq!(files[0].after.as_deref(), Some(one.as_bytes()));
    let blame = h.blame(&log).unwrap();
    assert_eq!(blame.last().unwrap().commit, id);
    assert_ne!(blame[0].commit, id);

    // A change reads what it wrote; two appends and a new file are one change.
    let g = s.lock(LockName::Git).unwrap();
    s.append(&log, b"- 10:01 two\n").unwrap();
    assert!(s.read(&log).unwrap().ends_with(b"- 10:01 two\n"));
    s.append(&log, b"- 10:02 three\n").unwrap();
    s.write(&p("notes/n.md"), b"a note\n").unwrap();
    s.append(&log, b"- 10:03 four\n").unwrap();
    let id2 = record(&h, "log", log.as_str(), 2).unwrap();
    g.release().unwrap();
    let (_, files) = h.files_of(&id2).unwrap();
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0].path, log);
    assert_eq!(files[0].before.as_deref(), Some(one.as_bytes()));
    assert_eq!(files[0].after, Some(s.read(&log).unwrap()));
    assert_eq!(files[1].path, p("notes/n.md"));
    assert_eq!(files[1].before, None);
    assert_eq!(files[1].after.as_deref(), Some(&b"a note\n"[..]));
    let blame = h.blame(&log).unwrap();
    let n = blame.len();
    assert!(blame[n - 3..].iter().all(|l| l.commit == id2), "{blame:?}");
    assert_eq!(blame[n - 4].commit, id);

    // A change whose session dies leaves nothing: not its append, not its file, no record.
    let before = other.read(&log).unwrap();
    let changes = h.history(None, 100).unwrap().len();
    let g = s.lock(LockName::Git).unwrap();
    s.append(&log, b"- 11:00 lost\n").unwrap();
    s.write(&p("notes/lost.md"), b"lost\n").unwrap();
    db.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .unwrap();
    assert!(
        g.release().is_err(),
        "a change whose session died was reported kept"
    );
    assert_eq!(other.read(&log).unwrap(), before);
    assert!(other.stat(&p("notes/lost.md")).unwrap().is_none());
    assert_eq!(h.history(None, 100).unwrap().len(), changes);
    // The store goes on working.
    let g = s.lock(LockName::Git).unwrap();
    s.append(&log, b"- 11:01 kept\n").unwrap();
    record(&h, "log", log.as_str(), 3).unwrap();
    g.release().unwrap();
    assert!(other.read(&log).unwrap().ends_with(b"- 11:01 kept\n"));
}

/// Through the engine: `log` appends and records in one statement; history, blame and undo
/// read those records back exactly.
#[test]
fn logged_entries_are_recorded_blamed_and_undone() {
    let db = pg_or_skip!();
    let clock = Clock::fixed(
        "2026-12-05T09:00:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    );
    let mem = Memory::init_backend(
        PgStore::create(&db.url("bob")).unwrap().backend(),
        clock,
        true,
    )
    .unwrap();
    let mut paths = Vec::new();
    for i in 0..3 {
        paths.push(mem.log(&format!("entry {i}")).unwrap().path);
    }
    let path = &paths[0];
    let history = mem.history(Some(path), 10).unwrap();
    assert_eq!(history.len(), 3, "{history:?}");
    let blame = mem.blame(path).unwrap();
    let lines: Vec<_> = blame.iter().filter(|l| l.text.contains("entry")).collect();
    assert_eq!(lines.len(), 3);
    for (l, h) in lines.iter().zip(history.iter().rev()) {
        assert_eq!(l.commit, h.commit);
    }
    mem.undo(None).unwrap();
    let text = String::from_utf8(mem.read(path).unwrap()).unwrap();
    assert!(
        text.contains("entry 1") && !text.contains("entry 2"),
        "{text}"
    );
}
