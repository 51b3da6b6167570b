//! A client for OpenAI-compatible `/v1/embeddings` endpoints (Ollama, vLLM, llama.cpp, OpenAI).

use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{EmbedError, Embedder, EndpointConfig, normalize};

/// The largest response body accepted (a batch of 64 × 3072 floats as JSON fits easily).
const MAX_RESPONSE_BYTES: u64 = 256 << 20;

/// An embedder that sends texts to an OpenAI-compatible endpoint.
#[derive(Debug)]
pub struct EndpointEmbedder {
    config: EndpointConfig,
    url: String,
    agent: ureq::Agent,
    model_id: String,
    dimensions: OnceLock<usize>,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [&'a str],
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// Whether a failed request is worth sending again.
enum Failure {
    Retry(String),
    Fatal(String),
}

impl EndpointEmbedder {
    /// Builds the client; nothing is sent until the first [`Embedder::embed`].
    pub fn new(config: EndpointConfig) -> Result<Self, EmbedError> {
        let base = config.url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(EmbedError::Endpoint {
                url: config.url.clone(),
                reason: "the url must start with http:// or https://".to_owned(),
            });
        }
        let url = if base.ends_with("/embeddings") {
            base.to_owned()
        } else {
            format!("{base}/embeddings")
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let dimensions = OnceLock::new();
        if let Some(d) = config.dimensions {
            let _ = dimensions.set(d);
        }
        Ok(Self {
            model_id: format!("endpoint:{}", config.model),
            url,
            agent,
            dimensions,
            config,
        })
    }

    fn send(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Failure> {
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(Request {
                model: &self.config.model,
                input: texts,
            })
            .map_err(|e| Failure::Retry(e.to_string()))?;
        let status = response.status().as_u16();
        if status == 429 || status >= 500 {
            return Err(Failure::Retry(format!("http status {status}")));
        }
        if status != 200 {
            let detail = response
                .body_mut()
                .with_config()
                .limit(4096)
                .read_to_string()
                .unwrap_or_default();
            let detail: String = detail.split_whitespace().collect::<Vec<_>>().join(" ");
            return Err(Failure::Fatal(format!("http status {status}: {detail}")));
        }
        let body: Response = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_json()
            .map_err(|e| Failure::Fatal(format!("the response is not an embeddings list: {e}")))?;
        if body.data.len() != texts.len() {
            return Err(Failure::Fatal(format!(
                "asked for {} embeddings and got {}",
                texts.len(),
                body.data.len()
            )));
        }
        let mut items = body.data;
        if items.iter().all(|i| i.index.is_some()) {
            items.sort_by_key(|i| i.index);
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let mut v = item.embedding;
            let want = *self.dimensions.get_or_init(|| v.len());
            if v.len() != want || want == 0 {
                return Err(Failure::Fatal(format!(
                    "got a vector of length {} where {want} was expected",
                    v.len()
                )));
            }
            normalize(&mut v);
            out.push(v);
        }
        Ok(out)
    }
}

impl Embedder for EndpointEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The vector length: from the config, or learned from the first response (0 before it).
    fn dimensions(&self) -> usize {
        self.dimensions.get().copied().unwrap_or(0)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.batch_size.max(1)) {
            let mut attempt = 0;
            loop {
                match self.send(batch) {
                    Ok(vectors) => {
                        out.extend(vectors);
                        break;
                    }
                    Err(Failure::Retry(reason)) if attempt < self.config.retries => {
                        // Back off 250 ms, 500 ms, 1 s, ... capped at 8 s.
                        let wait = Duration::from_millis(250u64 << attempt.min(5));
                        std::thread::sleep(wait);
                        attempt += 1;
                        let _ = reason;
                    }
                    Err(Failure::Retry(reason) | Failure::Fatal(reason)) => {
                        return Err(EmbedError::Endpoint {
                            url: self.url.clone(),
                            reason,
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}
