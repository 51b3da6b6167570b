//! The local sentence encoder: a BERT-family model from a directory, run with candle on the CPU,
//! pooled exactly like sentence-transformers: mean over real tokens (or the `[CLS]` token when
//! `1_Pooling/config.json` says so, as bge models do), then L2 normalisation. The prompts of
//! `config_sentence_transformers.json` (`"query": "query: "`, `"passage": "passage: "` for e5)
//! are put before queries and documents.

use std::path::{Path, PathBuf};

use candle_core::{DType, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, BertConfig, device, mean_pool};
use crate::{EmbedError, Embedder, FNV_OFFSET, fnv1a, normalize};

/// At most this many texts run through the model together.
const MAX_BATCH: usize = 32;
/// A batch stops growing once its padded size would pass this many tokens, so one long text
/// does not make a whole batch of short ones pay for its padding.
const MAX_BATCH_TOKENS: usize = 4096;
/// Texts longer than this (in tokens, with `[CLS]` and `[SEP]`) are cut, as sentence-transformers
/// does for all-MiniLM-L6-v2 when the model directory does not say otherwise.
const DEFAULT_MAX_TOKENS: usize = 256;

/// A sentence encoder loaded from a local directory.
pub struct LocalEmbedder {
    model: Bert,
    tokenizer: Tokenizer,
    dimensions: usize,
    model_id: String,
    cls: bool,
    query_prompt: String,
    document_prompt: String,
}

/// A JSON file of the model directory, if it is there and parses.
fn json(dir: &Path, name: &str) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(dir.join(name)).ok()?).ok()
}

/// True when `1_Pooling/config.json` asks for the `[CLS]` token instead of the mean.
fn cls_pooling(dir: &Path) -> bool {
    json(dir, "1_Pooling/config.json")
        .and_then(|v| v.get("pooling_mode_cls_token")?.as_bool())
        .unwrap_or(false)
}

/// The query and document prompts of `config_sentence_transformers.json` (empty when none).
fn prompts(dir: &Path) -> (String, String) {
    let Some(v) = json(dir, "config_sentence_transformers.json") else {
        return (String::new(), String::new());
    };
    let prompt = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.get("prompts")?.get(*k)?.as_str())
            .unwrap_or("")
            .to_owned()
    };
    (
        prompt(&["query"]),
        prompt(&["document", "passage", "corpus"]),
    )
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("model_id", &self.model_id)
            .field("dimensions", &self.dimensions)
            .finish_non_exhaustive()
    }
}

pub(crate) fn model_err(dir: &Path, reason: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model {
        dir: dir.to_path_buf(),
        reason: reason.to_string(),
    }
}

pub(crate) fn read(dir: &Path, name: &str) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(dir.join(name)).map_err(|e| model_err(dir, format!("cannot read {name}: {e}")))
}

