//! The PostgreSQL store against a real server: the store contract, concurrency, locks,
//! migrations, tenants, and calls from inside a tokio runtime.
//!
//! The contract checks take a `&dyn Store` so they can run against any backend.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_store_pg::{pg_or_skip, testing as common};

use memdir_core::path::MemPath;
use memdir_store::store::{LockName, Locks};
use memdir_store::{EntryKind, Store, StoreError};
use memdir_store_pg::PgStore;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn p(s: &str) -> MemPath {
    MemPath::parse(s).unwrap()
}

fn names(s: &dyn Store, dir: &str) -> Vec<String> {
    s.list(&p(dir))
        .unwrap()
        .into_iter()
        .map(|e| {
            let suffix = if e.kind == EntryKind::Dir { "/" } else { "" };
            format!("{}{suffix}", e.path)
        })
        .collect()
}

#[test]
fn round_trips_bytes_and_reports_missing_files() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let f = p("notes/people/priya.md");
    s.write(&f, b"hello\x00\xff").unwrap();
    assert_eq!(s.read(&f).unwrap(), b"hello\x00\xff");
    s.write(&f, b"v2").unwrap();
    assert_eq!(s.read(&f).unwrap(), b"v2");
    s.write(&f, b"").unwrap();
    assert_eq!(s.read(&f).unwrap(), b"");
    let st = s.stat(&f).unwrap().unwrap();
    assert_eq!((st.kind, st.size), (EntryKind::File, 0));
    assert!(st.modified_ms > 0);
    assert!(
        matches!(s.read(&p("nope.md")), Err(StoreError::NotFound(m)) if m == "nope.md does not exist")
    );
    assert!(
        matches!(s.read(&p("notes")), Err(StoreError::InvalidPath(m)) if m == "notes is a folder, not a file")
    );
    assert!(matches!(
        s.read(&MemPath::root()),
        Err(StoreError::InvalidPath(_))
    ));
    assert!(matches!(
        s.read(&p("notes/people/priya.md/x")),
        Err(StoreError::InvalidPath(m)) if m.contains("a part of the path is a file")
    ));
    assert_eq!(s.stat(&p("nope.md")).unwrap(), None);
    assert_eq!(s.stat(&p("notes")).unwrap().unwrap().kind, EntryKind::Dir);
    assert_eq!(
        s.stat(&MemPath::root()).unwrap().unwrap().kind,
        EntryKind::Dir
    );
}

#[test]
fn writes_never_put_a_file_over_a_folder_or_under_a_file() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    s.write(&p("a/b.md"), b"x").unwrap();
    assert!(
        matches!(s.write(&p("a"), b"y"), Err(StoreError::InvalidPath(m)) if m == "a is a folder, not a file")
    );
    assert!(matches!(
        s.append(&p("a"), b"y"),
        Err(StoreError::InvalidPath(_))
    ));
    assert!(matches!(
        s.write(&p("a/b.md/c.md"), b"y"),
        Err(StoreError::InvalidPath(m)) if m == "a/b.md/c.md: a part of the path is a file, not a folder"
    ));
    assert!(matches!(
        s.create_dir(&p("a/b.md")),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        s.create_dir(&p("a/b.md/c")),
        Err(StoreError::InvalidPath(_))
    ));
    assert!(matches!(
        s.write(&MemPath::root(), b"y"),
        Err(StoreError::InvalidPath(_))
    ));
    // Nothing half-written by the refusals.
    assert_eq!(names(&s, ""), ["a/"]);
    assert_eq!(names(&s, "a"), ["a/b.md"]);
}

