//! MCP over stdin/stdout: one JSON-RPC message per line, and an answer to every request, even
//! a bad one.
//!
//! rmcp's own line transport skips a line that is not JSON (rust-sdk#938, to avoid error
//! storms), skips a line over its 16 MiB cap without a word, and answers a malformed request
//! without its id; in each case the client waits forever for a reply that never comes. This
//! transport reads the same lines under the same cap, hands rmcp what parses, and answers the
//! rest itself, as JSON-RPC 2.0 asks:
//!
//! - not JSON, or nested deeper than serde_json's 128 levels: `-32700` (parse error);
//! - JSON that is not a message (no method, a bad `params`, a batch): `-32600` (invalid request);
//! - a line over the cap: `-32600`, saying how large it was and what the cap is.
//!
//! The reply carries the request's `id` when it can be read from the start of the line (a
//! top-level `id` before whatever went wrong), else `null`. Notifications and responses are
//! never answered, so an error reply echoed back by a confused peer is not answered either:
//! no storm.

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest message read, in bytes (rmcp's cap, and its HTTP client's largest SSE event).
pub const MAX_MESSAGE: usize = 16 << 20;

/// How much of an oversized line is kept to find its `id` in.
const ID_PREFIX: usize = 64 << 10;

/// JSON-RPC 2.0 error codes.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;

/// Lines queued for the writer; senders wait when the client stops reading.
const QUEUE: usize = 64;

/// A server transport over a byte stream pair (stdin/stdout, or a pipe in tests).
pub struct LineTransport<R> {
    read: BufReader<R>,
    /// The line read so far (at most the cap; cut to [`ID_PREFIX`] once it is over).
    line: Vec<u8>,
    /// The length of the line read so far, kept or not.
    len: usize,
    max: usize,
    out: Option<mpsc::Sender<Vec<u8>>>,
    /// An error reply decided on but not yet queued (queuing can wait, and `receive` can be
    /// cancelled while it does).
    pending: Option<Vec<u8>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

enum Read {
    Line,
    Oversized,
    Eof,
    Failed(std::io::Error),
}

/// What one line is.
#[derive(Debug)]
pub enum Verdict {
    /// A message for the server.
    Message(Box<ClientJsonRpcMessage>),
    /// Not a message: this error reply answers it.
    Reply(Value),
    /// Nothing to do: a blank line, a notification or a response that does not parse.
    Ignore,
}

impl<R: AsyncRead + Send + Unpin + 'static> LineTransport<R> {
    /// Reads messages from `read` and writes replies to `write` (one task writes, in order).
    pub fn new<W: AsyncWrite + Send + Unpin + 'static>(read: R, write: W) -> Self {
        Self::with_max(read, write, MAX_MESSAGE)
    }

    /// As [`LineTransport::new`], with another cap on a message's size in bytes.
    pub fn with_max<W: AsyncWrite + Send + Unpin + 'static>(read: R, write: W, max: usize) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let writer = tokio::spawn(write_lines(write, rx));
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            len: 0,
            max,
            out: Some(tx),
            pending: None,
            writer: Some(writer),
        }
    }

    /// Reads up to the next newline without holding more than the cap. Cancel-safe: what was
    /// read stays in `self` and the next call goes on from there.
    async fn read_line(&mut self) -> Read {
        loop {
            let (used, ended) = {
                let buf = match self.read.fill_buf().await {
                    Ok(b) => b,
                    Err(e) => return Read::Failed(e),
                };
                if buf.is_empty() {
                    return Read::Eof;
                }
                let newline = buf.iter().position(|b| *b == b'\n');
                let body = &buf[..newline.unwrap_or(buf.len())];
                self.len = self.len.saturating_add(body.len());
                if self.len <= self.max {
                    self.line.extend_from_slice(body);
                } else {
                    self.line.truncate(ID_PREFIX);
                    let room = ID_PREFIX.saturating_sub(self.line.len()).min(body.len());
                    self.line.extend_from_slice(&body[..room]);
                }
                (newline.map_or(buf.len(), |i| i + 1), newline.is_some())
            };
            self.read.consume(used);
            if ended {
                return if self.len > self.max {
                    Read::Oversized
                } else {
                    Read::Line
                };
            }
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = rx.recv().await {
        if w.write_all(&line).await.is_err() || w.flush().await.is_err() {
            return;
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the client closed the output",
    )
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            out.ok_or_else(closed)?
                .send(line)
                .await
                .map_err(|_| closed())
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.pending.is_some() {
                let permit = self.out.as_ref()?.reserve().await.ok()?;
                if let Some(reply) = self.pending.take() {
                    permit.send(reply);
                }
            }
            let verdict = match self.read_line().await {
                Read::Line => judge(&self.line),
                Read::Oversized => Verdict::Reply(error_reply(
                    top_level_id(&self.line),
                    INVALID_REQUEST,
                    &format!(
                        "message too large: {} bytes, over the limit of {} bytes: send a smaller message (split large content over several calls)",
                        self.len, self.max
                    ),
                )),
                Read::Eof => return None,
                Read::Failed(e) => {
                    tracing::error!("cannot read from stdin: {e}");
                    return None;
                }
            };
            self.line.clear();
            self.len = 0;
            match verdict {
                Verdict::Message(m) => return Some(*m),
                Verdict::Reply(reply) => {
                    tracing::debug!("answering a bad message: {reply}");
                    let mut line = reply.to_string().into_bytes();
                    line.push(b'\n');
                    self.pending = Some(line);
                }
                Verdict::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing the queue lets the writer finish what is queued, then end.
        self.out = None;
        if let Some(w) = self.writer.take() {
            let _ = w.await;
        }
        Ok(())
    }
}

/// Decides what one line (without its newline) is: a message, a bad one to answer, or
/// nothing. Pure, so the fuzz tests call it directly.
pub fn judge(line: &[u8]) -> Verdict {
    judge_framed(line, "line")
}

/// [`judge`] for the body of one HTTP request: the same verdicts, so `/mcp` answers what stdio
/// answers (rmcp would answer any body that does not parse with `415`).
pub(crate) fn judge_body(body: &[u8]) -> Verdict {
    judge_framed(body, "request")
}

/// [`judge`], with what carries one message (`line`, `request`) named in the hints.
fn judge_framed(line: &[u8], per: &str) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    let e = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => return Verdict::Message(Box::new(m)),
        Err(e) => e,
    };
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Reply(error_reply(
                top_level_id(line),
                PARSE_ERROR,
                &format!("parse error: {e}: send one JSON-RPC message per {per}"),
            ));
        }
    };
    let has = |k: &str| value.get(k).is_some();
    if value.is_object() && !has("id") && has("method") {
        // A notification, answered never; rmcp skips unknown ones the same way.
        tracing::debug!("ignoring a notification that does not parse: {e}");
        return Verdict::Ignore;
    }
    if value.is_object() && !has("method") && (has("result") || has("error")) {
        tracing::debug!("ignoring a response that does not parse: {e}");
        return Verdict::Ignore;
    }
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let why = if value.is_array() {
        format!("batches are not supported: send one message per {per}")
    } else {
        format!("{e}: send a JSON-RPC 2.0 object with jsonrpc, id, method and params")
    };
    Verdict::Reply(error_reply(
        id,
        INVALID_REQUEST,
        &format!("invalid request: {why}"),
    ))
}

