//! Store-level checks: the [`memdir::Store`] and [`memdir::Locks`] contracts.

use crate::Harness;
use memdir::{EntryKind, LockName, Precondition, Store, StoreError, Version};
use memdir_core::path::MemPath;
use proptest::prelude::*;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

fn p(s: &str) -> MemPath {
    MemPath::parse(s).unwrap()
}

fn store(h: &impl Harness, tenant: &str) -> Arc<dyn Store> {
    h.open(tenant).store
}

/// Every file under the root with its bytes, in path order.
pub fn snapshot(s: &dyn Store) -> Vec<(String, Vec<u8>)> {
    s.walk(&MemPath::root())
        .unwrap()
        .into_iter()
        .map(|e| (e.path.to_string(), s.read(&e.path).unwrap()))
        .collect()
}

/// Whole files round trip byte for byte, with their version; a missing file is not found.
pub fn round_trip(h: &impl Harness) {
    let s = store(h, "t");
    let bytes: Vec<u8> = (0..=255u8).chain(b"\r\n\0 end".iter().copied()).collect();
    let v = s
        .write_if(&p("a/b/c.bin"), &bytes, &Precondition::Any)
        .unwrap();
    assert_eq!(v, Version::of(&bytes));
    assert_eq!(s.read(&p("a/b/c.bin")).unwrap(), bytes);
    let (back, v2) = s.read_versioned(&p("a/b/c.bin")).unwrap();
    assert_eq!((back, v2), (bytes.clone(), v));
    s.write(&p("empty.md"), b"").unwrap();
    assert_eq!(s.read(&p("empty.md")).unwrap(), b"");
    assert_eq!(
        Version::of(b"").as_str(),
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        "a version is git's blob id"
    );
    let e = s.stat(&p("a/b/c.bin")).unwrap().unwrap();
    assert_eq!((e.kind, e.size), (EntryKind::File, bytes.len() as u64));
    assert_eq!(s.stat(&p("a/b")).unwrap().unwrap().kind, EntryKind::Dir);
    assert!(s.stat(&p("nope.md")).unwrap().is_none());
    assert!(matches!(
        s.read(&p("nope.md")),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(s.read(&p("a/b")), Err(StoreError::InvalidPath(_))));
    assert!(matches!(
        s.write(&p("a/b"), b"x"),
        Err(StoreError::InvalidPath(_))
    ));
    s.append(&p("log/x.md"), b"one\n").unwrap();
    s.append(&p("log/x.md"), b"two\n").unwrap();
    assert_eq!(s.read(&p("log/x.md")).unwrap(), b"one\ntwo\n");
    assert_eq!(s.read_meta("nothing").unwrap(), None);
    s.write_meta("config.toml", b"[git]\n").unwrap();
    assert_eq!(s.read_meta("config.toml").unwrap().unwrap(), b"[git]\n");
}

/// A reader never sees a mix of the old and the new content of a replaced file.
pub fn atomic_replace(h: &impl Harness) {
    let s = store(h, "t");
    let a = vec![b'a'; 256 * 1024];
    let b = vec![b'b'; 300 * 1024];
    s.write(&p("f.md"), &a).unwrap();
    std::thread::scope(|sc| {
        let writer = sc.spawn(|| {
            for i in 0..40 {
                s.write(&p("f.md"), if i % 2 == 0 { &b } else { &a })
                    .unwrap();
            }
        });
        while !writer.is_finished() {
            let got = s.read(&p("f.md")).unwrap();
            assert!(got == a || got == b, "a reader saw a torn write");
        }
    });
}

/// Lists are a folder's direct children in path order, folders included, memdir's own files
/// never; a missing folder is not found.
pub fn listing(h: &impl Harness) {
    let s = store(h, "t");
    for f in ["b.md", "a/z.md", "a-b.md", "c/d/e.md", "B.md"] {
        s.write(&p(f), f.as_bytes()).unwrap();
    }
    s.create_dir(&p("empty")).unwrap();
    s.write_meta("config.toml", b"x").unwrap();
    let names: Vec<(String, EntryKind)> = s
        .list(&MemPath::root())
        .unwrap()
        .into_iter()
        .map(|e| (e.path.to_string(), e.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("B.md", EntryKind::File),
            ("a", EntryKind::Dir),
            ("a-b.md", EntryKind::File),
            ("b.md", EntryKind::File),
            ("c", EntryKind::Dir),
            ("empty", EntryKind::Dir),
        ]
        .map(|(n, k)| (n.to_string(), k))
    );
    let sizes: Vec<u64> = s.list(&p("a")).unwrap().iter().map(|e| e.size).collect();
    assert_eq!(sizes, [6]);
    assert!(s.list(&p("empty")).unwrap().is_empty());
    assert!(matches!(s.list(&p("nope")), Err(StoreError::NotFound(_))));
    let walked: Vec<String> = s
        .walk(&MemPath::root())
        .unwrap()
        .into_iter()
        .map(|e| e.path.to_string())
        .collect();
    assert_eq!(walked, ["B.md", "a-b.md", "a/z.md", "b.md", "c/d/e.md"]);
    // The bulk read search uses gives the same files in the same order, each with its bytes,
    // and reads only what the filter keeps.
    let read_all = |keep: &mut dyn FnMut(&MemPath) -> bool| -> Vec<(String, Vec<u8>)> {
        s.read_all(keep)
            .unwrap()
            .into_iter()
            .map(|(p, b)| (p.to_string(), b))
            .collect()
    };
    let expect: Vec<(String, Vec<u8>)> = walked
        .iter()
        .map(|f| (f.clone(), f.as_bytes().to_vec()))
        .collect();
    assert_eq!(read_all(&mut |_| true), expect);
    assert_eq!(
        read_all(&mut |p| p.as_str().starts_with("a/")),
        [("a/z.md".to_string(), b"a/z.md".to_vec())]
    );
}

/// Removing a folder removes everything in it; removing what is not there is not found.
pub fn remove_recursive(h: &impl Harness) {
    let s = store(h, "t");
    for f in ["d/a.md", "d/e/b.md", "d/e/f/c.md", "keep.md", "d2/x.md"] {
        s.write(&p(f), b"x").unwrap();
    }
    s.remove(&p("d")).unwrap();
    assert!(s.stat(&p("d")).unwrap().is_none());
    assert!(s.stat(&p("d/e/f/c.md")).unwrap().is_none());
    assert_eq!(
        snapshot(s.as_ref())
            .into_iter()
            .map(|(p, _)| p)
            .collect::<Vec<_>>(),
        ["d2/x.md", "keep.md"]
    );
    s.remove(&p("keep.md")).unwrap();
    assert!(matches!(
        s.remove(&p("keep.md")),
        Err(StoreError::NotFound(_))
    ));
}

/// A rename moves files and folders and never overwrites.
pub fn rename_never_overwrites(h: &impl Harness) {
    let s = store(h, "t");
    s.write(&p("a.md"), b"A").unwrap();
    s.write(&p("b.md"), b"B").unwrap();
    assert!(matches!(
        s.rename(&p("a.md"), &p("b.md")),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(s.read(&p("a.md")).unwrap(), b"A");
    assert_eq!(s.read(&p("b.md")).unwrap(), b"B");
    s.rename(&p("a.md"), &p("x/y/a.md")).unwrap();
    assert_eq!(s.read(&p("x/y/a.md")).unwrap(), b"A");
    assert!(s.stat(&p("a.md")).unwrap().is_none());
    s.write(&p("dir/one.md"), b"1").unwrap();
    s.write(&p("dir/sub/two.md"), b"2").unwrap();
    s.rename(&p("dir"), &p("moved")).unwrap();
    assert_eq!(s.read(&p("moved/sub/two.md")).unwrap(), b"2");
    assert!(s.stat(&p("dir")).unwrap().is_none());
    s.create_dir(&p("full")).unwrap();
    s.write(&p("full/f.md"), b"f").unwrap();
    assert!(matches!(
        s.rename(&p("moved"), &p("full")),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        s.rename(&p("moved"), &p("moved/inside")),
        Err(StoreError::InvalidPath(_))
    ));
    assert!(matches!(
        s.rename(&p("nope.md"), &p("new.md")),
        Err(StoreError::NotFound(_))
    ));
}

/// `Absent` only creates; `Matches` only replaces that version; a refused write changes nothing.
pub fn preconditions(h: &impl Harness) {
    let s = store(h, "t");
    let f = p("n/f.md");
    let v1 = s.write_if(&f, b"one", &Precondition::Absent).unwrap();
    assert!(matches!(
        s.write_if(&f, b"two", &Precondition::Absent),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(s.read(&f).unwrap(), b"one");
    assert!(matches!(
        s.write_if(&p("n"), b"x", &Precondition::Absent),
        Err(StoreError::Conflict(_))
    ));
    let v2 = s
        .write_if(&f, b"two", &Precondition::Matches(v1.clone()))
        .unwrap();
    let err = s
        .write_if(&f, b"three", &Precondition::Matches(v1.clone()))
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert!(err.to_string().contains(v2.short()), "{err}");
    assert_eq!(s.read(&f).unwrap(), b"two");
    assert!(matches!(
        s.write_if(&p("gone.md"), b"x", &Precondition::Matches(v1)),
        Err(StoreError::Conflict(_))
    ));
    assert!(s.stat(&p("gone.md")).unwrap().is_none());
}

/// Eight writers holding the same version race to replace it: exactly one wins, on one store
/// instance or across two.
pub fn preconditions_race(h: &impl Harness) {
    let stores = [store(h, "t"), store(h, "t")];
    let f = p("race.md");
    for round in 0..5 {
        let base = stores[0]
            .write_if(&f, format!("round {round}").as_bytes(), &Precondition::Any)
            .unwrap();
        let wins: usize = std::thread::scope(|sc| {
            let runs: Vec<_> = (0..8)
                .map(|i| {
                    let s = stores[i % 2].clone();
                    let (f, base) = (f.clone(), base.clone());
                    sc.spawn(move || {
                        let body = format!("writer {i}\n").repeat(2000);
                        s.write_if(&f, body.as_bytes(), &Precondition::Matches(base))
                            .is_ok()
                    })
                })
                .collect();
            runs.into_iter()
                .map(|r| usize::from(r.join().unwrap()))
                .sum()
        });
        assert_eq!(
            wins, 1,
            "round {round}: {wins} writers replaced one version"
        );
    }
    let created: usize = std::thread::scope(|sc| {
        let runs: Vec<_> = (0..8)
            .map(|i| {
                let s = stores[i % 2].clone();
                sc.spawn(move || {
                    s.write_if(&p("new.md"), b"x", &Precondition::Absent)
                        .is_ok()
                })
            })
            .collect();
        runs.into_iter()
            .map(|r| usize::from(r.join().unwrap()))
            .sum()
    });
    assert_eq!(created, 1);
}

/// 8 threads x 500 appends to one file: every line arrives whole, none is lost.
pub fn appends_concurrent(h: &impl Harness) {
    let stores = [store(h, "t"), store(h, "t")];
    let f = p("log/2026-12-01.md");
    std::thread::scope(|sc| {
        for t in 0..8 {
            let s = stores[t % 2].clone();
            let f = f.clone();
            sc.spawn(move || {
                for i in 0..500 {
                    let line = format!("- writer {t} entry {i} {}\n", "x".repeat(t * 7));
                    s.append(&f, line.as_bytes()).unwrap();
                }
            });
        }
    });
    let text = String::from_utf8(stores[0].read(&f).unwrap()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4000);
    lines.sort();
    let mut want: Vec<String> = (0..8)
        .flat_map(|t| {
            (0..500).map(move |i| format!("- writer {t} entry {i} {}", "x".repeat(t * 7)))
        })
        .collect();
    want.sort();
    assert_eq!(lines, want);
}

/// A lock taken through one store instance keeps a second instance (a second server) waiting
/// until it is released; different names do not wait on each other.
pub fn lock_excludes_second_instance(h: &impl Harness) {
    let (a, b) = (store(h, "t"), store(h, "t"));
    let held = a.lock(LockName::Git).unwrap();
    let other = b.lock(LockName::Index).unwrap();
    drop(other);
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let g = b.lock(LockName::Git).unwrap();
        tx.send(()).unwrap();
        drop(g);
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "a second store took a lock that was held"
    );
    drop(held);
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the lock was not handed over after release");
    waiter.join().unwrap();
}

/// Names in any script round trip and list in byte order.
pub fn unicode_names(h: &impl Harness) {
    let s = store(h, "t");
    let names = [
        "notes/café.md",
        "notes/日本語/メモ.md",
        "notes/emoji 🧠.md",
        "notes/Ünïcödé name.md",
    ];
    for n in names {
        s.write(&p(n), n.as_bytes()).unwrap();
    }
    for n in names {
        assert_eq!(s.read(&p(n)).unwrap(), n.as_bytes());
    }
    let mut want: Vec<&str> = names.to_vec();
    want.sort();
    let got: Vec<String> = snapshot(s.as_ref()).into_iter().map(|(p, _)| p).collect();
    assert_eq!(got, want);
    s.rename(&p("notes/café.md"), &p("notes/thé.md")).unwrap();
    assert_eq!(
        s.read(&p("notes/thé.md")).unwrap(),
        "notes/café.md".as_bytes()
    );
}

/// An 8 MiB file round trips, is replaced, and is appended to.
pub fn large_files(h: &impl Harness) {
    let s = store(h, "t");
    let big: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let v = s
        .write_if(&p("big.bin"), &big, &Precondition::Absent)
        .unwrap();
    assert_eq!(s.read(&p("big.bin")).unwrap(), big);
    s.append(&p("big.bin"), b"tail").unwrap();
    let back = s.read(&p("big.bin")).unwrap();
    assert_eq!(back.len(), big.len() + 4);
    assert!(matches!(
        s.write_if(&p("big.bin"), b"x", &Precondition::Matches(v)),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        s.stat(&p("big.bin")).unwrap().unwrap().size,
        back.len() as u64
    );
}

/// One random operation on a store.
#[derive(Debug, Clone)]
pub enum Op {
    /// Write a file.
    Write(String, Vec<u8>),
    /// Append to a file.
    Append(String, Vec<u8>),
    /// Remove a file or folder.
    Remove(String),
    /// Rename.
    Rename(String, String),
    /// Create only.
    Create(String, Vec<u8>),
}

fn path_strategy() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec!["a", "b", "notes", "log", "é", "x.md", "y.md"]);
    prop::collection::vec(part, 1..4).prop_map(|v| v.join("/"))
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let bytes = prop::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        (path_strategy(), bytes.clone()).prop_map(|(p, b)| Op::Write(p, b)),
        (path_strategy(), bytes.clone()).prop_map(|(p, b)| Op::Append(p, b)),
        path_strategy().prop_map(Op::Remove),
        (path_strategy(), path_strategy()).prop_map(|(a, b)| Op::Rename(a, b)),
        (path_strategy(), bytes).prop_map(|(p, b)| Op::Create(p, b)),
    ]
}

/// Applies one operation; refusals (a file where a folder should be, a missing source) are
/// part of the game.
pub fn apply(s: &dyn Store, op: &Op) {
    let _ = match op {
        Op::Write(f, b) => s.write(&p(f), b),
        Op::Append(f, b) => s.append(&p(f), b),
        Op::Remove(f) => s.remove(&p(f)),
        Op::Rename(a, b) => s.rename(&p(a), &p(b)),
        Op::Create(f, b) => s.write_if(&p(f), b, &Precondition::Absent).map(drop),
    };
}

/// Random operations on one tenant never change another tenant's files.
pub fn tenants_isolated(h: &impl Harness) {
    let cfg = ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(cfg);
    let cases = std::sync::atomic::AtomicU32::new(0);
    runner
        .run(&prop::collection::vec(op_strategy(), 1..30), |ops| {
            let case = cases.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let (a, b) = (
                store(h, &format!("alice{case}")),
                store(h, &format!("bob{case}")),
            );
            for f in ["a/x.md", "notes/y.md", "log/z.md"] {
                b.write(&p(f), f.as_bytes()).unwrap();
            }
            let before = snapshot(b.as_ref());
            for op in &ops {
                apply(a.as_ref(), op);
            }
            prop_assert_eq!(snapshot(b.as_ref()), before);
            Ok(())
        })
        .unwrap();
}
