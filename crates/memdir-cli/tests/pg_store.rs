//! The CLI on a PostgreSQL store (`--store postgres://...?tenant=NAME`): the README's quick
//! start gives the same answers as on a folder, and `export` gives back the same files.
//! Skipped with a message when no PostgreSQL server runs (`MEMDIR_REQUIRE_PG=1` fails instead).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use assert_cmd::Command;
use memdir_store_pg::pg_or_skip;

/// The quick start, one command per line, as a new user types it.
const QUICK_START: &[&[&str]] = &[
    &["init"],
    &["write", "core.md", "The user prefers short answers."],
    &["log", "deployed v2 to staging"],
    &[
        "scratch",
        "deploy-plan",
        "--ttl",
        "2h",
        "canary first, then 10%",
    ],
    &["context"],
    &["context", "--json"],
    &["read", "/memories/core.md"],
    &["edit", "core.md", "--old", "short", "--new", "concise"],
    &["ls", "log"],
    &["write", "notes/draft.md", "draft"],
    &["mv", "notes/draft.md", "notes/final.md"],
    &[
        "note",
        "new",
        "payment-retry-policy",
        "--type",
        "project",
        "--description",
        "retry queue must never re-attempt a captured payment",
        "The retry worker treats 'captured' as terminal. Related: [[refund-flow]]",
    ],
    &[
        "note",
        "new",
        "people/priya",
        "-t",
        "user",
        "-d",
        "leads payments",
        "Priya owns refunds.",
    ],
    &["index"],
    &["links", "refund-flow"],
    &["lint"],
    &["search", "staging"],
    &["search", "--mode", "ranked", "captured payment"],
    &["search", "--json", "--limit", "5", "payment"],
    &["ls"],
    &["rm", "notes/final.md"],
    &["sweep", "--dry-run"],
    &["sweep"],
];

/// `memdir` on `store` with a clean environment and the fixed clock.
fn memdir(store: &str, home: &std::path::Path) -> Command {
    let mut c = Command::cargo_bin("memdir").unwrap();
    c.env_clear()
        .env("MEMDIR_STORE", store)
        .env("MEMDIR_NOW", common::NOW)
        .env("TZ", "UTC")
        .env("HOME", home);
    c
}

/// Each command's exit code, stdout and stderr, with the store's name taken out.
fn transcript(store: &str, home: &std::path::Path) -> Vec<String> {
    QUICK_START
        .iter()
        .map(|args| {
            let out = memdir(store, home).args(*args).output().unwrap();
            let text = format!(
                "$ memdir {}\n[{}]\n{}{}",
                args.join(" "),
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            text.replace(store, "STORE")
        })
        .collect()
}

#[test]
fn quick_start_answers_the_same_on_postgresql_and_on_a_folder() {
    let db = pg_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("folder");
    let folder = folder.to_str().unwrap();
    let url = db.url("alice");
    let on_folder = transcript(folder, tmp.path());
    let on_pg = transcript(&url, tmp.path());
    for (f, p) in on_folder.iter().zip(&on_pg) {
        // `init` names where the memory is; everything else must be the same text.
        if f.starts_with("$ memdir init") {
            assert!(p.contains("memory ready at"), "{p}");
            continue;
        }
        assert_eq!(f, p);
    }
    // History has the same shape (ids differ: they are the backend's own).
    let history = |store: &str| {
        let out = memdir(store, tmp.path())
            .args(["history", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        // One JSON object per line.
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let e: serde_json::Value = serde_json::from_str(l).unwrap();
                (e["summary"].clone(), e["writer"].clone())
            })
            .collect::<Vec<_>>()
    };
    let on_folder = history(folder);
    assert!(on_folder.len() >= 10, "{on_folder:?}");
    assert_eq!(on_folder, history(&url));
    // Export the database memory; it holds the same files as the folder.
    let exported = tmp.path().join("exported");
    memdir(&url, tmp.path())
        .args(["export", "--to", exported.to_str().unwrap()])
        .assert()
        .success();
    let files = |root: &std::path::Path| {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let name = e.file_name().into_string().unwrap();
                if name == ".git" || name == ".memdir" {
                    continue;
                }
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                    out.push((e.path().strip_prefix(root).unwrap().to_owned(), None));
                } else {
                    let bytes = std::fs::read(e.path()).unwrap();
                    out.push((e.path().strip_prefix(root).unwrap().to_owned(), Some(bytes)));
                }
            }
        }
        out.sort();
        out
    };
    let (a, b) = (files(std::path::Path::new(folder)), files(&exported));
    assert!(a.iter().any(|(p, _)| p.ends_with("MEMORY.md")), "{a:?}");
    assert_eq!(a, b);
}

#[test]
fn a_tenant_that_was_never_created_says_run_init() {
    let db = pg_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    let out = memdir(&db.url("nobody"), tmp.path())
        .arg("context")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("memdir init"), "{err}");
}

#[test]
fn ranked_search_keeps_its_index_in_the_cache_folder_and_sees_every_change() {
    let db = pg_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    let url = db.url("carol");
    let cache = tmp.path().join("cache");
    let run = |args: &[&str]| {
        let out = memdir(&url, tmp.path())
            .env("XDG_CACHE_HOME", &cache)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["init"]);
    run(&["log", "the ledger moved to postgres"]);
    let first = run(&["search", "--mode", "ranked", "ledger"]);
    assert!(first.contains("ledger moved"), "{first}");
    let folders: Vec<_> = std::fs::read_dir(cache.join("memdir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let name = folders[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(name.starts_with("carol-"), "{name}");
    assert!(folders[0].join(".memdir/search.sqlite").is_file());
    // A change made after the index was built is found; a removed line is gone.
    run(&["write", "notes/ledger.md", "the ledger is append only"]);
    run(&["rm", &format!("log/{}.md", &common::NOW[..10])]);
    let second = run(&["search", "--mode", "ranked", "ledger"]);
    assert!(
        second.contains("notes/ledger.md:1:the ledger is append only"),
        "{second}"
    );
    assert!(!second.contains("ledger moved"), "{second}");
}

#[test]
fn semantic_and_hybrid_search_answer_the_same_on_postgresql_and_on_a_folder() {
    let db = pg_or_skip!();
    let tmp = tempfile::tempdir().unwrap();
    let tiny = memdir_test_model::TinyModel::new();
    let folder = tmp.path().join("folder");
    let folder = folder.to_str().unwrap().to_string();
    let url = db.url("dana");
    let run = |store: &str, args: &[&str]| {
        let out = memdir(store, tmp.path())
            .env("XDG_CACHE_HOME", tmp.path().join("cache"))
            .env("MEMDIR_MODEL_DIR", tiny.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for store in [folder.as_str(), url.as_str()] {
        run(store, &["init"]);
        run(store, &["log", "the ledger moved to postgres"]);
        run(store, &["log", "priya reviewed the refund flow"]);
        run(
            store,
            &[
                "write",
                "notes/cache.md",
                "# Cache\n\nthe cache is warm after a deploy\n",
            ],
        );
    }
    for mode in ["semantic", "hybrid"] {
        let args = ["search", "--mode", mode, "ledger moved"];
        let on_folder = run(&folder, &args);
        assert!(!on_folder.is_empty(), "{mode}: no hits");
        assert_eq!(on_folder, run(&url, &args), "{mode}");
        // A later change is embedded before the next search.
        run(&url, &["log", "the ledger is append only"]);
        run(&folder, &["log", "the ledger is append only"]);
        assert_eq!(
            run(&folder, &args),
            run(&url, &args),
            "{mode} after a change"
        );
    }
}
