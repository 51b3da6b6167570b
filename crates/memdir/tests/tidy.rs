//! ARCHITECTURE.md's structural invariants, checked on the workspace's own files (in the manner
//! of rust-analyzer's `tidy`): a change that breaks one fails `cargo test` with the rule it broke.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The layers of ARCHITECTURE.md's bird's-eye view: a crate's normal dependencies on other
/// workspace crates must sit in a lower row. The conformance suite and the benchmarks stand
/// above everything; the tiny test models (no workspace dependency) just below them.
const ROWS: &[(&str, u32)] = &[
    ("memdir-core", 0),
    ("memdir-secrets", 0),
    ("memdir-store", 1),
    ("memdir-folder", 2),
    ("memdir-store-pg", 2),
    ("memdir-store-s3", 2),
    ("memdir-embed", 2),
    ("memdir-search", 3),
    ("memdir", 4),
    ("memdir-mcp", 5),
    ("memdir-ui", 5),
    ("memdir-cli", 6),
    ("memdir-bench", 7),
    ("memdir-store-tests", 7),
    ("memdir-test-model", 6),
];

/// Crates a crate's normal dependencies must not name, and why.
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    (
        "memdir-store-pg",
        &[
            "memdir",
            "git2",
            "rusqlite",
            "candle-core",
            "memdir-embed",
            "memdir-folder",
        ],
        "a backend depends on memdir-store and memdir-core only",
    ),
    (
        "memdir-store-s3",
        &[
            "memdir",
            "git2",
            "rusqlite",
            "candle-core",
            "memdir-embed",
            "memdir-folder",
        ],
        "a backend depends on memdir-store and memdir-core only",
    ),
    (
        "memdir-folder",
        &["memdir", "rusqlite", "candle-core", "memdir-embed"],
        "the folder backend knows no search and no engine",
    ),
    (
        "memdir-store",
        &[
            "git2",
            "rusqlite",
            "cap-std",
            "rustix",
            "tokio-postgres",
            "object_store",
        ],
        "the seams touch no disk, database or network",
    ),
    (
        "memdir-search",
        &["memdir", "git2", "cap-std", "rustix", "ureq"],
        "search is handed what it reads (a folder's walk or a store) and calls back into no engine",
    ),
    (
        "memdir",
        &["git2", "rusqlite", "cap-std", "rustix", "ureq"],
        "the engine reaches files through the store seams, indexes through memdir-search and models through memdir-embed",
    ),
];

/// The workspace crates and their manifests.
fn manifests() -> BTreeMap<String, toml::Table> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let table: toml::Table = text.parse().unwrap();
        let name = table["package"]["name"].as_str().unwrap().to_string();
        out.insert(name, table);
    }
    out
}

/// The names in a manifest's `[dependencies]` (not dev or build dependencies).
fn normal_deps(manifest: &toml::Table) -> Vec<String> {
    manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

/// The violations of the layering in `manifests`, one line each.
fn layering(manifests: &BTreeMap<String, toml::Table>) -> Vec<String> {
    let row = |n: &str| ROWS.iter().find(|(c, _)| *c == n).map(|(_, r)| *r);
    let mut bad = Vec::new();
    for (name, manifest) in manifests {
        let Some(mine) = row(name) else {
            bad.push(format!("{name} has no row in tidy.rs's ROWS: place it in ARCHITECTURE.md's bird's-eye view and here"));
            continue;
        };
        for dep in normal_deps(manifest) {
            if !manifests.contains_key(&dep) {
                continue;
            }
            match row(&dep) {
                Some(r) if r < mine => {}
                _ => bad.push(format!(
                    "{name} depends on {dep}, which is not in a lower row"
                )),
            }
        }
        for (crate_name, names, why) in FORBIDDEN {
            if crate_name != name {
                continue;
            }
            for dep in normal_deps(manifest) {
                if names.contains(&dep.as_str()) {
                    bad.push(format!("{name} depends on {dep}: {why}"));
                }
            }
        }
    }
    bad
}

#[test]
fn crates_depend_only_downwards_and_backends_only_on_the_seams() {
    let bad = layering(&manifests());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The rule is not vacuous: a backend that names the engine is caught.
#[test]
fn a_backend_naming_the_engine_is_caught() {
    let mut m = manifests();
    let pg = m.get_mut("memdir-store-pg").unwrap();
    pg["dependencies"]
        .as_table_mut()
        .unwrap()
        .insert("memdir".into(), toml::Value::Boolean(true));
    let bad = layering(&m);
    assert!(
        bad.iter()
            .any(|l| l.contains("memdir-store-pg depends on memdir:")),
        "{bad:?}"
    );
}

/// Non-test Rust code of the files under `dir` (a `#[cfg(test)]` module runs to the end of its
/// file, as everywhere in this workspace), with paths for messages; `skip` leaves out files
/// whose path from `dir` starts with it.
fn code_under(dir: &Path, skip: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if skip.iter().any(|s| rel.starts_with(s)) {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if rel.ends_with(".rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                out.push((rel, code));
            }
        }
    }
    out
}

/// Lines of code (not comments) under `dir` that use any of `words`.
fn uses(dir: &Path, skip: &[&str], words: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, code) in code_under(dir, skip) {
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            for w in words {
                if line.contains(w) {
                    bad.push(format!("{}/{rel}:{}: uses {w}", dir.display(), n + 1));
                }
            }
        }
    }
    bad
}

