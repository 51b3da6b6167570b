//! Issue 22: a note write is O(its folder), not O(every note), once `MEMORY.md` lists folders.
//! Past the index's cap, a write, delete or move of a note reads the notes of its own folders
//! only; what it leaves in `MEMORY.md` and the folders' indexes must be exactly what
//! regenerating them from every note gives (`memdir index`), after every step of a long random
//! sequence.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memdir::{Clock, Memory};
use std::path::Path;

fn clock() -> Clock {
    Clock::fixed(
        "2026-11-30T10:00:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

/// A memory whose index holds at most `max_lines` lines, so a few notes split it by folder.
fn memory(root: &Path, max_lines: usize) -> Memory {
    drop(Memory::init(root, clock()).unwrap());
    let config = root.join(".memdir/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let capped = text.replacen(
        "[index]\n# max_lines = 200",
        &format!("[index]\nmax_lines = {max_lines}"),
        1,
    );
    assert_ne!(
        capped, text,
        "the config template changed: update this test"
    );
    std::fs::write(&config, capped).unwrap();
    Memory::open(root, clock()).unwrap()
}

fn note(name: &str, kind: Option<&str>, description: &str, day: u32) -> String {
    let mut text = format!("---\nname: {name}\n");
    if !description.is_empty() {
        text.push_str(&format!("description: {description}\n"));
    }
    if let Some(k) = kind {
        text.push_str(&format!("type: {k}\n"));
    }
    text.push_str(&format!("updated: 2026-11-{day:02}\n---\nbody of {name}\n"));
    text
}

/// Every index file memdir generated, by path.
fn index_files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if name.starts_with('.') {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if name == "MEMORY.md" {
                let rel = e.path().strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn note_writes_deletes_and_moves_past_the_cap_leave_what_a_full_rebuild_gives() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mem");
    // The root lists 5 folders and up to 12 top-level notes in 4 groups: that fits 40 lines,
    // and past 40 notes the flat index cannot, so the writes from there on take the fast path.
    let mem = memory(&root, 40);
    let folders = ["", "notes", "notes/people", "projects", "projects/old"];
    let kinds = [None, Some("user"), Some("project"), Some("reference")];
    let mut seed: u64 = 7;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    for step in 0..300 {
        let folder = folders[next(folders.len() as u64) as usize];
        let name = format!("n{}", next(12));
        let path = if folder.is_empty() {
            format!("{name}.md")
        } else {
            format!("{folder}/{name}.md")
        };
        // Mostly listable notes; now and then one without a description (not listed).
        let description = if next(10) == 0 {
            String::new()
        } else {
            format!("about {name}, take {}", next(3))
        };
        let kind = kinds[next(kinds.len() as u64) as usize];
        let day = 1 + next(28) as u32;
        let exists = root.join(&path).exists();
        match next(6) {
            // A delete of a note that is there.
            0 if exists => mem.rm(&path).unwrap(),
            // A move to another folder (or name), refused when the target exists or the
            // index would outgrow its cap; a refused move changes nothing.
            1 if exists => {
                let to_folder = folders[next(folders.len() as u64) as usize];
                let to_name = format!("m{}.md", next(12));
                let to = if to_folder.is_empty() {
                    to_name
                } else {
                    format!("{to_folder}/{to_name}")
                };
                let _ = mem.mv(&path, &to);
            }
            _ => mem
                .write(&path, &note(&name, kind, &description, day))
                .unwrap()
                .done()
                .unwrap(),
        }
        let written = index_files(&root);
        let report = mem.regenerate_index().unwrap();
        assert!(
            !report.changed,
            "step {step}, {path}: the write left an index a full rebuild changes:\nwritten: {written:#?}\nrebuilt: {:#?}",
            index_files(&root)
        );
    }
    let files = index_files(&root);
    assert!(
        files.len() > 3,
        "the index never split by folder: {files:#?}"
    );
    let listed = std::fs::read_to_string(root.join("MEMORY.md")).unwrap();
    let count: usize = listed
        .lines()
        .nth(2)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(count > 40, "too few notes for the fast path: {count}");
}

/// The write reads its own folder only: a note of another folder edited by hand shows in
/// `MEMORY.md` at the next `memdir index` (or a write in that folder), not at this write.
#[test]
fn a_note_change_past_the_cap_reads_only_its_own_folders() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mem");
    let mem = memory(&root, 12);
    for i in 0..8 {
        mem.write(
            &format!("projects/p{i}.md"),
            &note(&format!("p{i}"), Some("project"), "a project", 1),
        )
        .unwrap()
        .done()
        .unwrap();
        mem.write(
            &format!("notes/n{i}.md"),
            &note(&format!("n{i}"), Some("user"), "a person", 1),
        )
        .unwrap()
        .done()
        .unwrap();
    }
    let line = |root: &Path, folder: &str| {
        std::fs::read_to_string(root.join("MEMORY.md"))
            .unwrap()
            .lines()
            .find(|l| l.starts_with(&format!("- [{folder}/]")))
            .unwrap()
            .to_string()
    };
    assert!(line(&root, "projects").contains("(project 8)"));
    // By hand, outside memdir: one project note becomes a reference.
    std::fs::write(
        root.join("projects/p0.md"),
        note("p0", Some("reference"), "a project", 1),
    )
    .unwrap();
    mem.write(
        "notes/n9.md",
        &note("n9", Some("user"), "another person", 2),
    )
    .unwrap()
    .done()
    .unwrap();
    assert!(line(&root, "notes").contains("9 notes (user 9)"));
    assert!(
        line(&root, "projects").contains("(project 8)"),
        "a write in notes/ read projects/"
    );
    // A delete and a move in notes/ do not read projects/ either.
    mem.rm("notes/n9.md").unwrap();
    mem.mv("notes/n0.md", "notes/moved.md").unwrap();
    assert!(line(&root, "notes").contains("8 notes (user 8)"));
    assert!(line(&root, "projects").contains("(project 8)"));
    assert!(mem.regenerate_index().unwrap().changed);
    assert!(line(&root, "projects").contains("(project 7, reference 1)"));
}
