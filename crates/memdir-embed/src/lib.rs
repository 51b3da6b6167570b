//! Embedders for memdir's vector index: text in, unit-length vectors out.
//!
//! Three providers sit behind one [`Embedder`] trait, chosen by an [`EmbedConfig`]:
//!
//! - [`EmbedConfig::Local`]: a model loaded from a directory holding `model.safetensors`,
//!   `tokenizer.json` and `config.json`, run in-process on the CPU. Nothing is ever downloaded:
//!   the directory is all there is. Its `config.json` decides the kind: `"model_type":
//!   "model2vec"` is a [`StaticEmbedder`] (potion-base-8M and kin: one vector per token,
//!   averaged, well under a millisecond a query); anything else is a BERT-family
//!   [`LocalEmbedder`] (all-MiniLM-L6-v2 and kin) run with candle.
//! - [`EmbedConfig::Endpoint`]: an OpenAI-compatible `/v1/embeddings` endpoint (Ollama, vLLM,
//!   OpenAI) with batching, timeouts and retries.
//! - [`EmbedConfig::None`]: no vectors at all; keyword search stays first-class.
//!
//! This crate reads no environment variables and no config files: the binary resolves those
//! (including the API key, which it reads from the variable the config names) and passes values
//! down.
//!
//! ```no_run
//! use memdir_embed::{EmbedConfig, open};
//!
//! # fn main() -> Result<(), memdir_embed::EmbedError> {
//! let config = EmbedConfig::Local { model_dir: "/models/all-MiniLM-L6-v2".into() };
//! let embedder = open(&config)?.expect("a provider was configured");
//! let vectors = embedder.embed(&["I moved into a new flat", "we rented an apartment"])?;
//! let cosine: f32 = vectors[0].iter().zip(&vectors[1]).map(|(a, b)| a * b).sum();
//! assert!(cosine > 0.3);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

pub mod chat;
mod error;
pub use error::EmbedError;

#[cfg(feature = "local-model")]
mod bert;
#[cfg_attr(feature = "local-model", path = "local.rs")]
#[cfg_attr(not(feature = "local-model"), path = "local_disabled.rs")]
mod local;
pub use local::LocalEmbedder;
#[cfg(not(feature = "local-model"))]
pub use local::StaticEmbedder;
#[cfg(feature = "local-model")]
mod static_model;
#[cfg(feature = "local-model")]
mod tokenizer;
#[cfg(feature = "local-model")]
pub use static_model::StaticEmbedder;

#[cfg_attr(feature = "endpoint", path = "endpoint.rs")]
#[cfg_attr(not(feature = "endpoint"), path = "endpoint_disabled.rs")]
mod endpoint;
pub use endpoint::EndpointEmbedder;

/// Turns texts into vectors of a fixed length.
///
/// Implementations return one vector per input text, in input order, each of length
/// [`Embedder::dimensions`] and of unit L2 norm, so a dot product is a cosine similarity.
pub trait Embedder: Send + Sync {
    /// A stable identifier of the model and its settings; the index records it and pauses vector
    /// search when it changes.
    fn model_id(&self) -> &str;
    /// The length of every vector this embedder returns.
    fn dimensions(&self) -> usize;
    /// Embeds a batch of texts to be searched (documents, passages).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embeds search queries; the same as [`Embedder::embed`] unless the model wants queries
    /// marked (an e5-style `query: ` prompt).
    fn embed_query(&self, queries: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(queries)
    }
}

/// Which embedder to build, with everything it needs already resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EmbedConfig {
    /// No embedder: keyword search only.
    #[default]
    None,
    /// A local model loaded from a directory: a Model2Vec static embedder when its `config.json`
    /// says `"model_type": "model2vec"`, a BERT-family sentence encoder otherwise.
    Local {
        /// The directory holding `model.safetensors`, `tokenizer.json` and `config.json`.
        model_dir: PathBuf,
    },
    /// An OpenAI-compatible embeddings endpoint.
    Endpoint(EndpointConfig),
}

/// Settings of an OpenAI-compatible `/v1/embeddings` endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// The base URL, e.g. `http://127.0.0.1:11434/v1` (with or without the trailing
    /// `/embeddings`).
    pub url: String,
    /// The model name sent with each request, e.g. `nomic-embed-text`.
    pub model: String,
    /// The bearer token, already read from the environment variable the config names. Never
    /// printed: `Debug` shows only whether it is set.
    pub api_key: Option<String>,
    /// How many texts go in one request.
    pub batch_size: usize,
    /// The limit for one request, connect to last byte.
    pub timeout: Duration,
    /// How many times a failed request (network error, 429 or 5xx) is tried again.
    pub retries: u32,
    /// The vector length, when known ahead; otherwise the first response decides.
    pub dimensions: Option<usize>,
}

impl EndpointConfig {
    /// An endpoint with default batching (64), timeout (30 s) and retries (3).
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            model: model.into(),
            api_key: None,
            batch_size: 64,
            timeout: Duration::from_secs(30),
            retries: 3,
            dimensions: None,
        }
    }
}

impl std::fmt::Debug for EndpointConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointConfig")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("batch_size", &self.batch_size)
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("dimensions", &self.dimensions)
            .finish()
    }
}

/// Builds the configured embedder; `Ok(None)` for [`EmbedConfig::None`].
pub fn open(config: &EmbedConfig) -> Result<Option<Box<dyn Embedder>>, EmbedError> {
    Ok(match config {
        EmbedConfig::None => None,
        EmbedConfig::Local { model_dir } => Some(local::load_dir(model_dir)?),
        EmbedConfig::Endpoint(endpoint) => Some(Box::new(EndpointEmbedder::new(endpoint.clone())?)),
    })
}

/// Scales `v` to unit L2 norm in place (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// A 64-bit FNV-1a hash, used for short, stable model fingerprints.
#[cfg(feature = "local-model")]
pub(crate) fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The FNV-1a offset basis.
#[cfg(feature = "local-model")]
pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
