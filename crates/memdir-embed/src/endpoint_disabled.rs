//! Stand-in for the endpoint client when the `endpoint` feature is off: same signatures, a clear
//! error.

use crate::{EmbedError, Embedder, EndpointConfig};

/// An OpenAI-compatible endpoint client; this build has none, so [`EndpointEmbedder::new`]
/// always fails.
#[derive(Debug)]
pub struct EndpointEmbedder {
    _private: (),
}

impl EndpointEmbedder {
    /// Fails: the endpoint client is not enabled in this build.
    pub fn new(_config: EndpointConfig) -> Result<Self, EmbedError> {
        Err(EmbedError::NotEnabled {
            what: "the embeddings endpoint client",
            feature: "endpoint",
        })
    }
}

impl Embedder for EndpointEmbedder {
    fn model_id(&self) -> &str {
        ""
    }
    fn dimensions(&self) -> usize {
        0
    }
    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::NotEnabled {
            what: "the embeddings endpoint client",
            feature: "endpoint",
        })
    }
}
