//! What is particular to S3, against a real S3-compatible server: the layout of keys, files
//! written by other tools, leases (crashed holders, renewal), half-done folder moves, the
//! search cache, and secrets kept out of `Debug`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use memdir::search::SearchRequest;
use memdir::{Backend, Clock, LockName, Locks, Memory, Precondition, Store, StoreError, Version};
use memdir_core::path::MemPath;
use memdir_store_s3::S3Store;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn p(s: &str) -> MemPath {
    MemPath::parse(s).unwrap()
}

fn clock() -> Clock {
    Clock::fixed(
        "2026-12-01T09:15:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

/// Puts an object as another tool would: no memdir metadata.
fn raw_put(b: &common::TestBucket, key: &str, body: &str) {
    ureq::put(&format!("{}/{}/{key}", b.endpoint, b.bucket))
        .send(body)
        .unwrap();
}

#[test]
fn files_are_objects_under_the_tenant_and_state_sits_beside_it() {
    let b = s3_or_skip!();
    let s = b.store("alice");
    s.write(&p("notes/people/priya.md"), b"# Priya\n").unwrap();
    s.create_dir(&p("notes/empty")).unwrap();
    s.write_meta("config.toml", b"[git]\n").unwrap();
    let mut keys = b.keys();
    keys.sort();
    assert_eq!(
        keys,
        [
            "memories/.memdir/alice/meta/config.toml",
            "memories/.memdir/alice/tenant",
            "memories/alice/notes/empty/.memdir",
            "memories/alice/notes/people/priya.md",
        ]
    );
    // The object is the file's bytes (moto keeps objects of a signed writer private, so the
    // listing's size stands in for an anonymous read).
    assert!(
        b.listing()
            .contains("<Key>memories/alice/notes/people/priya.md</Key><LastModified>"),
        "{}",
        b.listing()
    );
    assert_eq!(
        s.stat(&p("notes/people/priya.md")).unwrap().unwrap().size,
        8
    );
    // The marker is never a file of the memory.
    let listed: Vec<String> = s
        .list(&p("notes/empty"))
        .unwrap()
        .into_iter()
        .map(|e| e.path.to_string())
        .collect();
    assert!(listed.is_empty(), "{listed:?}");
}

#[test]
fn a_file_written_by_another_tool_has_its_content_version() {
    let b = s3_or_skip!();
    let s = b.store("alice");
    raw_put(
        &b,
        "memories/alice/notes/by-hand.md",
        "written with the aws cli\n",
    );
    let (bytes, v) = s.read_versioned(&p("notes/by-hand.md")).unwrap();
    assert_eq!(v, Version::of(&bytes));
    let stale = Version::of(b"something else");
    assert!(matches!(
        s.write_if(&p("notes/by-hand.md"), b"x", &Precondition::Matches(stale)),
        Err(StoreError::Conflict(_))
    ));
    s.write_if(
        &p("notes/by-hand.md"),
        b"edited\n",
        &Precondition::Matches(v),
    )
    .unwrap();
    assert_eq!(s.read(&p("notes/by-hand.md")).unwrap(), b"edited\n");
}

#[test]
fn opening_a_memory_that_was_never_created_is_not_found() {
    let b = s3_or_skip!();
    let err = S3Store::open(b.config("nobody")).unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound(ref m) if m.contains("memdir init")),
        "{err:?}"
    );
    let mut c = b.config("x");
    c.url.bucket = "no-such-bucket-memdir".into();
    let err = S3Store::create(c).unwrap_err().to_string();
    assert!(err.contains("no-such-bucket-memdir"), "{err}");
}

#[test]
fn a_crashed_holders_lease_is_taken_over_after_one_lease() {
    let b = s3_or_skip!();
    let lease = Duration::from_millis(1500);
    let s = S3Store::create(b.config("alice").with_lease(lease)).unwrap();
    // A holder that crashed: a held record far in the future by its clock, never renewed.
    raw_put(
        &b,
        "memories/.memdir/alice/locks/git",
        r#"{"owner":"crashed","state":"held","n":7,"expires_ms":99999999999999}"#,
    );
    let start = Instant::now();
    let g = s.lock(LockName::Git).unwrap();
    let waited = start.elapsed();
    assert!(
        waited >= lease,
        "took a live-looking lease after {waited:?}"
    );
    assert!(waited < lease * 4, "waited {waited:?} for a crashed holder");
    drop(g);
    // An expired record (by the holder's clock) is taken at once.
    raw_put(
        &b,
        "memories/.memdir/alice/locks/index",
        r#"{"owner":"crashed","state":"held","n":1,"expires_ms":1}"#,
    );
    let start = Instant::now();
    drop(s.lock(LockName::Index).unwrap());
    assert!(
        start.elapsed() < lease,
        "an expired lease was not taken at once"
    );
}