#[test]
fn the_core_and_the_seams_do_no_io() {
    let crates = workspace().join("crates");
    let mut bad = uses(
        &crates.join("memdir-core/src"),
        &[],
        &[
            "std::fs",
            "std::env",
            "std::net",
            "std::process",
            "SystemTime",
            "Instant::now",
            "getrandom",
            "tokio",
        ],
    );
    bad.extend(uses(
        &crates.join("memdir-store/src"),
        &[],
        &[
            "std::fs",
            "std::env",
            "std::net",
            "std::process",
            "rusqlite",
            "git2",
        ],
    ));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_engine_touches_no_file() {
    let bad = uses(
        &workspace().join("crates/memdir/src"),
        &[],
        &[
            "std::fs", "std::net", "rusqlite", "git2", "cap_std", "rustix", "ureq",
        ],
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The engine's features are functions over a `Ctx` (and the change they open): `Memory` is
/// the facade at the top, its methods are added in `memory.rs` alone, and no feature names it
/// or imports `memory.rs` (only `lib.rs` re-exports it). A feature that called back into the
/// facade would bring back the circle the split removed.
#[test]
fn nothing_inside_the_engine_uses_the_facade() {
    let dir = workspace().join("crates/memdir/src");
    let mut bad = Vec::new();
    for (rel, code) in code_under(&dir, &[]) {
        if rel == "memory.rs" || rel == "lib.rs" {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            // Words in code, not in a message: string literals are left out.
            let code: String = line.split('"').step_by(2).collect::<Vec<_>>().join(" ");
            let names_facade = code
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .any(|w| {
                    // The facade's proof for `Ctx::backend_store` is not a call into it.
                    w == "Memory"
                        || w.ends_with("::Memory")
                        || (w.starts_with("crate::memory") && w != "crate::memory::Facade")
                });
            if names_facade || line.starts_with("impl Memory") {
                bad.push(format!("crates/memdir/src/{rel}:{}: {line}", n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "features take a Ctx, never the Memory facade:\n{}",
        bad.join("\n")
    );
}

/// The CLI's commands take what they need from `env.rs` (and the clap tree from `cli.rs`), never
/// from `app.rs`, which dispatches to them: no circle between the dispatcher and the commands.
#[test]
fn no_command_imports_the_dispatcher() {
    let bad = uses(
        &workspace().join("crates/memdir-cli/src/cmd"),
        &[],
        &["crate::app"],
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A layer's path is named once, in `memdir-core` (the constants and `FolderLayout`): code
/// elsewhere asks the layout, so a layout whose files live elsewhere (OpenClaw's `memory/`)
/// is followed everywhere. String literals that are a layer's file or a path under a layer's
/// folder, in the non-test code of every crate but the core, are refused.
#[test]
fn layer_paths_come_from_the_layout() {
    const LAYER_LITERALS: &[&str] = &[
        "\"core.md\"",
        "\"MEMORY.md\"",
        "\"state.md\"",
        "\"log/",
        "\"scratch/",
        "\"archive/",
        "\"notes/",
        "\"offload/",
        "\"proposals/",
        "\"consolidation/",
    ];
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        // The core defines the layout; the conformance suite, the benchmarks and the test model
        // build memories as a user would, by path.
        if matches!(
            name.as_str(),
            "memdir-core" | "memdir-store-tests" | "memdir-bench" | "memdir-test-model"
        ) {
            continue;
        }
        if dir.join("src").is_dir() {
            bad.extend(uses(&dir.join("src"), &[], LAYER_LITERALS));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Where the engine's code could reach the store's writing half: `Ctx`'s store field made
/// visible, or the proofs that unlock it (`Writes` for `change.rs`, `Facade` for `memory.rs`)
/// named anywhere else.
fn writes_outside_a_change(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, code) in files {
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            let at = || format!("crates/memdir/src/{rel}:{}: {line}", n + 1);
            if rel == "ctx.rs" && line.starts_with("pub") && line.contains("store: Arc<dyn Store>")
            {
                bad.push(format!("{} (the store field must stay private)", at()));
            }
            if rel != "change.rs"
                && rel != "ctx.rs"
                && (line.contains("Writes") || line.contains(".writer(&"))
            {
                bad.push(format!("{} (only a change writes)", at()));
            }
            if rel != "memory.rs"
                && rel != "ctx.rs"
                && (line.contains("Facade(") || line.contains("backend_store("))
            {
                bad.push(format!("{} (only the facade hands the store out)", at()));
            }
        }
    }
    bad
}

/// A `Change` is the one handle in the engine that writes: `Ctx` hands features the store's
/// reading half, and the writing half needs a proof only `change.rs` can make (the type system
/// holds that; this test holds the visibility it rests on).
#[test]
fn only_a_change_writes() {
    let files = code_under(&workspace().join("crates/memdir/src"), &[]);
    assert!(
        files
            .iter()
            .any(|(rel, code)| rel == "ctx.rs" && code.contains("    store: Arc<dyn Store>,")),
        "ctx.rs no longer declares its private store field as this test expects"
    );
    let bad = writes_outside_a_change(&files);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_feature_reaching_for_the_writer_is_caught() {
    let planted = vec![
        (
            "ctx.rs".to_string(),
            "pub(crate) struct Ctx {\n    pub(crate) store: Arc<dyn Store>,\n}\n".to_string(),
        ),
        (
            "notes.rs".to_string(),
            "let w = cx.writer(&crate::change::Writes(()));\n".to_string(),
        ),
        (
            "lint.rs".to_string(),
            "let s = cx.backend_store(&crate::memory::Facade(()));\n".to_string(),
        ),
    ];
    let bad = writes_outside_a_change(&planted);
    assert_eq!(bad.len(), 3, "{bad:?}");
}
