//! Stand-in for the local model when the `local-model` feature is off: same signatures, a clear
//! error.

use std::path::Path;

use crate::{EmbedError, Embedder};

const NOT_ENABLED: EmbedError = EmbedError::NotEnabled {
    what: "the local model",
    feature: "local-model",
};

/// A local sentence encoder; this build has none, so [`LocalEmbedder::load`] always fails.
#[derive(Debug)]
pub struct LocalEmbedder {
    _private: (),
}

impl LocalEmbedder {
    /// Fails: the local model is not enabled in this build.
    pub fn load(_model_dir: &Path) -> Result<Self, EmbedError> {
        Err(EmbedError::NotEnabled {
            what: "the local model",
            feature: "local-model",
        })
    }
}

impl Embedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        ""
    }
    fn dimensions(&self) -> usize {
        0
    }
    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::NotEnabled {
            what: "the local model",
            feature: "local-model",
        })
    }
}

/// A Model2Vec static embedder; this build has none, so [`StaticEmbedder::load`] always fails.
#[derive(Debug)]
pub struct StaticEmbedder {
    _private: (),
}

impl StaticEmbedder {
    /// Fails: the local model is not enabled in this build.
    pub fn load(_model_dir: &Path) -> Result<Self, EmbedError> {
        Err(NOT_ENABLED)
    }
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        ""
    }
    fn dimensions(&self) -> usize {
        0
    }
    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(NOT_ENABLED)
    }
}

/// Fails: the local model is not enabled in this build.
pub(crate) fn load_dir(_dir: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    Err(NOT_ENABLED)
}
