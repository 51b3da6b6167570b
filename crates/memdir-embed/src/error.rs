//! The one error type of this crate.

use std::path::PathBuf;

/// Why an embedder could not be built or could not embed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The provider was left out of this build.
    #[error("{what} is not enabled in this build; rebuild memdir with the `{feature}` feature")]
    NotEnabled {
        /// What was asked for, e.g. "the local model".
        what: &'static str,
        /// The cargo feature that brings it in.
        feature: &'static str,
    },
    /// The model directory is missing a file or holds something unusable.
    #[error(
        "cannot load the model in {}: {reason}; point the model directory at a folder with model.safetensors, tokenizer.json and config.json",
        dir.display()
    )]
    Model {
        /// The directory that was tried.
        dir: PathBuf,
        /// What went wrong, one lowercase line.
        reason: String,
    },
    /// Running the model failed.
    #[error("embedding failed: {0}")]
    Inference(String),
    /// The endpoint could not be reached or answered with an error after all retries.
    #[error(
        "the embeddings endpoint {url} failed: {reason}; check embed.url, embed.model and the api key"
    )]
    Endpoint {
        /// The URL requested (never holds the key).
        url: String,
        /// What went wrong, one lowercase line.
        reason: String,
    },
}
