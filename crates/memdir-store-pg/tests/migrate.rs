//! A database made by the schema before `memdir.history` (version 3: whole contents in
//! `memdir.blobs`) is carried forward on connect and reads back the same history.
//!
//! `fixtures/schema-v3.sql` is `pg_dump --inserts --schema=memdir` of a database that
//! [`scenario`] wrote with the version-3 code (commit 89cf290), and `fixtures/schema-v3.answers`
//! what that code's history, blame and revert answered on it ([`answers`]). The test restores
//! the dump into a fresh database, opens it with this code (which migrates it) and asks again.
//! With `MEMDIR_MAKE_V3_FIXTURE=DIR` the same file, built at that commit, wrote them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_core::path::MemPath;
use memdir_store::{Actor, Source, Store};
use memdir_store_pg::{PgStore, pg_or_skip};

fn p(s: &str) -> MemPath {
    MemPath::parse(s).unwrap()
}

fn at(s: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn agent() -> Actor {
    Actor {
        writer: "claude".into(),
        source: Source::Agent,
    }
}

/// Appends, rewrites, a change of two files, a rename, a removal, and a write not yet recorded.
fn scenario(alice: &PgStore, bob: &PgStore) {
    let h = alice.history();
    alice.write(&p("core.md"), b"# Core\n").unwrap();
    h.start(at(0)).unwrap();
    let log = p("log/2026-12-01.md");
    for i in 0..5 {
        alice
            .append(&log, format!("- 09:0{i} decided thing {i}\n").as_bytes())
            .unwrap();
        h.commit(&agent(), "log", log.as_str(), None, at(10 + i))
            .unwrap();
    }
    alice.write(&p("notes/a.md"), b"a\nb\nc\n").unwrap();
    h.commit(&agent(), "note new", "notes/a.md", None, at(20))
        .unwrap();
    alice.write(&p("notes/a.md"), b"a\nB\nc\nd\n").unwrap();
    h.commit(
        &Actor::default(),
        "edit",
        "notes/a.md",
        Some("fix b"),
        at(21),
    )
    .unwrap();
    alice.write(&p("notes/b.md"), b"bee\n").unwrap();
    alice
        .write(&p("MEMORY.md"), b"- [a](notes/a.md)\n- [b](notes/b.md)\n")
        .unwrap();
    h.commit(&agent(), "note new", "notes/b.md", None, at(22))
        .unwrap();
    alice.rename(&p("notes/b.md"), &p("notes/c.md")).unwrap();
    h.commit(&agent(), "mv", "notes/b.md -> notes/c.md", None, at(23))
        .unwrap();
    alice.append(&log, b"- 10:00 more\n").unwrap();
    alice
        .write(&p("core.md"), b"# Core\n\n- likes tea\n")
        .unwrap();
    h.commit(&agent(), "write", "core.md", None, at(24))
        .unwrap();
    alice.remove(&p("notes/a.md")).unwrap();
    h.commit(&agent(), "rm", "notes/a.md", None, at(25))
        .unwrap();
    // Written, never recorded: history ends before it.
    alice.append(&log, b"- 11:00 unrecorded\n").unwrap();

    let hb = bob.history();
    bob.write(&p("core.md"), b"bob\n").unwrap();
    hb.start(at(0)).unwrap();
    bob.write(&p("core.md"), b"bob\nrobert\n").unwrap();
    hb.commit(&agent(), "write", "core.md", None, at(30))
        .unwrap();
}

/// Everything history answers about both tenants, as text.
fn answers(alice: &PgStore, bob: &PgStore) -> String {
    let mut out = String::new();
    for (name, s) in [("alice", alice), ("bob", bob)] {
        let h = s.history();
        out += &format!("# {name}\n");
        let all = h.history(None, 100).unwrap();
        out += &format!("history: {all:#?}\n");
        for dir in ["notes", "log/2026-12-01.md", "core.md"] {
            out += &format!("history {dir}: {:#?}\n", h.history(Some(&p(dir)), 3));
        }
        for f in [
            "core.md",
            "log/2026-12-01.md",
            "notes/a.md",
            "notes/c.md",
            "MEMORY.md",
        ] {
            out += &format!("blame {f}: {:#?}\n", h.blame(&p(f)));
        }
        for e in &all {
            let r = h.revert(Some(&e.commit)).map(|(id, changes)| {
                let changes: Vec<(String, Option<String>)> = changes
                    .into_iter()
                    .map(|(p, c)| {
                        (
                            p.as_str().to_string(),
                            c.map(|c| String::from_utf8(c).unwrap()),
                        )
                    })
                    .collect();
                (id, changes)
            });
            out += &format!("revert {}: {r:#?}\n", e.commit);
        }
        out += &format!("revert newest: {:?}\n", h.revert(None).map(|(id, _)| id));
        out += &format!(
            "revert by prefix: {:?}\n",
            h.revert(Some("0")).map(|(id, _)| id)
        );
    }
    out
}

#[test]
fn a_version_3_database_reads_back_the_same_history() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let db = pg_or_skip!();
    if let Ok(out) = std::env::var("MEMDIR_MAKE_V3_FIXTURE") {
        let (alice, bob) = (
            PgStore::create(&db.url("alice")).unwrap(),
            PgStore::create(&db.url("bob")).unwrap(),
        );
        scenario(&alice, &bob);
        std::fs::write(
            std::path::Path::new(&out).join("schema-v3.answers"),
            answers(&alice, &bob),
        )
        .unwrap();
        eprintln!("database {}", db.name);
        std::mem::forget(db);
        return;
    }
    let dump = std::fs::read_to_string(dir.join("schema-v3.sql")).unwrap();
    db.sql(&dump).unwrap();
    let (alice, bob) = (
        PgStore::open(&db.url("alice")).unwrap(),
        PgStore::open(&db.url("bob")).unwrap(),
    );
    let want = std::fs::read_to_string(dir.join("schema-v3.answers")).unwrap();
    let got = answers(&alice, &bob);
    if got != want {
        let _ = std::fs::write(std::env::temp_dir().join("schema-v3.answers.got"), &got);
    }
    assert!(
        got == want,
        "history changed in the migration (see schema-v3.answers.got in the temp dir)"
    );
    // And the carried-forward tenant keeps recording on top of it.
    alice
        .append(&p("log/2026-12-01.md"), b"- 12:00 after\n")
        .unwrap();
    let id = alice
        .history()
        .commit(&agent(), "log", "log/2026-12-01.md", None, at(40))
        .unwrap()
        .unwrap();
    let blame = alice.history().blame(&p("log/2026-12-01.md")).unwrap();
    let last: Vec<(&str, &str)> = blame
        .iter()
        .rev()
        .take(3)
        .map(|b| (b.commit.as_str(), b.text.as_str()))
        .collect();
    assert_eq!(last[0], (id.as_str(), "- 12:00 after"));
    assert_eq!(last[1].1, "- 11:00 unrecorded");
    assert_eq!(last[1].0, id.as_str());
    assert_eq!(last[2].1, "- 10:00 more");
}
