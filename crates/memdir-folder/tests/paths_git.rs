//! Issue 13 item 2: every path memdir accepts is one git can record. libgit2 itself is the
//! oracle: a path `MemPath::parse` accepts must go into a real index and a real tree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memdir_core::path::MemPath;
use proptest::prelude::*;

fn git_records(repo: &git2::Repository, path: &str) -> Result<(), git2::Error> {
    let entry = git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o100644,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: git2::Oid::ZERO_SHA1,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    // The repository's own index applies its path rules (core.protectNTFS and all).
    let mut idx = repo.index()?;
    idx.clear()?;
    idx.add_frombuffer(&entry, b"x")?;
    idx.write_tree_to(repo).map(drop)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_accepted_path_is_recordable_by_git(
        parts in proptest::collection::vec("(\\.git|git~1|GIT~1|\\.GIT|a|b\\.md| |\\.|:|~|\\\\|é){1,4}", 1..6),
        deep in 0usize..2,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let mut path = parts.join("/");
        if deep == 1 {
            path = format!("{}/{path}", ["d"; 98].join("/"));
        }
        if let Ok(p) = MemPath::parse_file(&path) {
            let got = git_records(&repo, p.as_str());
            prop_assert!(got.is_ok(), "memdir accepts {:?} but git refuses it: {:?}", p.as_str(), got);
        }
    }
}

/// The names the issue found, each refused before anything is written.
#[test]
fn issue13_names_git_refuses_are_refused_by_memdir() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    for bad in ["git~1", ".git./x", ".git /x"] {
        assert!(git_records(&repo, bad).is_err(), "git accepts {bad:?} now");
        assert!(MemPath::parse(bad).is_err(), "memdir accepts {bad:?}");
    }
    // libgit2 records a path 100 folders deep in a tree, but its working-tree walks (status,
    // checkout) stop at "directory nesting too deep", which is what locked writers out: memdir
    // refuses paths past 64 levels.
    let deep = format!("{}/x.md", ["d"; 100].join("/"));
    assert!(
        MemPath::parse(&deep).is_err(),
        "memdir accepts a path 100 folders deep"
    );
}