#[test]
fn lists_children_in_byte_order_with_folders_and_hides_memdirs_own_files() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    for f in [
        "b.md", "a/x.md", "a-b.md", "A.md", "é.md", "a/y/z.md", "a!.md",
    ] {
        s.write(&p(f), b"1").unwrap();
    }
    s.create_dir(&p("empty")).unwrap();
    s.create_dir(&p("empty")).unwrap();
    s.write_meta("config.toml", b"x = 1").unwrap();
    assert_eq!(
        names(&s, ""),
        ["A.md", "a/", "a!.md", "a-b.md", "b.md", "empty/", "é.md"]
    );
    assert_eq!(names(&s, "a"), ["a/x.md", "a/y/"]);
    assert_eq!(names(&s, "empty"), Vec::<String>::new());
    assert!(matches!(s.list(&p("nope")), Err(StoreError::NotFound(_))));
    assert!(matches!(
        s.list(&p("b.md")),
        Err(StoreError::InvalidPath(_))
    ));
    let walked: Vec<String> = s
        .walk(&MemPath::root())
        .unwrap()
        .into_iter()
        .map(|e| e.path.to_string())
        .collect();
    assert_eq!(
        walked,
        [
            "A.md", "a!.md", "a-b.md", "a/x.md", "a/y/z.md", "b.md", "é.md"
        ]
    );
    let walked: Vec<String> = s
        .walk(&p("a"))
        .unwrap()
        .into_iter()
        .map(|e| e.path.to_string())
        .collect();
    assert_eq!(walked, ["a/x.md", "a/y/z.md"]);
    assert_eq!(s.read_meta("config.toml").unwrap().unwrap(), b"x = 1");
    assert_eq!(s.read_meta("other").unwrap(), None);
    // Reserved names never reach a store: the path type refuses them.
    assert!(MemPath::parse(".memdir/config.toml").is_err());
    assert!(MemPath::parse("a/.git/HEAD").is_err());
}

#[test]
fn removes_files_and_whole_folders_but_not_their_neighbours() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    for f in ["a/x.md", "a/y/z.md", "a0.md", "a-b/c.md", "a!.md", "a.md"] {
        s.write(&p(f), b"1").unwrap();
    }
    s.remove(&p("a")).unwrap();
    assert_eq!(names(&s, ""), ["a!.md", "a-b/", "a.md", "a0.md"]);
    s.remove(&p("a.md")).unwrap();
    assert!(matches!(s.remove(&p("a")), Err(StoreError::NotFound(m)) if m == "a does not exist"));
    assert!(matches!(
        s.remove(&MemPath::root()),
        Err(StoreError::InvalidPath(_))
    ));
    assert_eq!(names(&s, ""), ["a!.md", "a-b/", "a0.md"]);
}

#[test]
fn renames_files_and_folders_and_never_overwrites() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    s.write(&p("a/x.md"), b"x").unwrap();
    s.write(&p("a/y/z.md"), b"z").unwrap();
    s.write(&p("b.md"), b"b").unwrap();
    s.rename(&p("a"), &p("deep/er/a2")).unwrap();
    assert_eq!(
        names(&s, "deep/er/a2"),
        ["deep/er/a2/x.md", "deep/er/a2/y/"]
    );
    assert_eq!(s.read(&p("deep/er/a2/y/z.md")).unwrap(), b"z");
    assert!(s.stat(&p("a")).unwrap().is_none());
    assert!(s.stat(&p("a/y/z.md")).unwrap().is_none());
    s.write(&p("c.md"), b"c").unwrap();
    assert!(matches!(
        s.rename(&p("b.md"), &p("c.md")),
        Err(StoreError::Conflict(m)) if m.starts_with("c.md already exists: moving never overwrites")
    ));
    assert!(matches!(
        s.rename(&p("b.md"), &p("deep")),
        Err(StoreError::Conflict(_))
    ));
    assert!(
        matches!(s.rename(&p("deep"), &p("deep/er/x")), Err(StoreError::InvalidPath(m)) if m == "cannot move deep into itself")
    );
    assert!(matches!(
        s.rename(&p("nope"), &p("x")),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        s.rename(&p("b.md"), &p("c.md/x")),
        Err(StoreError::InvalidPath(_))
    ));
    assert_eq!(s.read(&p("b.md")).unwrap(), b"b");
    assert_eq!(s.read(&p("c.md")).unwrap(), b"c");
    s.rename(&p("b.md"), &p("b2.md")).unwrap();
    assert_eq!(s.read(&p("b2.md")).unwrap(), b"b");
    // The moved folder's children list under their new parent, and only there.
    assert_eq!(names(&s, ""), ["b2.md", "c.md", "deep/"]);
    s.write(&p("deep/er/a2/y/new.md"), b"n").unwrap();
    assert_eq!(
        names(&s, "deep/er/a2/y"),
        ["deep/er/a2/y/new.md", "deep/er/a2/y/z.md"]
    );
}

