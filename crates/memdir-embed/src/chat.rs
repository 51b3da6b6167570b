//! A client for OpenAI-compatible `/v1/chat/completions` endpoints (Ollama, vLLM, OpenAI): one
//! question, one JSON answer. The twin of the embeddings client in `endpoint.rs`.

use std::time::Duration;

/// An OpenAI-compatible chat endpoint, built by the front end from its settings (the API key
/// read from the variable the settings name).
#[derive(Clone)]
pub struct ChatModel {
    /// The base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub url: String,
    /// The model name.
    pub model: String,
    /// The API key, if any.
    pub api_key: Option<String>,
    /// How long to wait for the answer.
    pub timeout: Duration,
}

impl std::fmt::Debug for ChatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatModel")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Why a chat request failed; the caller words it for its own settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatError {
    /// The URL does not start with `http://` or `https://`.
    BadUrl,
    /// The request or its answer failed, and why.
    Failed(String),
    /// This build has no HTTP client (the `endpoint` feature is off).
    NotEnabled,
}

impl ChatModel {
    /// Sends `prompt` (with a system line asking for one JSON object) and returns the answer's
    /// text.
    #[cfg(feature = "endpoint")]
    pub fn ask(&self, prompt: &str) -> Result<String, ChatError> {
        let fail = |why: String| ChatError::Failed(why);
        let base = self.url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ChatError::BadUrl);
        }
        let url = if base.ends_with("/chat/completions") {
            base.to_string()
        } else {
            format!("{base}/chat/completions")
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let mut req = agent.post(&url);
        if let Some(key) = &self.api_key {
            req = req.header("Authorization", format!("Bearer {key}"));
        }
        let body = serde_json::json!({
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": "You answer with one JSON object in the schema given, and nothing else."},
                {"role": "user", "content": prompt},
            ],
        });
        let mut resp = req.send_json(body).map_err(|e| fail(e.to_string()))?;
        let status = resp.status().as_u16();
        if status != 200 {
            return Err(fail(format!("http status {status}")));
        }
        let v: serde_json::Value = resp
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_json()
            .map_err(|e| fail(format!("the response is not a chat completion: {e}")))?;
        v.pointer("/choices/0/message/content")
            .and_then(|c| c.as_str())
            .map(str::to_string)
            .ok_or_else(|| fail("the response has no choices[0].message.content".to_string()))
    }

    /// Fails: this build has no HTTP client (the `endpoint` feature is off).
    #[cfg(not(feature = "endpoint"))]
    pub fn ask(&self, _prompt: &str) -> Result<String, ChatError> {
        Err(ChatError::NotEnabled)
    }
}
