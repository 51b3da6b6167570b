//! The endpoint client against a real HTTP server on 127.0.0.1 started inside each test.
#![cfg(feature = "endpoint")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memdir_embed::{EmbedError, Embedder, EndpointConfig, EndpointEmbedder};
use serde_json::{Value, json};

/// One request as the server saw it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// Answers requests in order with `reply(n, body)` until the test ends; returns the base URL and
/// the log of requests.
fn serve(
    reply: impl Fn(usize, &Value) -> (u16, String) + Send + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut line = String::new();
            reader.read_line(&mut line).expect("request line");
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let (mut length, mut authorization) = (0usize, None);
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).expect("header");
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap_or((header, ""));
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "authorization" => authorization = Some(value.trim().to_owned()),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, text) = reply(n, &body);
            log.lock().expect("log").push(Seen {
                path,
                authorization,
                body,
            });
            let response = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (format!("http://{addr}/v1"), seen)
}

/// A deterministic fake embedding: the text's length and its first byte, not normalised.
fn fake_response(body: &Value) -> String {
    let inputs = body["input"].as_array().cloned().unwrap_or_default();
    // Answer in reverse order with explicit indices, as some servers do.
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| {
            let t = t.as_str().unwrap_or_default();
            json!({"object": "embedding", "index": i,
                   "embedding": [t.len() as f32, f32::from(t.bytes().next().unwrap_or(0)), 0.0]})
        })
        .collect();
    json!({"object": "list", "data": data, "model": body["model"]}).to_string()
}

fn config(url: &str) -> EndpointConfig {
    let mut c = EndpointConfig::new(url, "test-embed");
    c.timeout = Duration::from_secs(5);
    c
}

#[test]
fn batches_keep_order_and_normalise() -> Result<(), EmbedError> {
    let (url, seen) = serve(|_, body| (200, fake_response(body)));
    let mut c = config(&url);
    c.batch_size = 2;
    let embedder = EndpointEmbedder::new(c)?;
    let texts = ["a", "bb", "ccc", "dddd", "eeeee"];
    let vectors = embedder.embed(&texts)?;
    assert_eq!(vectors.len(), 5);
    for (t, v) in texts.iter().zip(&vectors) {
        let (len, first) = (t.len() as f32, f32::from(t.as_bytes()[0]));
        let norm = (len * len + first * first).sqrt();
        assert!(
            (v[0] - len / norm).abs() < 1e-6 && (v[1] - first / norm).abs() < 1e-6,
            "{t}: {v:?}"
        );
    }
    assert_eq!(embedder.dimensions(), 3);
    assert_eq!(embedder.model_id(), "endpoint:test-embed");
    let seen = seen.lock().expect("log").clone();
    assert_eq!(seen.len(), 3, "5 texts in batches of 2 are 3 requests");
    assert!(
        seen.iter()
            .all(|s| s.path == "/v1/embeddings" && s.body["model"] == "test-embed")
    );
    assert!(
        seen.iter().all(|s| s.authorization.is_none()),
        "no key configured, none sent"
    );
    Ok(())
}

#[test]
fn retries_server_errors_then_succeeds() -> Result<(), EmbedError> {
    let (url, seen) = serve(|n, body| match n {
        0 => (503, "{}".to_owned()),
        1 => (429, "{}".to_owned()),
        _ => (200, fake_response(body)),
    });
    let embedder = EndpointEmbedder::new(config(&url))?;
    let vectors = embedder.embed(&["hello"])?;
    assert_eq!(vectors.len(), 1);
    assert_eq!(seen.lock().expect("log").len(), 3);
    Ok(())
}

#[test]
fn gives_up_after_the_configured_retries() {
    let (url, seen) = serve(|_, _| (500, "{}".to_owned()));
    let mut c = config(&url);
    c.retries = 1;
    let err = EndpointEmbedder::new(c)
        .and_then(|e| e.embed(&["x"]))
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(err.contains("http status 500"), "{err}");
    assert_eq!(seen.lock().expect("log").len(), 2, "one try and one retry");
}

#[test]
fn sends_the_key_but_never_shows_it() {
    let secret = "sk-test-0123456789";
    let (url, seen) = serve(|_, _| (401, r#"{"error": "invalid api key"}"#.to_owned()));
    let mut c = config(&url);
    c.api_key = Some(secret.to_owned());
    assert!(
        !format!("{c:?}").contains(secret),
        "Debug must not print the key"
    );
    let err = EndpointEmbedder::new(c)
        .and_then(|e| e.embed(&["x"]))
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(
        err.contains("http status 401") && err.contains("invalid api key"),
        "{err}"
    );
    assert!(
        !err.contains(secret),
        "the error must not hold the key: {err}"
    );
    let seen = seen.lock().expect("log").clone();
    assert_eq!(seen.len(), 1, "a 401 is not retried");
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(format!("Bearer {secret}").as_str())
    );
}

#[test]
fn a_wrong_count_is_an_error() {
    let (url, _) = serve(|_, _| {
        (
            200,
            r#"{"data": [{"embedding": [1.0], "index": 0}]}"#.to_owned(),
        )
    });
    let err = EndpointEmbedder::new(config(&url))
        .and_then(|e| e.embed(&["a", "b"]))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("asked for 2 embeddings and got 1"), "{err}");
}

#[test]
fn rejects_a_url_without_scheme() {
    let err = EndpointEmbedder::new(EndpointConfig::new("localhost:11434", "m"))
        .err()
        .map(|e| e.to_string());
    assert!(err.unwrap_or_default().contains("http:// or https://"));
}