#[test]
fn unicode_names_and_an_8_mib_file_round_trip() {
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let f = p("notes/日本語/naïve ünïcödé 🦀.md");
    s.write(&f, "héllo".as_bytes()).unwrap();
    assert_eq!(s.read(&f).unwrap(), "héllo".as_bytes());
    assert_eq!(
        names(&s, "notes/日本語"),
        ["notes/日本語/naïve ünïcödé 🦀.md"]
    );
    let big: Vec<u8> = (0..8 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    s.write(&p("big.bin"), &big).unwrap();
    assert_eq!(s.read(&p("big.bin")).unwrap(), big);
    assert_eq!(
        s.stat(&p("big.bin")).unwrap().unwrap().size,
        big.len() as u64
    );
}

#[test]
fn concurrent_appends_lose_and_interleave_nothing() {
    let db = pg_or_skip!();
    // Two store instances, as two server processes would have, four threads on each.
    let stores = [
        Arc::new(PgStore::create(&db.url("alice")).unwrap()),
        Arc::new(PgStore::open(&db.url("alice")).unwrap()),
    ];
    let f = p("log/2026-12-01.md");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let s = stores[t % 2].clone();
            let f = f.clone();
            std::thread::spawn(move || {
                for i in 0..500 {
                    s.append(
                        &f,
                        format!("- thread {t} line {i} {}\n", "x".repeat(40)).as_bytes(),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let text = String::from_utf8(stores[0].read(&f).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4000);
    for t in 0..8 {
        let mine: Vec<&&str> = lines
            .iter()
            .filter(|l| l.starts_with(&format!("- thread {t} ")))
            .collect();
        assert_eq!(mine.len(), 500);
        for (i, l) in mine.iter().enumerate() {
            assert_eq!(**l, format!("- thread {t} line {i} {}", "x".repeat(40)));
        }
    }
}

#[test]
fn a_lock_excludes_a_second_store_and_is_released_on_drop() {
    let db = pg_or_skip!();
    let a = PgStore::create(&db.url("alice")).unwrap();
    let b = Arc::new(PgStore::open(&db.url("alice")).unwrap());
    let other_tenant = PgStore::create(&db.url("bob")).unwrap();
    let guard = a.lock(LockName::Index).unwrap();
    // Another tenant's lock of the same name, and another name, are free.
    drop(other_tenant.lock(LockName::Index).unwrap());
    drop(b.lock(LockName::Git).unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let b2 = b.clone();
    let waiter = std::thread::spawn(move || {
        let g = b2.lock(LockName::Index).unwrap();
        tx.send(Instant::now()).unwrap();
        drop(g);
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "the second store got a held lock"
    );
    let released = Instant::now();
    drop(guard);
    let got = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("lock never handed over");
    assert!(got >= released);
    waiter.join().unwrap();
}

#[test]
fn a_lock_dies_with_its_session() {
    let db = pg_or_skip!();
    let a = PgStore::create(&db.url("alice")).unwrap();
    let b = Arc::new(PgStore::open(&db.url("alice")).unwrap());
    let guard = a.lock(LockName::Index).unwrap();
    // The holder's connection goes away, as when its process is killed.
    db.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let b2 = b.clone();
    std::thread::spawn(move || {
        let g = b2.lock(LockName::Index).unwrap();
        tx.send(()).unwrap();
        drop(g);
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the dead session's lock was never released");
    // Dropping a guard whose session is gone is quiet, and the store still works.
    drop(guard);
    drop(a.lock(LockName::Index).unwrap());
}

#[test]
fn tenants_never_see_each_other() {
    let db = pg_or_skip!();
    let alice = PgStore::create(&db.url("alice")).unwrap();
    let bob = PgStore::create(&db.url("bob")).unwrap();
    alice.write(&p("core.md"), b"alice").unwrap();
    alice.write(&p("notes/a.md"), b"a").unwrap();
    alice.write_meta("config.toml", b"a").unwrap();
    bob.write(&p("core.md"), b"bob").unwrap();
    assert_eq!(alice.read(&p("core.md")).unwrap(), b"alice");
    assert_eq!(bob.read(&p("core.md")).unwrap(), b"bob");
    assert_eq!(names(&bob, ""), ["core.md"]);
    assert_eq!(bob.read_meta("config.toml").unwrap(), None);
    bob.write(&p("notes/b.md"), b"b").unwrap();
    bob.remove(&p("notes")).unwrap();
    assert_eq!(names(&alice, "notes"), ["notes/a.md"]);
    assert!(matches!(
        bob.rename(&p("notes"), &p("x")),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn opening_needs_a_created_tenant_and_a_good_url() {
    let db = pg_or_skip!();
    assert!(
        matches!(PgStore::open(&db.url("carol")), Err(StoreError::NotFound(m)) if m.contains("run `memdir init` first"))
    );
    PgStore::create(&db.url("carol")).unwrap();
    PgStore::open(&db.url("carol")).unwrap();
    let no_tenant = db.url("x").replace("?tenant=x", "");
    assert!(
        matches!(PgStore::open(&no_tenant), Err(StoreError::InvalidPath(m)) if m.contains("?tenant=NAME"))
    );
    assert!(
        matches!(PgStore::open(&db.url("a b")), Err(StoreError::InvalidPath(m)) if m.starts_with("bad tenant"))
    );
    let down = "postgres://postgres@127.0.0.1:1/nowhere?tenant=a";
    assert!(
        matches!(PgStore::open(down), Err(StoreError::Unavailable(m)) if m.starts_with("cannot connect to postgresql"))
    );
}

#[test]
fn two_processes_migrating_a_fresh_database_at_once_both_succeed() {
    let db = pg_or_skip!();
    let url = db.url("alice");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::create(&url).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    // Each migration is recorded once; a schema newer than this build is refused.
    db.sql("DO $$ BEGIN IF (SELECT count(*) <> count(DISTINCT version) OR count(*) < 2 FROM memdir.migrations) THEN RAISE 'migrations recorded twice or missing'; END IF; END $$")
        .unwrap();
    db.sql("INSERT INTO memdir.migrations VALUES (999, 0)")
        .unwrap();
    assert!(
        matches!(PgStore::open(&url), Err(StoreError::Unavailable(m)) if m.contains("newer than this memdir knows"))
    );
}

#[test]
fn calls_from_inside_a_tokio_runtime_do_not_panic() {
    let db = pg_or_skip!();
    let url = db.url("alice");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let s = PgStore::create(&url).unwrap();
        s.write(&p("core.md"), b"x").unwrap();
        let g = s.lock(LockName::Index).unwrap();
        assert_eq!(s.read(&p("core.md")).unwrap(), b"x");
        drop(g);
        let handle = tokio::spawn(async move {
            s.append(&p("core.md"), b"y").unwrap();
            s
        });
        let s = handle.await.unwrap();
        assert_eq!(s.read(&p("core.md")).unwrap(), b"xy");
        // Dropping the store (and its runtime) inside this runtime is safe too.
        drop(s);
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = PgStore::open(&db.url("alice")).unwrap();
        assert_eq!(s.read(&p("core.md")).unwrap(), b"xy");
    });
}

#[test]
fn preconditions_are_checked_with_the_write() {
    use memdir_store_pg::Pre;
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    let f = p("notes/a.md");
    let v1 = s.write_if(&f, b"one", Pre::Absent).unwrap();
    assert_eq!(v1, memdir_store::Version::of(b"one").to_string());
    assert!(
        matches!(s.write_if(&f, b"two", Pre::Absent), Err(StoreError::Conflict(m)) if m == "notes/a.md already exists")
    );
    assert!(matches!(
        s.write_if(&p("notes"), b"two", Pre::Absent),
        Err(StoreError::Conflict(_))
    ));
    let v2 = s.write_if(&f, b"two", Pre::Matches(v1.clone())).unwrap();
    assert!(matches!(
        s.write_if(&f, b"three", Pre::Matches(v1.clone())),
        Err(StoreError::Conflict(m)) if m.starts_with("notes/a.md changed since you read it")
    ));
    assert_eq!(s.read_versioned(&f).unwrap(), (b"two".to_vec(), v2.clone()));
    // After an append the version is computed from the bytes.
    s.append(&f, b"\nmore").unwrap();
    let (data, v3) = s.read_versioned(&f).unwrap();
    assert_eq!(v3, memdir_store::Version::of(&data).to_string());
    assert!(s.write_if(&f, b"four", Pre::Matches(v2)).is_err());
    s.write_if(&f, b"four", Pre::Matches(v3)).unwrap();
    assert!(matches!(
        s.write_if(&p("gone.md"), b"x", Pre::Matches(v1)),
        Err(StoreError::Conflict(m)) if m.contains("it is now deleted")
    ));
    s.write_if(&f, b"five", Pre::Any).unwrap();
    assert_eq!(s.read(&f).unwrap(), b"five");
}

#[test]
fn only_one_of_many_racing_creates_wins() {
    use memdir_store_pg::Pre;
    let db = pg_or_skip!();
    let s = Arc::new(PgStore::create(&db.url("alice")).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || {
                s.write_if(&p("offload/x.md"), format!("{i}").as_bytes(), Pre::Absent)
                    .is_ok()
            })
        })
        .collect();
    let wins = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|w| *w)
        .count();
    assert_eq!(wins, 1);
}

#[test]
fn a_thread_asking_again_for_its_own_lock_gets_an_error_and_file_locks_have_their_own_names() {
    let db = pg_or_skip!();
    let a = PgStore::create(&db.url("alice")).unwrap();
    let b = PgStore::open(&db.url("alice")).unwrap();
    let g = a.lock(LockName::Git).unwrap();
    assert!(
        matches!(b.lock(LockName::Git), Err(StoreError::Unavailable(m)) if m.contains("already held by this thread"))
    );
    // A file named `git` has a lock of its own.
    let git_file = p("git");
    drop(b.lock(LockName::File(&git_file)).unwrap());
    drop(g);
    drop(b.lock(LockName::Git).unwrap());
}

#[test]
fn appends_racing_removes_and_rewrites_never_deadlock() {
    let db = pg_or_skip!();
    let s = Arc::new(PgStore::create(&db.url("alice")).unwrap());
    let f = p("log/2026-12-01.md");
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (s, f) = (s.clone(), f.clone());
            std::thread::spawn(move || {
                for i in 0..150 {
                    let r = match (t, i % 3) {
                        (0, 0) => s.remove(&f).or_else(|e| match e {
                            StoreError::NotFound(_) => Ok(()),
                            e => Err(e),
                        }),
                        (0, _) => s.write(&f, b"fresh\n"),
                        _ => s.append(&f, b"- line\n"),
                    };
                    if let Err(e) = r {
                        panic!("thread {t} step {i}: {e}");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn create_makes_a_missing_database_and_open_says_to_init() {
    let db = pg_or_skip!();
    // A database name of its own, beside the test's, dropped at the end.
    let name = format!("{}_new", db.name);
    let url = db.url("alice").replace(&db.name, &name);
    let drop_it = || common::admin_server(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    let err = PgStore::open(&url).unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound(m) if m.contains("does not exist") && m.contains("memdir init")),
        "{err:?}"
    );
    let s = PgStore::create(&url).unwrap();
    s.write(&p("core.md"), b"hello").unwrap();
    drop(s);
    assert_eq!(
        PgStore::open(&url).unwrap().read(&p("core.md")).unwrap(),
        b"hello"
    );
    drop_it().unwrap();
}

/// `read_all` keeps what it fetched for the next search, and a repeat search sees every change
/// made since, through this store or another one (a second server): appends, rewrites, removes,
/// and a file removed and made again at the same size.
#[test]
fn read_all_cache_sees_every_change() {
    let db = pg_or_skip!();
    let mine = PgStore::create(&db.url("alice")).unwrap();
    let other = PgStore::create(&db.url("alice")).unwrap();
    mine.write(&p("a.md"), b"one\n").unwrap();
    mine.write(&p("b.md"), b"two\n").unwrap();
    mine.write(&p("c.md"), b"xxxx\n").unwrap();
    let all = |s: &PgStore| s.read_all(&mut |_| true).unwrap();
    assert_eq!(all(&mine).len(), 3);
    assert!(mine.cached_bytes() >= 13);
    other.append(&p("a.md"), b"more\n").unwrap();
    other.write(&p("b.md"), b"owt\n").unwrap();
    other.remove(&p("c.md")).unwrap();
    other.append(&p("c.md"), b"yyyy\n").unwrap();
    other.write(&p("d.md"), b"new\n").unwrap();
    let fresh = PgStore::open(&db.url("alice")).unwrap();
    assert_eq!(all(&mine), all(&fresh));
    let got = all(&mine);
    assert_eq!(got[2].1, b"yyyy\n");
    other.remove(&p("d.md")).unwrap();
    assert_eq!(all(&mine).len(), 3);
    // Only what `keep` accepts is returned.
    assert_eq!(
        mine.read_all(&mut |x| x.as_str() == "a.md").unwrap().len(),
        1
    );
}

/// What a prefetch answers is what the database answers: bytes, listings (in the database's
/// order), stats, missing paths, paths under a file, meta files and keys; a folder's last-n
/// files come with their bytes and an older one is read as usual; a write by the same thread
/// is seen at once, and another thread never reads this thread's snapshot (issue 35, item 2).
#[test]
fn a_prefetch_answers_what_the_database_answers() {
    use memdir_store::{Contents, Want};
    let db = pg_or_skip!();
    let s = PgStore::create(&db.url("alice")).unwrap();
    for (f, b) in [
        ("core.md", "core\n"),
        ("log/2026-11-28.md", "a\n"),
        ("log/2026-11-29.md", "b\n"),
        ("log/2026-11-30.md", "c\n"),
        ("log/2026-11-30.bob.md", "d\n"),
        ("scratch/x.md", "x\n"),
        ("notes/n.md", "n\n"),
    ] {
        s.write(&p(f), b.as_bytes()).unwrap();
    }
    s.create_dir(&p("scratch/sub")).unwrap();
    s.write_meta("journal", b"j").unwrap();
    let keys = s.keys().unwrap();
    keys.create("key", b"secret").unwrap();
    let wants = [
        Want::File(p("core.md")),
        Want::File(p("state.md")),
        Want::File(p("core.md/under")),
        Want::File(p("a/b/c.md")),
        Want::Dir(p("log"), Contents::Last(2)),
        Want::Dir(p("scratch"), Contents::All),
        Want::Dir(p("proposals"), Contents::All),
        Want::Meta("journal".into()),
        Want::Meta("nothing".into()),
        Want::Key("key".into()),
        Want::Key("head".into()),
    ];
    let look = |s: &PgStore| {
        let mut out = Vec::new();
        for f in [
            "core.md",
            "state.md",
            "core.md/under",
            "a/b/c.md",
            "log/2026-11-28.md",
            "log/2026-11-30.md",
            "log/2026-11-30.bob.md",
            "log/2026-12-01.md",
            "scratch/x.md",
            "scratch/sub",
            "notes/n.md",
        ] {
            out.push(format!("read {f}: {:?}", s.read_versioned(&p(f))));
            out.push(format!("stat {f}: {:?}", s.stat(&p(f))));
        }
        for d in ["log", "scratch", "proposals", "core.md", "notes"] {
            out.push(format!("list {d}: {:?}", s.list(&p(d))));
        }
        for m in ["journal", "nothing"] {
            out.push(format!("meta {m}: {:?}", s.read_meta(m)));
        }
        for k in ["key", "head"] {
            out.push(format!("key {k}: {:?}", s.keys().unwrap().read(k)));
        }
        out
    };
    let direct = look(&s);
    let guard = s.prefetch(&wants);
    assert_eq!(look(&s), direct);
    // Another thread writes: this thread still sees its snapshot, the writer sees its write.
    std::thread::scope(|t| {
        t.spawn(|| {
            s.write(&p("core.md"), b"other\n").unwrap();
            assert_eq!(s.read(&p("core.md")).unwrap(), b"other\n");
        });
    });
    assert_eq!(s.read(&p("core.md")).unwrap(), b"core\n");
    // This thread writes: its snapshot is gone.
    s.write(&p("state.md"), b"state\n").unwrap();
    assert_eq!(s.read(&p("core.md")).unwrap(), b"other\n");
    assert_eq!(s.read(&p("state.md")).unwrap(), b"state\n");
    drop(guard);
    // A prefetch ends with its guard.
    let guard = s.prefetch(&wants);
    drop(guard);
    s.write_meta("journal", b"").unwrap();
    s.keys().unwrap().replace("key", b"other").unwrap();
    let _guard = s.prefetch(&wants);
    assert_eq!(s.read_meta("journal").unwrap(), Some(Vec::new()));
    assert_eq!(
        s.keys().unwrap().read("key").unwrap(),
        Some(b"other".to_vec())
    );
}
