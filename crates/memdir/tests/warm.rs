//! Warm search (`Memory::with_warm_search`): the in-memory copy of the files must never answer
//! with bytes older than a write that finished before the search began, whoever wrote them.
//! Every change below is made behind the engine's back (plain `std::fs`, as an editor, git or
//! another process would) and searched for at once, with no sleep in between.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir::search::{Mode, SearchRequest};
use memdir::{Clock, Memory};
use std::io::Write;
use std::path::Path;

fn clock() -> Clock {
    Clock::fixed(
        "2026-11-30T09:15:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

fn warm(root: &Path) -> Memory {
    Memory::init_with(root, clock(), false)
        .unwrap()
        .with_warm_search()
}

/// The paths of the lines that contain `pattern`, in order.
fn grep(mem: &Memory, pattern: &str) -> Vec<String> {
    mem.search(&SearchRequest::new(pattern))
        .unwrap()
        .hits
        .into_iter()
        .map(|h| format!("{}:{}", h.path, h.line))
        .collect()
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn every_kind_of_change_is_seen_by_the_next_search() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(root, "notes/a.md", "alpha one\n");
    let mem = warm(root);
    assert_eq!(grep(&mem, "alpha"), ["notes/a.md:1"]);

    // In-place rewrite with the same size (an mtime check could miss this within one tick).
    put(root, "notes/a.md", "gamma one\n");
    assert_eq!(grep(&mem, "alpha"), Vec::<String>::new());
    assert_eq!(grep(&mem, "gamma"), ["notes/a.md:1"]);

    // An append through an open handle.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("notes/a.md"))
        .unwrap();
    f.write_all(b"gamma two\n").unwrap();
    drop(f);
    assert_eq!(grep(&mem, "gamma"), ["notes/a.md:1", "notes/a.md:2"]);

    // A new file, and a new folder tree with files made before anything looked at it.
    put(root, "notes/b.md", "gamma three\n");
    put(root, "deep/er/still/c.md", "gamma four\n");
    assert_eq!(
        grep(&mem, "gamma"),
        [
            "deep/er/still/c.md:1",
            "notes/a.md:1",
            "notes/a.md:2",
            "notes/b.md:1"
        ]
    );
    // A file added to a folder the copy learnt about in the last search.
    put(root, "deep/er/still/d.md", "gamma five\n");
    assert_eq!(grep(&mem, "gamma five"), ["deep/er/still/d.md:1"]);

    // Atomic replace (write a temp file, rename over), as editors and memdir itself do.
    put(root, "notes/.b.md.tmp", "delta\n");
    std::fs::rename(root.join("notes/.b.md.tmp"), root.join("notes/b.md")).unwrap();
    assert_eq!(grep(&mem, "delta"), ["notes/b.md:1"]);

    // A folder moved, then deleted.
    std::fs::rename(root.join("deep"), root.join("moved")).unwrap();
    assert_eq!(
        grep(&mem, "gamma f"),
        ["moved/er/still/c.md:1", "moved/er/still/d.md:1"]
    );
    put(root, "moved/er/still/e.md", "gamma fifty\n");
    assert_eq!(grep(&mem, "gamma fifty"), ["moved/er/still/e.md:1"]);
    std::fs::remove_dir_all(root.join("moved")).unwrap();
    assert_eq!(grep(&mem, "gamma f"), Vec::<String>::new());

    // A deleted file.
    std::fs::remove_file(root.join("notes/a.md")).unwrap();
    assert_eq!(grep(&mem, "gamma"), Vec::<String>::new());
    assert_eq!(grep(&mem, "delta"), ["notes/b.md:1"]);

    // Writes through the engine, too.
    mem.log("epsilon from the engine").unwrap();
    assert_eq!(grep(&mem, "epsilon"), ["log/2026-11-30.md:1"]);
}

#[test]
fn never_reads_through_a_symlink_or_into_internal_folders_warm_or_cold() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "zeta secret\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mem = warm(root);
    // A cold memory walks the folder itself on every search: the same rules apply.
    let cold = Memory::open(root, clock()).unwrap();
    assert!(grep(&mem, "zeta").is_empty());
    assert!(grep(&cold, "zeta").is_empty());
    std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("link.md")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
    put(root, ".memdir/zeta.md", "zeta internal\n");
    put(root, "notes/.x.md.123.tmp", "zeta in flight\n");
    assert!(grep(&mem, "zeta").is_empty());
    assert!(grep(&cold, "zeta").is_empty());
    // A file replaced by a symlink after it was read.
    put(root, "notes/real.md", "zeta real\n");
    assert_eq!(grep(&mem, "zeta"), ["notes/real.md:1"]);
    assert_eq!(grep(&cold, "zeta"), ["notes/real.md:1"]);
    std::fs::remove_file(root.join("notes/real.md")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("notes/real.md"))
        .unwrap();
    assert!(grep(&mem, "zeta").is_empty());
    assert!(grep(&cold, "zeta").is_empty());
}

#[test]
fn warm_and_cold_searches_agree_and_ranked_follows_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in 1..=9 {
        put(
            root,
            &format!("log/2026-11-0{d}.md"),
            &format!("- 09:00 shipped build {d}\n- 10:00 the cache migration stalled\n"),
        );
    }
    put(
        root,
        "notes/db.md",
        "# Database\n\nWe moved the cache to redis.\n",
    );
    // Enough files in nested folders for both searches to use their threads and several
    // batches (a warm list and a cold walk are cut into batches differently).
    for i in 0..150 {
        let rel = match i % 3 {
            0 => format!("notes/t{:02}.md", i / 3),
            1 => format!("notes/t{:02}/a.md", i / 3),
            _ => format!("notes/t{:02}-b/a.md", i / 3),
        };
        put(
            root,
            &rel,
            &format!("line one\nthe cache of {i}\nno\ncache again\n"),
        );
    }
    let mem = warm(root);
    let cold = Memory::open(root, clock()).unwrap();
    for (pattern, mode, max_bytes) in [
        ("cache", Mode::Grep, None),
        ("cache", Mode::Grep, Some(2000)),
        ("build 4", Mode::Grep, None),
        ("why did the cache migration stall", Mode::Ranked, None),
    ] {
        let mut req = SearchRequest::new(pattern);
        req.mode = mode;
        req.max_bytes = max_bytes;
        req.since = Some("2026-11-03".parse().unwrap());
        for _ in 0..2 {
            assert_eq!(mem.search(&req).unwrap(), cold.search(&req).unwrap());
        }
    }
    // Warm or cold, a grep's lines come in path order, each once.
    let found = mem.search(&SearchRequest::new("cache")).unwrap();
    let keys: Vec<(&str, u64)> = found
        .hits
        .iter()
        .map(|h| (h.path.as_str(), h.line))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
    assert_eq!(found.hits.len(), 9 + 1 + 300);
    // Ranked mode's index follows a hand edit seen by the warm copy.
    let mut req = SearchRequest::new("postgres");
    req.mode = Mode::Ranked;
    assert!(mem.search(&req).unwrap().hits.is_empty());
    put(
        root,
        "notes/db.md",
        "# Database\n\nWe moved the cache to postgres.\n",
    );
    let hits = mem.search(&req).unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, "notes/db.md");
    // And a deleted index is rebuilt even though no file changed.
    std::fs::remove_file(root.join(".memdir/search.sqlite")).unwrap();
    assert_eq!(mem.search(&req).unwrap().hits.len(), 1);
}

