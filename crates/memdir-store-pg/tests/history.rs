//! History in tables against a real server: records, listing, blame and revert, in the shape a
//! folder's git history answers.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::type_complexity
)]

use memdir_store_pg::pg_or_skip;

use memdir_core::path::MemPath;
use memdir_store::{Actor, Source, Store, StoreError};
use memdir_store_pg::PgStore;

fn p(s: &str) -> MemPath {
    MemPath::parse(s).unwrap()
}

fn at(s: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn agent(name: &str) -> Actor {
    Actor {
        writer: name.into(),
        source: Source::Agent,
    }
}

/// Writes back what a revert computed, as the engine does.
fn apply(s: &dyn Store, changes: &[(MemPath, Option<Vec<u8>>)]) {
    for (path, content) in changes {
        match content {
            Some(c) => s.write(path, c).unwrap(),
            None => s.remove(path).unwrap(),
        }
    }
}

#[test]
fn changes_are_listed_newest_first_with_writer_reason_and_source() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let h = s.history();
    s.write(&p("core.md"), b"# Core\n").unwrap();
    h.start(at(0)).unwrap();
    h.start(at(1)).unwrap();
    s.write(&p("notes/a.md"), b"a\n").unwrap();
    let id1 = h
        .commit(
            &agent("claude"),
            "write",
            "notes/a.md",
            Some("remember a"),
            at(10),
        )
        .unwrap()
        .unwrap();
    assert_eq!(id1.len(), 40);
    // Nothing changed (a rewrite with the same bytes): no record.
    s.write(&p("notes/a.md"), b"a\n").unwrap();
    assert_eq!(
        h.commit(&agent("claude"), "write", "notes/a.md", None, at(11))
            .unwrap(),
        None
    );
    s.append(&p("log/2026-12-01.md"), b"- 09:15 x\n").unwrap();
    let id2 = h
        .commit(&Actor::default(), "log", "log/2026-12-01.md", None, at(20))
        .unwrap()
        .unwrap();
    let all = h.history(None, 10).unwrap();
    let got: Vec<(&str, &str, &str, Option<&str>, Option<&str>)> = all
        .iter()
        .map(|e| {
            (
                e.commit.as_str(),
                e.writer.as_str(),
                e.summary.as_str(),
                e.reason.as_deref(),
                e.source.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got[0],
        (
            id2.as_str(),
            "main",
            "log log/2026-12-01.md",
            None,
            Some("user")
        )
    );
    assert_eq!(
        got[1],
        (
            id1.as_str(),
            "claude",
            "write notes/a.md",
            Some("remember a"),
            Some("agent")
        )
    );
    assert_eq!((got[2].1, got[2].2), ("memdir", "init memory folder"));
    assert_eq!(got.len(), 3);
    assert_eq!(all[1].date, "2026-09-21T14:13:30Z");
    let notes: Vec<String> = h
        .history(Some(&p("notes")), 10)
        .unwrap()
        .into_iter()
        .map(|e| e.commit)
        .collect();
    assert_eq!(notes, std::slice::from_ref(&id1));
    assert_eq!(h.history(Some(&p("notes/a.md")), 10).unwrap().len(), 1);
    assert_eq!(h.history(None, 1).unwrap().len(), 1);
    // Another tenant has its own history.
    let bob = PgStore::create(&db.url("bob")).unwrap();
    assert!(bob.history().history(None, 10).unwrap().is_empty());
}

#[test]
fn blame_names_the_change_that_last_touched_each_line() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let h = s.history();
    h.start(at(0)).unwrap();
    let f = p("notes/a.md");
    s.write(&f, b"one\ntwo\nthree\n").unwrap();
    let a = h
        .commit(&agent("a"), "write", "notes/a.md", Some("first"), at(1))
        .unwrap()
        .unwrap();
    s.write(&f, b"one\nTWO\nthree\nfour\n").unwrap();
    let b = h
        .commit(&agent("b"), "edit", "notes/a.md", None, at(2))
        .unwrap()
        .unwrap();
    let lines: Vec<(usize, String, String, Option<String>)> = h
        .blame(&f)
        .unwrap()
        .into_iter()
        .map(|l| (l.line, l.commit, l.text, l.reason))
        .collect();
    assert_eq!(
        lines,
        [
            (1, a.clone(), "one".into(), Some("first".into())),
            (2, b.clone(), "TWO".into(), None),
            (3, a.clone(), "three".into(), Some("first".into())),
            (4, b.clone(), "four".into(), None),
        ]
    );
    assert!(
        matches!(h.blame(&p("nope.md")), Err(StoreError::NotFound(m)) if m == "nope.md has no history yet")
    );
}

#[test]
fn revert_undoes_a_change_merges_around_later_ones_and_refuses_overlaps() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let h = s.history();
    s.write(&p("core.md"), b"# Core\n").unwrap();
    h.start(at(0)).unwrap();
    assert!(
        matches!(h.revert(None), Err(StoreError::Conflict(m)) if m.starts_with("cannot undo the first commit"))
    );
    let f = p("notes/a.md");
    s.write(&f, b"a\nb\nc\nd\ne\n").unwrap();
    let created = h
        .commit(&agent("x"), "write", "notes/a.md", None, at(1))
        .unwrap()
        .unwrap();
    s.write(&f, b"A\nb\nc\nd\ne\n").unwrap();
    let first_edit = h
        .commit(&agent("x"), "edit", "notes/a.md", None, at(2))
        .unwrap()
        .unwrap();
    s.write(&f, b"A\nb\nc\nd\nE\n").unwrap();
    let _second = h
        .commit(&agent("x"), "edit", "notes/a.md", None, at(3))
        .unwrap()
        .unwrap();
    // The newest change: its before comes back.
    let (id, changes) = h.revert(None).unwrap();
    assert_eq!(id, _second);
    assert_eq!(changes, [(f.clone(), Some(b"A\nb\nc\nd\ne\n".to_vec()))]);
    // An older change on other lines merges around the later one, by id prefix.
    let (id, changes) = h.revert(Some(&first_edit[..10])).unwrap();
    assert_eq!(id, first_edit);
    assert_eq!(changes, [(f.clone(), Some(b"a\nb\nc\nd\nE\n".to_vec()))]);
    // Undoing the creation of a file changed since: the same lines, refused.
    assert!(
        matches!(h.revert(Some(&created)), Err(StoreError::Conflict(m)) if m.contains("later changes touch the same lines"))
    );
    apply(&s, &changes);
    h.commit(&agent("x"), "undo", &first_edit, None, at(4))
        .unwrap()
        .unwrap();
    assert_eq!(s.read(&f).unwrap(), b"a\nb\nc\nd\nE\n");
    // A removed file comes back; a created one goes.
    s.remove(&f).unwrap();
    h.commit(&agent("x"), "rm", "notes/a.md", None, at(5))
        .unwrap()
        .unwrap();
    let (_, changes) = h.revert(None).unwrap();
    assert_eq!(changes, [(f.clone(), Some(b"a\nb\nc\nd\nE\n".to_vec()))]);
    s.write(&p("new.md"), b"n").unwrap();
    h.commit(&agent("x"), "write", "new.md", None, at(6))
        .unwrap()
        .unwrap();
    assert_eq!(h.revert(None).unwrap().1, [(p("new.md"), None)]);
    // A moved folder is recorded at both ends.
    s.write(&p("notes/b.md"), b"b").unwrap();
    h.commit(&agent("x"), "write", "notes/b.md", None, at(7))
        .unwrap()
        .unwrap();
    s.rename(&p("notes"), &p("old")).unwrap();
    let mv = h
        .commit(&agent("x"), "mv", "notes -> old", None, at(8))
        .unwrap()
        .unwrap();
    assert_eq!(h.history(Some(&p("old/b.md")), 10).unwrap()[0].commit, mv);
    assert_eq!(h.history(Some(&p("notes/b.md")), 10).unwrap()[0].commit, mv);
    let mut back = h.revert(None).unwrap().1;
    back.sort();
    assert_eq!(
        back,
        [
            (p("notes/b.md"), Some(b"b".to_vec())),
            (p("old/b.md"), None)
        ]
    );
    assert!(matches!(h.revert(Some("zz")), Err(StoreError::NotFound(_))));
    assert!(matches!(
        h.revert(Some("ffffffffff")),
        Err(StoreError::NotFound(_))
    ));
}
