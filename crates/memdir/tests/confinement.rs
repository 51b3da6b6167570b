//! Property test: whatever path string a caller passes, the folder store never creates,
//! changes or deletes anything outside the root, even through symlinks that lead out.
#![allow(clippy::unwrap_used)]

use memdir::{FolderStore, Store};
use memdir_core::path::MemPath;
use proptest::prelude::*;
use std::path::Path;

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            let data = if e.file_type().unwrap().is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            out.push((p.display().to_string(), data));
        }
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn no_operation_escapes_the_root(
        parts in prop::collection::vec(
            prop::sample::select(vec!["..", ".", "", "a", "link", "flink", "%2e%2e", "memories", "x.md", ".memdir", ".git"]),
            1..6),
        lead in prop::sample::select(vec!["", "/", "/memories/"]),
        op in 0u8..6,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("x.md"), "keep").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("x.md"), root.join("flink")).unwrap();
        let before = snapshot(&outside);
        let store = FolderStore::open(&root).unwrap();
        let input = format!("{lead}{}", parts.join("/"));
        if let Ok(p) = MemPath::parse(&input) {
            let _ = match op {
                0 => store.write(&p, b"pwned").map(|_| ()),
                1 => store.append(&p, b"pwned").map(|_| ()),
                2 => store.remove(&p),
                3 => store.rename(&MemPath::parse("a").unwrap(), &p),
                4 => store.rename(&p, &MemPath::parse("moved").unwrap()),
                _ => store.create_dir(&p),
            };
        }
        prop_assert_eq!(snapshot(&outside), before);
    }
}
