//! Versions and preconditions through the engine: a stale `--base` never loses an update,
//! with or without git, and "create only" never replaces a file.
#![allow(clippy::unwrap_used)]

use memdir::{Clock, ErrorKind, Memory, Precondition};

fn clock() -> Clock {
    Clock::fixed(
        "2026-11-30T09:15:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

/// Eight writers that all read version v0 race to replace it: exactly one wins each round.
/// Without git, nothing used to serialise them: `--base` was checked, then the file written,
/// so several writers passed the check and all but the last update were lost.
fn one_writer_wins(git: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::init_with(dir.path(), clock(), git).unwrap();
    for round in 0..6 {
        mem.write("notes/race.md", &format!("round {round}\n"))
            .unwrap()
            .done()
            .unwrap();
        let base = mem.version("notes/race.md").unwrap().unwrap();
        let wins: Vec<usize> = std::thread::scope(|sc| {
            let runs: Vec<_> = (0..8)
                .map(|i| {
                    let m = mem.with_base(Some(&base));
                    sc.spawn(move || {
                        let body = format!("writer {i}\n").repeat(4000);
                        match m.write("notes/race.md", &body) {
                            Ok(o) => o.done().ok().map(|()| i),
                            Err(e) => {
                                assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
                                None
                            }
                        }
                    })
                })
                .collect();
            runs.into_iter().filter_map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(
            wins.len(),
            1,
            "round {round}: writers {wins:?} all replaced one version"
        );
        let text = String::from_utf8(mem.read("notes/race.md").unwrap()).unwrap();
        assert!(text.starts_with(&format!("writer {}\n", wins[0])));
    }
}

#[test]
fn stale_base_never_loses_an_update_without_git() {
    one_writer_wins(false);
}

#[test]
fn stale_base_never_loses_an_update_with_git() {
    one_writer_wins(true);
}

#[test]
fn create_only_never_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::init_with(dir.path(), clock(), false).unwrap();
    let create = mem.with_precondition(Precondition::Absent);
    create
        .write("notes/a.md", "first\n")
        .unwrap()
        .done()
        .unwrap();
    let e = create.write("notes/a.md", "second\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(mem.read("notes/a.md").unwrap(), b"first\n");
    // A base that names a deleted file is stale too.
    let v = mem.version("notes/a.md").unwrap().unwrap();
    mem.rm("notes/a.md").unwrap();
    let e = mem
        .with_base(Some(&v))
        .write("notes/a.md", "x")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains("it is now deleted"), "{e}");
}

/// An append writes only its bytes at the end of the file, at the version the caller read, and
/// is refused where a file is written whole (notes, logs, core).
#[test]
fn append_adds_to_the_end_at_the_version_read() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::init_with(dir.path(), clock(), true).unwrap();
    let path = "sessions/2026-11-30/090000-s.md";
    mem.with_precondition(Precondition::Absent)
        .append(path, "one\n")
        .unwrap();
    let v1 = memdir::Version::of(&mem.read(path).unwrap());
    let file = dir.path().join(path);
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap());
    mem.with_precondition(Precondition::Matches(v1.clone()))
        .append(path, "two\n")
        .unwrap();
    assert_eq!(mem.read(path).unwrap(), b"one\ntwo\n");
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap()),
        inode
    );
    // A second writer that read the first version is refused, and writes nothing.
    let e = mem
        .with_precondition(Precondition::Matches(v1))
        .append(path, "stale\n")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    let e = mem
        .with_precondition(Precondition::Absent)
        .append(path, "again\n")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(mem.read(path).unwrap(), b"one\ntwo\n");
    for p in [
        "notes/a.md",
        "log/2026-11-30.md",
        "core.md",
        "scratch/x.md",
        ".gitignore",
    ] {
        let e = mem.append(p, "x\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{p}: {e}");
        assert!(e.to_string().contains("cannot be appended to"), "{p}: {e}");
    }
}