/// The `max_seq_length` of a sentence-transformers directory, if it says one.
fn max_seq_length(dir: &Path) -> Option<usize> {
    let bytes = std::fs::read(dir.join("sentence_bert_config.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value
        .get("max_seq_length")?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
}

/// A readable name for the model: the directory's name, or its parent's when the directory is
/// a generic `model` folder inside a package.
pub(crate) fn model_name(dir: &Path) -> String {
    let abs: PathBuf = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut parts = abs.iter().rev().filter_map(|p| p.to_str());
    let last = parts.next().unwrap_or("model");
    let name = if matches!(last, "model" | "models" | "onnx") {
        parts.next().unwrap_or(last)
    } else {
        last
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Loads the model in `dir` with the embedder its `config.json` calls for: a Model2Vec static
/// model (`"model_type": "model2vec"`) or a BERT-family encoder (anything else).
pub(crate) fn load_dir(dir: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    let config = read(dir, "config.json")?;
    let kind: Option<String> = serde_json::from_slice::<serde_json::Value>(&config)
        .ok()
        .and_then(|v| v.get("model_type")?.as_str().map(str::to_owned));
    Ok(if kind.as_deref() == Some("model2vec") {
        Box::new(crate::StaticEmbedder::load(dir)?)
    } else {
        Box::new(LocalEmbedder::load(dir)?)
    })
}

impl LocalEmbedder {
    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `model_dir`.
    pub fn load(model_dir: &Path) -> Result<Self, EmbedError> {
        let dir = model_dir;
        let config_bytes = read(dir, "config.json")?;
        let config: BertConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| model_err(dir, format!("config.json is not a BERT config: {e}")))?;
        let tokenizer_bytes = read(dir, "tokenizer.json")?;
        let mut tokenizer = crate::tokenizer::parse(&tokenizer_bytes)
            .map_err(|e| model_err(dir, format!("tokenizer.json is unusable: {e}")))?;
        let max_tokens = max_seq_length(dir)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .min(config.max_position_embeddings);
        // Padding is done per batch below; the file's fixed padding would waste most of the work.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| model_err(dir, format!("cannot set truncation: {e}")))?;
        let weights = read(dir, "model.safetensors")?;
        let fingerprint = {
            let mut h = fnv1a(FNV_OFFSET, &config_bytes);
            h = fnv1a(h, &tokenizer_bytes);
            h = fnv1a(h, &(weights.len() as u64).to_le_bytes());
            h = fnv1a(h, &(max_tokens as u64).to_le_bytes());
            // The header (tensor names, shapes, offsets) and both ends of the data tell models
            // apart without hashing every byte on each load.
            let head = weights.len().min(1 << 16);
            h = fnv1a(h, &weights[..head]);
            fnv1a(h, &weights[weights.len().saturating_sub(1 << 16)..])
        };
        let cls = cls_pooling(dir);
        let (query_prompt, document_prompt) = prompts(dir);
        // Pooling and prompts change every vector, so they are part of the model's identity;
        // mixed in only when set, so a mean-pooled model without prompts keeps its old id (and
        // its index).
        let fingerprint = if cls || !query_prompt.is_empty() || !document_prompt.is_empty() {
            fnv1a(
                fingerprint,
                format!("{cls}\0{query_prompt}\0{document_prompt}").as_bytes(),
            )
        } else {
            fingerprint
        };
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device())
            .map_err(|e| model_err(dir, format!("model.safetensors is unusable: {e}")))?;
        let model = Bert::load(vb, &config).map_err(|e| model_err(dir, e))?;
        Ok(Self {
            model,
            tokenizer,
            cls,
            query_prompt,
            document_prompt,
            dimensions: config.hidden_size,
            model_id: format!(
                "{}@{:012x}",
                model_name(dir),
                fingerprint & 0xffff_ffff_ffff
            ),
        })
    }

    fn run_batch(&self, ids: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let width = ids.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
        let mut flat = Vec::with_capacity(ids.len() * width);
        let mut mask = Vec::with_capacity(ids.len() * width);
        for seq in ids {
            flat.extend_from_slice(seq);
            flat.extend(std::iter::repeat_n(0u32, width - seq.len()));
            mask.extend(std::iter::repeat_n(1f32, seq.len()));
            mask.extend(std::iter::repeat_n(0f32, width - seq.len()));
        }
        let dev = device();
        let ids = Tensor::from_vec(flat, (ids.len(), width), &dev)?;
        let mask = Tensor::from_vec(mask, (ids.dim(0)?, width), &dev)?;
        let hidden = self.model.forward(&ids, &mask)?;
        let pooled = if self.cls {
            hidden.narrow(1, 0, 1)?.squeeze(1)?
        } else {
            mean_pool(&hidden, &mask)?
        };
        let mut out = pooled.to_vec2::<f32>()?;
        out.iter_mut().for_each(|v| normalize(v));
        Ok(out)
    }
}

impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(&self.document_prompt, texts)
    }

    fn embed_query(&self, queries: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(&self.query_prompt, queries)
    }
}

impl LocalEmbedder {
    fn embed_with(&self, prompt: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut encoded = Vec::with_capacity(texts.len());
        for text in texts {
            let prompted;
            let text: &str = if prompt.is_empty() {
                text
            } else {
                prompted = format!("{prompt}{text}");
                &prompted
            };
            let enc = self
                .tokenizer
                .encode_fast(text, true)
                .map_err(|e| EmbedError::Inference(format!("cannot tokenize: {e}")))?;
            let mut ids = enc.get_ids().to_vec();
            ids.truncate(self.model.max_positions);
            encoded.push(ids);
        }
        // Batches of similar lengths waste little on padding.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encoded[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len()
                && end - start < MAX_BATCH
                && encoded[order[end]].len() * (end - start + 1) <= MAX_BATCH_TOKENS
            {
                end += 1;
            }
            let batch: Vec<&[u32]> = order[start..end]
                .iter()
                .map(|&i| encoded[i].as_slice())
                .collect();
            let vectors = self
                .run_batch(&batch)
                .map_err(|e| EmbedError::Inference(e.to_string()))?;
            for (&i, v) in order[start..end].iter().zip(vectors) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }
}
