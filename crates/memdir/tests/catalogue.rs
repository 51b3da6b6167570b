//! The note catalogue (`Memory::notes`, and the links, backlinks and lint findings derived
//! from it) is kept between calls: it must never answer from a note older than a change that
//! finished before the call, whoever made it. Every change below is made behind the engine's
//! back (plain `std::fs`, as an editor or another process would, or the store directly) and
//! read at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir::{Clock, InMemoryStore, Memory};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

fn clock() -> Clock {
    Clock::fixed(
        "2026-11-30T09:15:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

fn note(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: the {name} note\n---\n{body}\n")
}

/// Writes a file as an editor would, then sets its modification time to `at`.
fn put(root: &Path, rel: &str, text: &str, at: SystemTime) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

/// The files that link to `target`, as `file:line`.
fn backlinks(mem: &Memory, target: &str) -> Vec<String> {
    match mem.links(target) {
        Ok(r) => r
            .backlinks
            .iter()
            .map(|b| format!("{}:{}", b.file, b.line))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn broken_links(mem: &Memory) -> Vec<String> {
    mem.lint()
        .unwrap()
        .findings
        .into_iter()
        .filter(|f| f.code == "broken-link")
        .map(|f| format!("{}:{}", f.file, f.line))
        .collect()
}

/// The same story on a folder, with or without the warm copy's change feed.
fn folder_story(mem: &Memory, root: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    put(root, "notes/a.md", &note("a", "alpha"), old);
    put(
        root,
        "notes/b.md",
        &note("b", "see [[a]] and [[nowhere]]"),
        old,
    );
    assert_eq!(backlinks(mem, "a"), ["notes/b.md:5"]);
    assert_eq!(broken_links(mem), ["notes/b.md:5"]);

    // Nothing changed: the same snapshot, nothing read again.
    let (first, second) = (mem.notes().unwrap(), mem.notes().unwrap());
    assert!(
        Arc::ptr_eq(&first, &second),
        "an unchanged memory was parsed again"
    );

    // An edit with an editor: a new size and time.
    put(
        root,
        "notes/b.md",
        &note("b", "no link now, [[elsewhere]]"),
        old + Duration::from_secs(1),
    );
    assert_eq!(backlinks(mem, "a"), Vec::<String>::new());
    assert_eq!(broken_links(mem), ["notes/b.md:5"]);
    assert_eq!(backlinks(mem, "elsewhere"), ["notes/b.md:5"]);

    // Two writes of the same size stamped with the same recent millisecond: the stamp cannot
    // tell them apart, so a recent file is read again at every call.
    let recent = SystemTime::now() - Duration::from_millis(100);
    put(root, "notes/b.md", &note("b", "[[a]] xx"), recent);
    assert_eq!(backlinks(mem, "a"), ["notes/b.md:5"]);
    put(root, "notes/b.md", &note("b", "[[z]] xx"), recent);
    assert_eq!(backlinks(mem, "a"), Vec::<String>::new());
    assert_eq!(backlinks(mem, "z"), ["notes/b.md:5"]);

    // An edit that keeps the size, with an older time of its own.
    put(
        root,
        "notes/b.md",
        &note("b", "[[a]] xy"),
        old + Duration::from_secs(2),
    );
    assert_eq!(backlinks(mem, "a"), ["notes/b.md:5"]);

    // A rename keeps the file's time: the note is found under its new path.
    std::fs::rename(root.join("notes/a.md"), root.join("notes/c.md")).unwrap();
    assert_eq!(mem.links("a").unwrap().path, "notes/c.md");
    assert_eq!(mem.resolve_note("[[a]]").unwrap(), "notes/c.md");
    assert_eq!(backlinks(mem, "a"), ["notes/b.md:5"]);
    let paths: Vec<String> = mem
        .notes()
        .unwrap()
        .notes()
        .map(|f| f.path.to_string())
        .collect();
    assert_eq!(paths, ["notes/b.md", "notes/c.md"]);

    // A delete: its links and their findings go with it.
    std::fs::remove_file(root.join("notes/b.md")).unwrap();
    assert_eq!(backlinks(mem, "a"), Vec::<String>::new());
    assert_eq!(broken_links(mem), Vec::<String>::new());

    // A write through the engine is seen as well.
    let _written = mem
        .write("notes/d.md", &note("d", "back to [[a]] and [[gone]]"))
        .unwrap();
    assert_eq!(backlinks(mem, "a"), ["notes/d.md:5"]);
    assert_eq!(broken_links(mem), ["notes/d.md:5"]);
}

#[test]
fn a_folder_catalogue_follows_edits_renames_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::init_with(dir.path(), clock(), false).unwrap();
    folder_story(&mem, dir.path());
}

#[test]
fn a_warm_catalogue_follows_edits_renames_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::init_with(dir.path(), clock(), false)
        .unwrap()
        .with_warm_search();
    folder_story(&mem, dir.path());
}

/// A store without a local folder (PostgreSQL, S3, here the in-memory reference) is compared
/// by content: a change made through the store behind the engine's back is seen.
#[test]
fn a_store_catalogue_follows_writes_renames_and_deletes() {
    let store = Arc::new(InMemoryStore::new());
    let mem = Memory::from_store(store.clone(), clock()).unwrap();
    let w = |p: &str, t: &str| {
        memdir::Store::write(
            &*store,
            &memdir_core::path::MemPath::parse(p).unwrap(),
            t.as_bytes(),
        )
        .unwrap()
    };
    w("notes/a.md", &note("a", "alpha"));
    w("notes/b.md", &note("b", "see [[a]]"));
    assert_eq!(backlinks(&mem, "a"), ["notes/b.md:5"]);
    let (first, second) = (mem.notes().unwrap(), mem.notes().unwrap());
    assert!(
        Arc::ptr_eq(&first, &second),
        "an unchanged memory was parsed again"
    );
    w("notes/b.md", &note("b", "see [[x]]"));
    assert_eq!(backlinks(&mem, "a"), Vec::<String>::new());
    memdir::Store::rename(
        &*store,
        &memdir_core::path::MemPath::parse("notes/a.md").unwrap(),
        &memdir_core::path::MemPath::parse("notes/x.md").unwrap(),
    )
    .unwrap();
    assert_eq!(backlinks(&mem, "x"), ["notes/b.md:5"]);
    assert_eq!(mem.links("a").unwrap().path, "notes/x.md");
    memdir::Store::remove(
        &*store,
        &memdir_core::path::MemPath::parse("notes/b.md").unwrap(),
    )
    .unwrap();
    assert_eq!(backlinks(&mem, "x"), Vec::<String>::new());
}
