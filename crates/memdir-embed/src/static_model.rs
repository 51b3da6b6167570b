//! The static embedder: a Model2Vec model (one distilled vector per token, no transformer),
//! embedding a text as the mean of its tokens' vectors, exactly as the `model2vec` reference
//! implementation does (`StaticModel.encode`, version 0.10):
//!
//! 1. the text is cut to `max_length × median token length` characters (`max_length` from
//!    `config.json`, 512 when it names none; the median over the vocabulary's token strings);
//! 2. it is tokenized without special tokens (no `[CLS]`/`[SEP]`), cut to `max_length` tokens,
//!    and the unknown token is dropped (it carries no meaning in a static model);
//! 3. the tokens' rows of `embeddings` (through `mapping` and scaled by `weights` when the file
//!    has them, as vocabulary-quantised models do) are averaged;
//! 4. the mean is scaled to unit length. The reference does this only when the config says
//!    `"normalize": true` (potion models do); the index compares vectors by dot product, so this
//!    embedder always does, which ranks the same as cosine on unnormalised vectors.
//!
//! A text with no known token (empty, or only unknown characters) gets the zero vector, as in
//! the reference.

use std::path::Path;

use safetensors::{Dtype, SafeTensors};
use tokenizers::models::ModelWrapper;
use tokenizers::{Tokenizer, TruncationParams};

use crate::local::{model_err, model_name, read};
use crate::{EmbedError, Embedder, FNV_OFFSET, fnv1a, normalize};

/// `model2vec`'s default `max_length` when `config.json` has none.
const DEFAULT_MAX_LENGTH: usize = 512;

/// The fields of a Model2Vec `config.json` this embedder reads.
#[derive(serde::Deserialize)]
struct StaticConfig {
    #[serde(default)]
    max_length: Option<usize>,
}

/// A Model2Vec static embedder loaded from a local directory.
pub struct StaticEmbedder {
    /// Row-major `rows × dimensions` vectors.
    vectors: Vec<f32>,
    /// Token id to row, when the model shares rows between tokens.
    mapping: Option<Vec<usize>>,
    /// A scale per token id, when the model has one.
    weights: Option<Vec<f32>>,
    dimensions: usize,
    tokenizer: Tokenizer,
    unk: Option<u32>,
    max_chars: usize,
    model_id: String,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("model_id", &self.model_id)
            .field("dimensions", &self.dimensions)
            .finish_non_exhaustive()
    }
}

/// A tensor's values as `f32`, whatever float type the file stores.
fn floats(
    dir: &Path,
    name: &str,
    view: &safetensors::tensor::TensorView<'_>,
) -> Result<Vec<f32>, EmbedError> {
    let data = view.data();
    Ok(match view.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
        Dtype::I8 => data.iter().map(|b| f32::from(*b as i8)).collect(),
        other => {
            return Err(model_err(
                dir,
                format!("model.safetensors: tensor {name} has type {other:?}; use a float model"),
            ));
        }
    })
}

/// Integer indices (the `mapping` tensor).
fn indices(
    dir: &Path,
    view: &safetensors::tensor::TensorView<'_>,
) -> Result<Vec<usize>, EmbedError> {
    let data = view.data();
    let out: Vec<i64> = match view.dtype() {
        Dtype::I64 => data
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect(),
        Dtype::I32 => data
            .chunks_exact(4)
            .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect(),
        other => {
            return Err(model_err(
                dir,
                format!("model.safetensors: mapping has type {other:?}, not an integer type"),
            ));
        }
    };
    out.into_iter()
        .map(|i| {
            usize::try_from(i)
                .map_err(|_| model_err(dir, "model.safetensors: mapping holds a negative row"))
        })
        .collect()
}

/// The median length in characters of the vocabulary's tokens, rounded down as `model2vec`'s
/// `int(np.median(...))` does.
fn median_token_length(tokenizer: &Tokenizer) -> usize {
    let mut lens: Vec<usize> = tokenizer
        .get_vocab(true)
        .keys()
        .map(|t| t.chars().count())
        .collect();
    if lens.is_empty() {
        return 1;
    }
    lens.sort_unstable();
    let n = lens.len();
    let median = if n % 2 == 1 {
        lens[n / 2]
    } else {
        (lens[n / 2 - 1] + lens[n / 2]) / 2
    };
    median.max(1)
}