#[test]
fn literal_search_gives_the_regex_answers_including_unicode_case_twins() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // U+212A KELVIN SIGN folds to k and U+017F LONG S to s: a plain ASCII fold misses both.
    put(
        root,
        "notes/fold.md",
        "Kubernetes\nKUBERNETES and kubernetes twice\n\u{212A}ubernetes\n\u{17F}ecret\nSECRET\nnone\n",
    );
    put(root, "notes/plain.md", "kubernetes\nsecret secret\n");
    put(
        root,
        "notes/crlf.md",
        "a kubernetes line\r\n\r\nsecret\r\nlast kubernetes",
    );
    put(root, "notes/bom.md", "\u{FEFF}kubernetes first\nsecret\n");
    put(
        root,
        "notes/long.md",
        &format!("{} kubernetes\n", "x".repeat(3000)),
    );
    put(
        root,
        "notes/kelvin.md",
        "\u{212A}ubernetes only\n\u{17F}ecret only\n",
    );
    // Sorted first, so the budget is spent before the files above and they are only counted.
    put(
        root,
        "notes/a-first.md",
        &"kubernetes secret ubern twice\n".repeat(20),
    );
    put(root, "notes/bin.md", "kubernetes\n\0kubernetes\n");
    let mut many = String::new();
    for i in 0..300 {
        many.push_str(&format!("line {i} KuBeRnEtEs\n"));
    }
    put(root, "notes/zmany.md", &many);
    let mem = warm(root);
    let cold = Memory::open(root, clock()).unwrap();
    for pattern in ["kubernetes", "secret", "ubern", "KUBERNETES", "twice"] {
        for case_sensitive in [false, true] {
            for max_bytes in [None, Some(120)] {
                let mut req = SearchRequest::new(pattern);
                req.case_sensitive = case_sensitive;
                req.max_bytes = max_bytes;
                req.context = usize::from(max_bytes.is_none() && pattern == "secret");
                let want = cold.search(&req).unwrap();
                // The regex engine is the reference: a literal is found with memmem only
                // where that gives its answers (these patterns need no escaping).
                let mut as_regex = req.clone();
                as_regex.regex = true;
                assert_eq!(
                    cold.search(&as_regex).unwrap(),
                    want,
                    "{pattern} as regex, case_sensitive={case_sensitive} max_bytes={max_bytes:?}"
                );
                for _ in 0..2 {
                    assert_eq!(
                        mem.search(&req).unwrap(),
                        want,
                        "{pattern} case_sensitive={case_sensitive} max_bytes={max_bytes:?}"
                    );
                }
            }
        }
    }
    // The twins really are found, and the budget's count is exact.
    let mut req = SearchRequest::new("kubernetes");
    req.path_glob = Some("notes/fold.md".into());
    assert_eq!(mem.search(&req).unwrap().hits.len(), 3);
    req.path_glob = Some("notes/kelvin.md".into());
    assert_eq!(mem.search(&req).unwrap().hits.len(), 1);
    req.path_glob = Some("notes/zmany.md".into());
    req.max_bytes = Some(60);
    let found = mem.search(&req).unwrap();
    assert_eq!(found.hits.len() + found.omitted, 300);
}