#[test]
fn a_held_lease_is_renewed_so_nobody_takes_it_while_its_holder_lives() {
    let b = s3_or_skip!();
    let lease = Duration::from_millis(900);
    let (a, other) = (
        S3Store::create(b.config("alice").with_lease(lease)).unwrap(),
        S3Store::create(b.config("alice").with_lease(lease)).unwrap(),
    );
    let held = a.lock(LockName::Git).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let g = other.lock(LockName::Git).unwrap();
        tx.send(Instant::now()).unwrap();
        drop(g);
    });
    // Four leases long: without renewal the waiter would have taken it.
    assert!(
        rx.recv_timeout(lease * 4).is_err(),
        "a second store took a lease its holder kept renewing"
    );
    let released = Instant::now();
    drop(held);
    let took = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(took >= released);
    waiter.join().unwrap();
}

#[test]
fn a_folder_move_left_half_done_by_a_crash_is_finished_by_the_next_open() {
    let b = s3_or_skip!();
    let s = b.store("alice");
    for f in ["old/a.md", "old/sub/b.md", "old/c.md"] {
        s.write(&p(f), f.as_bytes()).unwrap();
    }
    // The crash: the intent is written, one object copied, nothing deleted.
    raw_put(
        &b,
        "memories/.memdir/alice/moves/crashed",
        r#"{"from":"old","to":"new","rests":["/a.md","/sub/b.md","/c.md"]}"#,
    );
    raw_put(&b, "memories/alice/new/a.md", "old/a.md");
    drop(s);
    let again = S3Store::open(b.config("alice").with_lease(Duration::from_millis(1))).unwrap();
    let files: Vec<(String, Vec<u8>)> = memdir_store_tests::snapshot(&again);
    assert_eq!(
        files,
        [
            ("new/a.md".to_string(), b"old/a.md".to_vec()),
            ("new/c.md".to_string(), b"old/c.md".to_vec()),
            ("new/sub/b.md".to_string(), b"old/sub/b.md".to_vec()),
        ]
    );
    assert!(
        !b.keys().iter().any(|k| k.contains("/moves/")),
        "the intent was left behind"
    );
}

#[test]
fn a_repeat_search_on_an_unchanged_memory_reads_only_a_listing() {
    let b = s3_or_skip!();
    let cache = tempfile::tempdir().unwrap();
    let writer = Memory::init_backend(b.backend("alice"), clock(), true).unwrap();
    for i in 0..30 {
        writer
            .write(
                &format!("notes/n{i:02}.md"),
                &format!("note {i} about postgres\n"),
            )
            .unwrap()
            .done()
            .unwrap();
    }
    // A reader is a process of its own: its own client, the cache folder the front end gives.
    let reader = || {
        let s = Arc::new(S3Store::open(b.config("alice").with_cache_dir(cache.path())).unwrap());
        let mem = Memory::open_backend(Backend::store_only(s.clone()), clock()).unwrap();
        (s, mem)
    };
    let (first_store, first_mem) = reader();
    let first = first_mem.search(&SearchRequest::new("postgres")).unwrap();
    assert_eq!(first.hits.len(), 30);
    assert!(
        first_store.requests().get >= 30,
        "the first search read the files"
    );
    let (s, mem) = reader();
    let before = s.requests();
    let again = mem.search(&SearchRequest::new("postgres")).unwrap();
    assert_eq!(again, first);
    let after = s.requests();
    assert_eq!(
        (after.get, after.head, after.list),
        (before.get, before.head, before.list + 1),
        "a repeat search on an unchanged memory sent more than one listing: {before:?} -> {after:?}"
    );
    // One changed file: exactly that object is fetched, and the search sees the change.
    writer
        .write("notes/n07.md", "note 7 now about sqlite\n")
        .unwrap()
        .done()
        .unwrap();
    let found = mem.search(&SearchRequest::new("sqlite")).unwrap();
    assert_eq!(found.hits.len(), 1);
    assert_eq!(found.hits[0].path, "notes/n07.md");
    assert_eq!(s.requests().get, after.get + 1);
}

#[test]
fn secrets_never_show_in_debug_output() {
    let b = s3_or_skip!();
    let config = b.config("alice");
    let s = S3Store::create(config.clone()).unwrap();
    for shown in [format!("{s:?}"), format!("{config:?}")] {
        assert!(!shown.contains("testing-secret-key"), "{shown}");
        assert!(shown.contains("alice"), "{shown}");
    }
}
