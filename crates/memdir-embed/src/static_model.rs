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

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::OnceLock;

use safetensors::Dtype;
use safetensors::tensor::{Metadata, TensorInfo};
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
    /// The `rows × dimensions` vectors.
    matrix: Matrix,
    /// Token id to row, when the model shares rows between tokens.
    mapping: Option<Vec<usize>>,
    /// A scale per token id, when the model has one.
    weights: Option<Vec<f32>>,
    dimensions: usize,
    tokenizer: Tokenizer,
    unk: Option<u32>,
    /// `max_length` from the config: the most tokens a text keeps, and (times the median
    /// token length) the most characters.
    max_length: usize,
    /// `max_length` × the median token length, worked out the first time a text is long
    /// enough to need it (a text of at most `max_length` characters is never cut).
    max_chars: OnceLock<usize>,
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
fn floats(dir: &Path, name: &str, dtype: Dtype, data: &[u8]) -> Result<Vec<f32>, EmbedError> {
    Ok(match dtype {
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
fn indices(dir: &Path, dtype: Dtype, data: &[u8]) -> Result<Vec<usize>, EmbedError> {
    let out: Vec<i64> = match dtype {
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
    // The vocabulary's token strings with the added ones (as `get_vocab(true)` gives them),
    // by id, without building a map of them.
    let model = tokenizer.get_vocab_size(false);
    let added = tokenizer.get_added_tokens_decoder();
    let mut lens: Vec<usize> = (0..model as u32)
        .filter_map(|id| tokenizer.id_to_token(id))
        .chain(
            added
                .iter()
                .filter(|(id, _)| **id as usize >= model)
                .map(|(_, t)| t.content.clone()),
        )
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

/// From this many texts in one call, the texts are split across threads.
const PARALLEL_FROM: usize = 64;

/// A query embeds a handful of tokens; past this many in one call the whole matrix is read
/// (once) rather than a row at a time.
const ROWS_READ_ONE_BY_ONE: usize = 2048;

/// The embedding matrix. Little-endian `f32` rows (as Model2Vec ships them) stay in the file
/// until needed, so loading costs nothing: a query reads its few rows with positioned reads, and
/// the first batch (an index build) reads the whole matrix once. Other float types are
/// converted when the model is loaded.
enum Matrix {
    Converted(Vec<f32>),
    InFile {
        file: File,
        /// Where the first row starts in the file.
        start: u64,
        rows: usize,
        dimensions: usize,
        whole: OnceLock<Result<Vec<f32>, String>>,
    },
}

/// Where [`StaticEmbedder::pool`] finds rows: the whole matrix in memory, or the file.
enum Rows<'a> {
    All(&'a [f32]),
    File(&'a File, u64),
}

impl Matrix {
    /// The rows for a call that will look up `lookups` of them.
    fn rows(&self, lookups: usize) -> Result<Rows<'_>, EmbedError> {
        match self {
            Matrix::Converted(v) => Ok(Rows::All(v)),
            Matrix::InFile { file, start, .. } if lookups <= ROWS_READ_ONE_BY_ONE => {
                if let Some(Ok(v)) = self.loaded() {
                    return Ok(Rows::All(v));
                }
                Ok(Rows::File(file, *start))
            }
            Matrix::InFile {
                file,
                start,
                rows,
                dimensions,
                whole,
            } => {
                let loaded = whole.get_or_init(|| {
                    let mut bytes = vec![0u8; rows * dimensions * 4];
                    file.read_exact_at(&mut bytes, *start)
                        .map_err(|e| format!("cannot read model.safetensors: {e}"))?;
                    Ok(bytes
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect())
                });
                match loaded {
                    Ok(v) => Ok(Rows::All(v)),
                    Err(e) => Err(EmbedError::Inference(e.clone())),
                }
            }
        }
    }

    fn loaded(&self) -> Option<&Result<Vec<f32>, String>> {
        match self {
            Matrix::Converted(_) => None,
            Matrix::InFile { whole, .. } => whole.get(),
        }
    }
}

/// The file's header: where each tensor's bytes are, after the header.
struct Header {
    metadata: Metadata,
    /// The offset of the data section in the file.
    data_start: u64,
}

impl Header {
    /// Reads and checks the header of `model.safetensors` (as `SafeTensors::deserialize`
    /// would, without reading the tensors).
    fn read(dir: &Path, file: &File) -> Result<Header, EmbedError> {
        let unusable = |why: &str| model_err(dir, format!("model.safetensors is unusable: {why}"));
        let file_len = file
            .metadata()
            .map_err(|e| model_err(dir, format!("cannot read model.safetensors: {e}")))?
            .len();
        let mut n = [0u8; 8];
        file.read_exact_at(&mut n, 0)
            .map_err(|_| unusable("the file is too short for a header"))?;
        let n = u64::from_le_bytes(n);
        // safetensors' own limit on a header's size.
        if n > 100_000_000 || 8 + n > file_len {
            return Err(unusable("the header's length is wrong"));
        }
        let mut header = vec![0u8; n as usize];
        file.read_exact_at(&mut header, 8)
            .map_err(|e| model_err(dir, format!("cannot read model.safetensors: {e}")))?;
        let metadata: Metadata =
            serde_json::from_slice(&header).map_err(|e| unusable(&e.to_string()))?;
        let end = metadata
            .tensors()
            .values()
            .map(|t| t.data_offsets.1)
            .max()
            .unwrap_or(0);
        if 8 + n + end as u64 != file_len {
            return Err(unusable("the file's length does not match its header"));
        }
        Ok(Header {
            metadata,
            data_start: 8 + n,
        })
    }

    fn info(&self, name: &str) -> Option<&TensorInfo> {
        self.metadata.info(name)
    }

    /// A (small) tensor's bytes.
    fn bytes(&self, dir: &Path, file: &File, info: &TensorInfo) -> Result<Vec<u8>, EmbedError> {
        let (from, to) = info.data_offsets;
        let mut out = vec![0u8; to - from];
        file.read_exact_at(&mut out, self.data_start + from as u64)
            .map_err(|e| model_err(dir, format!("cannot read model.safetensors: {e}")))?;
        Ok(out)
    }
}

/// The part of the model id that changes with its files: the configuration, the tokenizer, and
/// the weights' length with their first and last 64 KiB.
fn fingerprint(config: &[u8], tokenizer: &[u8], weights: &File, len: u64) -> std::io::Result<u64> {
    let mut h = fnv1a(FNV_OFFSET, config);
    h = fnv1a(h, tokenizer);
    h = fnv1a(h, &len.to_le_bytes());
    let edge = len.min(1 << 16);
    let mut buf = vec![0u8; edge as usize];
    weights.read_exact_at(&mut buf, 0)?;
    h = fnv1a(h, &buf);
    weights.read_exact_at(&mut buf, len - edge)?;
    Ok(fnv1a(h, &buf))
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
        let file = File::open(dir.join("model.safetensors"))
            .map_err(|e| model_err(dir, format!("cannot read model.safetensors: {e}")))?;
        let weights_len = file
            .metadata()
            .map_err(|e| model_err(dir, format!("cannot read model.safetensors: {e}")))?
            .len();
        // The two costs of a load, side by side: the tokenizer's vocabulary, and the model's
        // fingerprint (a hash of the files, for the model id).
        let (tokenizer, fingerprint) = std::thread::scope(|s| {
            let hashed =
                s.spawn(|| fingerprint(&config_bytes, &tokenizer_bytes, &file, weights_len));
            let tokenizer = crate::tokenizer::parse(&tokenizer_bytes);
            let hashed = hashed
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            (tokenizer, hashed)
        });
        let mut tokenizer =
            tokenizer.map_err(|e| model_err(dir, format!("tokenizer.json is unusable: {e}")))?;
        let fingerprint = fingerprint
            .map_err(|e| model_err(dir, format!("cannot read model.safetensors: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                ..Default::default()
            }))
            .map_err(|e| model_err(dir, format!("cannot set truncation: {e}")))?;
        let header = Header::read(dir, &file)?;
        let emb = header.info("embeddings").ok_or_else(|| {
            model_err(
                dir,
                "model.safetensors has no `embeddings` tensor; is this a model2vec model?",
            )
        })?;
        let [rows, dimensions] = emb.shape[..] else {
            return Err(model_err(
                dir,
                "model.safetensors: `embeddings` is not a matrix",
            ));
        };
        let matrix = match emb.dtype {
            Dtype::F32 => Matrix::InFile {
                file: file.try_clone().map_err(|e| model_err(dir, e))?,
                start: header.data_start + emb.data_offsets.0 as u64,
                rows,
                dimensions,
                whole: OnceLock::new(),
            },
            dtype => Matrix::Converted(floats(
                dir,
                "embeddings",
                dtype,
                &header.bytes(dir, &file, emb)?,
            )?),
        };
        let vocab = vocabulary_size(&tokenizer);
        let mapping = match header.info("mapping") {
            Some(info) => Some(indices(dir, info.dtype, &header.bytes(dir, &file, info)?)?),
            None => None,
        };
        let weights = match header.info("weights") {
            Some(info) => Some(floats(
                dir,
                "weights",
                info.dtype,
                &header.bytes(dir, &file, info)?,
            )?),
            None => None,
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
        Ok(Self {
            matrix,
            mapping,
            weights,
            dimensions,
            tokenizer,
            unk,
            max_length,
            max_chars: OnceLock::new(),
            model_id: format!(
                "{}@{:012x}",
                model_name(dir),
                fingerprint & 0xffff_ffff_ffff
            ),
        })
    }

    /// The token ids of a text that carry meaning: cut as the reference cuts it, without
    /// special tokens, the unknown token dropped.
    fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        // Every token is at least one character, so the median is at least 1.
        let cut = match text.char_indices().nth(self.max_length) {
            None => text,
            Some(_) => {
                let max_chars = *self.max_chars.get_or_init(|| {
                    self.max_length
                        .saturating_mul(median_token_length(&self.tokenizer))
                });
                match text.char_indices().nth(max_chars) {
                    Some((at, _)) => &text[..at],
                    None => text,
                }
            }
        };
        let enc = self
            .tokenizer
            .encode_fast(cut, false)
            .map_err(|e| EmbedError::Inference(format!("cannot tokenize: {e}")))?;
        Ok(enc
            .get_ids()
            .iter()
            .copied()
            .filter(|&id| Some(id) != self.unk)
            .collect())
    }

    /// The mean of the tokens' rows (each scaled by its weight), at unit length.
    fn pool(&self, ids: &[u32], rows: &Rows<'_>) -> Result<Vec<f32>, EmbedError> {
        let d = self.dimensions;
        let mut sum = vec![0f32; d];
        let mut row_bytes = Vec::new();
        let mut n = 0usize;
        for &id in ids {
            let id = id as usize;
            let row = match &self.mapping {
                Some(m) => m.get(id).copied(),
                None => Some(id),
            };
            let scale = match &self.weights {
                Some(w) => w.get(id).copied().unwrap_or(1.0),
                None => 1.0,
            };
            let Some(r) = row else { continue };
            match rows {
                Rows::All(all) => {
                    let Some(v) = all.get(r * d..(r + 1) * d) else {
                        continue;
                    };
                    sum.iter_mut().zip(v).for_each(|(s, x)| *s += scale * x);
                }
                Rows::File(file, start) => {
                    if r >= self.matrix_rows() {
                        continue;
                    }
                    row_bytes.resize(d * 4, 0);
                    file.read_exact_at(&mut row_bytes, start + (r * d * 4) as u64)
                        .map_err(|e| {
                            EmbedError::Inference(format!("cannot read model.safetensors: {e}"))
                        })?;
                    sum.iter_mut()
                        .zip(row_bytes.chunks_exact(4))
                        .for_each(|(s, b)| {
                            *s += scale * f32::from_le_bytes([b[0], b[1], b[2], b[3]])
                        });
                }
            }
            n += 1;
        }
        if n > 0 {
            let inv = 1.0 / n as f32;
            sum.iter_mut().for_each(|s| *s *= inv);
        }
        normalize(&mut sum);
        Ok(sum)
    }

    /// How many rows the matrix has.
    fn matrix_rows(&self) -> usize {
        match &self.matrix {
            Matrix::Converted(v) => v.len() / self.dimensions.max(1),
            Matrix::InFile { rows, .. } => *rows,
        }
    }
}

/// How many token ids the tokenizer can give: the model's vocabulary and the added tokens
/// (`get_vocab_size(true)` builds the whole vocabulary map to count it).
fn vocabulary_size(tokenizer: &Tokenizer) -> usize {
    let added = tokenizer
        .get_added_tokens_decoder()
        .keys()
        .map(|&id| id as usize + 1)
        .max()
        .unwrap_or(0);
    tokenizer.get_vocab_size(false).max(added)
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
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        if texts.len() < PARALLEL_FROM || threads < 2 {
            let ids = texts
                .iter()
                .map(|t| self.token_ids(t))
                .collect::<Result<Vec<_>, _>>()?;
            let rows = self.matrix.rows(ids.iter().map(Vec::len).sum())?;
            return ids.iter().map(|ids| self.pool(ids, &rows)).collect();
        }
        // A batch (an index build): the whole matrix, and the texts split across the cores
        // (tokenizing is most of the work), in order.
        let rows = self.matrix.rows(usize::MAX)?;
        let rows = &rows;
        std::thread::scope(|s| {
            let parts: Vec<_> = texts
                .chunks(texts.len().div_ceil(threads))
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|t| self.pool(&self.token_ids(t)?, rows))
                            .collect::<Result<Vec<_>, _>>()
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(texts.len());
            for part in parts {
                out.extend(
                    part.join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))?,
                );
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The median as `model2vec` takes it: over every key of the vocabulary with added tokens.
    fn median_of_the_whole_vocabulary(tokenizer: &Tokenizer) -> usize {
        let mut lens: Vec<usize> = tokenizer
            .get_vocab(true)
            .keys()
            .map(|t| t.chars().count())
            .collect();
        lens.sort_unstable();
        let n = lens.len();
        if n % 2 == 1 {
            lens[n / 2]
        } else {
            (lens[n / 2 - 1] + lens[n / 2]) / 2
        }
    }

    #[test]
    fn the_median_token_length_is_the_whole_vocabularys() {
        let tiny = memdir_test_model::TinyStaticModel::new();
        let dirs = std::iter::once(tiny.path().to_path_buf())
            .chain(memdir_test_model::real_static_model());
        for dir in dirs {
            let bytes = std::fs::read(dir.join("tokenizer.json")).unwrap();
            let t = crate::tokenizer::parse(&bytes).unwrap();
            assert_eq!(
                median_token_length(&t),
                median_of_the_whole_vocabulary(&t).max(1),
                "{}",
                dir.display()
            );
        }
    }
}