#[test]
fn a_search_sees_every_write_that_finished_before_it_began() {
    // A writer appends to some files and atomically replaces others, as fast as it can; after
    // each write returns it publishes its number. Every search must find the newest published
    // write, whatever the warm copy was doing at the time.
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    for i in 0..10 {
        put(&root, &format!("notes/f{i}.md"), "start\n");
    }
    let mem = warm(&root);
    let done = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (root, done, stop) = (root.clone(), done.clone(), stop.clone());
        std::thread::spawn(move || {
            // What each file holds: a replacement rewrites all of it, so no token is lost.
            let mut text = vec![String::from("start\n"); 10];
            let mut i = 1;
            while !stop.load(Ordering::Relaxed) && i < 20_000 {
                let n = i % 10;
                let f = root.join(format!("notes/f{n}.md"));
                let line = format!("token-{i}-end\n");
                text[n].push_str(&line);
                if i % 2 == 0 {
                    let mut h = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
                    h.write_all(line.as_bytes()).unwrap();
                } else {
                    let tmp = root.join(format!("notes/.f{n}.md.tmp"));
                    std::fs::write(&tmp, &text[n]).unwrap();
                    std::fs::rename(&tmp, &f).unwrap();
                }
                done.store(i, Ordering::Release);
                i += 1;
            }
        })
    };
    let mut checked = 0;
    while checked < 300 {
        let i = done.load(Ordering::Acquire);
        if i == 0 {
            continue;
        }
        let hits = grep(&mem, &format!("token-{i}-end"));
        assert_eq!(hits.len(), 1, "write {i} finished before the search began");
        checked += 1;
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}

/// A warm search marks external lines from the bytes it holds, and follows a file that turns
/// external behind its back: the marks are never older than the text they mark.
#[test]
fn warm_search_marks_external_lines_from_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mem = warm(dir.path());
    put(
        dir.path(),
        "notes/page.md",
        "---\nname: page\ndescription: d\n---\nneedle here\n",
    );
    let marked = |mem: &Memory| -> Vec<bool> {
        mem.search(&SearchRequest::new("needle"))
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.external)
            .collect()
    };
    assert_eq!(marked(&mem), vec![false]);
    put(
        dir.path(),
        "notes/page.md",
        "---\nname: page\ndescription: d\nsource: external\n---\nneedle here\n",
    );
    assert_eq!(marked(&mem), vec![true]);
}