impl StaticEmbedder {
    /// Loads `model.safetensors` (an `embeddings` tensor, tokens × dimensions), `tokenizer.json`
    /// and `config.json` from `model_dir`.
    pub fn load(model_dir: &Path) -> Result<Self, EmbedError> {
        let dir = model_dir;
        let config_bytes = read(dir, "config.json")?;
        let config: StaticConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| model_err(dir, format!("config.json is not a model2vec config: {e}")))?;
        let max_length = config.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
        let tokenizer_bytes = read(dir, "tokenizer.json")?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| model_err(dir, format!("tokenizer.json is unusable: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..Default::default()
            }))
            .map_err(|e| model_err(dir, format!("cannot set truncation: {e}")))?;
        let weights_bytes = read(dir, "model.safetensors")?;
        let file = SafeTensors::deserialize(&weights_bytes)
            .map_err(|e| model_err(dir, format!("model.safetensors is unusable: {e}")))?;
        let emb = file.tensor("embeddings").map_err(|_| {
            model_err(
                dir,
                "model.safetensors has no `embeddings` tensor; is this a model2vec model?",
            )
        })?;
        let [rows, dimensions] = emb.shape() else {
            return Err(model_err(
                dir,
                "model.safetensors: `embeddings` is not a matrix",
            ));
        };
        let (rows, dimensions) = (*rows, *dimensions);
        let vectors = floats(dir, "embeddings", &emb)?;
        let vocab = tokenizer.get_vocab_size(true);
        let mapping = match file.tensor("mapping") {
            Ok(view) => Some(indices(dir, &view)?),
            Err(_) => None,
        };
        let weights = match file.tensor("weights") {
            Ok(view) => Some(floats(dir, "weights", &view)?),
            Err(_) => None,
        };
        // Every token id must land on a row, so embedding never indexes out of bounds.
        match &mapping {
            Some(m) if m.len() < vocab || m.iter().any(|&r| r >= rows) => {
                return Err(model_err(
                    dir,
                    "model.safetensors: mapping does not fit the vocabulary and embeddings",
                ));
            }
            None if rows < vocab => {
                return Err(model_err(
                    dir,
                    format!(
                        "model.safetensors has {rows} vectors for {vocab} tokens in tokenizer.json"
                    ),
                ));
            }
            _ => {}
        }
        if weights.as_ref().is_some_and(|w| w.len() < vocab) {
            return Err(model_err(
                dir,
                "model.safetensors: weights are fewer than the tokens",
            ));
        }
        let unk = tokenizer_unk(&tokenizer);
        let max_chars = max_length.saturating_mul(median_token_length(&tokenizer));
        let fingerprint = {
            let mut h = fnv1a(FNV_OFFSET, &config_bytes);
            h = fnv1a(h, &tokenizer_bytes);
            h = fnv1a(h, &(weights_bytes.len() as u64).to_le_bytes());
            let head = weights_bytes.len().min(1 << 16);
            h = fnv1a(h, &weights_bytes[..head]);
            fnv1a(
                h,
                &weights_bytes[weights_bytes.len().saturating_sub(1 << 16)..],
            )
        };
        Ok(Self {
            vectors,
            mapping,
            weights,
            dimensions,
            tokenizer,
            unk,
            max_chars,
            model_id: format!(
                "{}@{:012x}",
                model_name(dir),
                fingerprint & 0xffff_ffff_ffff
            ),
        })
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let cut = match text.char_indices().nth(self.max_chars) {
            Some((at, _)) => &text[..at],
            None => text,
        };
        let enc = self
            .tokenizer
            .encode_fast(cut, false)
            .map_err(|e| EmbedError::Inference(format!("cannot tokenize: {e}")))?;
        let mut sum = vec![0f32; self.dimensions];
        let mut n = 0usize;
        for &id in enc.get_ids() {
            if Some(id) == self.unk {
                continue;
            }
            let id = id as usize;
            let row = match &self.mapping {
                Some(m) => m.get(id).copied(),
                None => Some(id),
            };
            let Some(v) = row.and_then(|r| {
                self.vectors
                    .get(r * self.dimensions..(r + 1) * self.dimensions)
            }) else {
                continue;
            };
            let scale = match &self.weights {
                Some(w) => w.get(id).copied().unwrap_or(1.0),
                None => 1.0,
            };
            sum.iter_mut().zip(v).for_each(|(s, x)| *s += scale * x);
            n += 1;
        }
        if n > 0 {
            let inv = 1.0 / n as f32;
            sum.iter_mut().for_each(|s| *s *= inv);
        }
        normalize(&mut sum);
        Ok(sum)
    }
}

/// The id of the tokenizer model's unknown token, if it has one (a Unigram model has none to
/// drop, as in the reference).
fn tokenizer_unk(tokenizer: &Tokenizer) -> Option<u32> {
    let unk = match tokenizer.get_model() {
        ModelWrapper::WordPiece(m) => Some(m.unk_token.as_str()),
        ModelWrapper::WordLevel(m) => Some(m.unk_token.as_str()),
        ModelWrapper::BPE(m) => m.unk_token.as_deref(),
        ModelWrapper::Unigram(_) => None,
    }?;
    tokenizer.token_to_id(unk)
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }
}