fn error_reply(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The top-level `id` of a JSON object (a string or a number), read from as much of `bytes`
/// as parses: a line cut short, or one nested too deep after its `id`, still gives it.
/// `null` when there is none to be found.
fn top_level_id(bytes: &[u8]) -> Value {
    struct Seek<'a>(&'a mut Option<Value>);
    impl<'de> DeserializeSeed<'de> for Seek<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for Seek<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    let id: Value = map.next_value()?;
                    if id.is_string() || id.is_number() {
                        *self.0 = Some(id);
                    }
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let _ = Seek(&mut found).deserialize(&mut de);
    found.unwrap_or(Value::Null)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Reply(v) => v,
            other => panic!("{line:?} is not answered with an error: {other:?}"),
        }
    }

    #[test]
    fn garbage_is_a_parse_error_with_a_null_id() {
        let r = reply("this is not json");
        assert_eq!(r["error"]["code"], PARSE_ERROR);
        assert_eq!(r["id"], Value::Null);
        assert!(r.as_object().unwrap().contains_key("id"), "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("parse error: ")
        );
    }

    #[test]
    fn a_line_cut_short_keeps_its_id() {
        let r = reply(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"na"#);
        assert_eq!(r["error"]["code"], PARSE_ERROR);
        assert_eq!(r["id"], 7);
    }

    #[test]
    fn nesting_too_deep_is_a_parse_error_with_the_id() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{}{}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let r = reply(&deep);
        assert_eq!(r["error"]["code"], PARSE_ERROR);
        assert_eq!(r["id"], "d");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("recursion")
        );
    }

    #[test]
    fn json_that_is_no_request_is_an_invalid_request() {
        for (line, id) in [
            (r#"{"jsonrpc":"2.0","id":3}"#, json!(3)),
            (r#"{"jsonrpc":"2.0","id":"x","method":7}"#, json!("x")),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
            ("42", Value::Null),
            (
                r#"{"id":{"no":1},"method":"ping","jsonrpc":"2.0"}"#,
                Value::Null,
            ),
        ] {
            let r = reply(line);
            assert_eq!(r["error"]["code"], INVALID_REQUEST, "{line}");
            assert_eq!(r["id"], id, "{line}");
        }
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for line in [
            "",
            "  \r",
            r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32700,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
        ] {
            // Ignored here, or a response handed on to rmcp, which answers none.
            assert!(
                !matches!(judge(line.as_bytes()), Verdict::Reply(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn a_request_is_handed_on() {
        assert!(matches!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Message(_)
        ));
    }
}
