//! The MCP stdio line classifier (`memdir mcp`): any line is a message, ignored, or answered
//! with a JSON-RPC error that is itself one valid line, carries the request's own `id` when the
//! line has a usable one, and is small whatever the line's size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_mcp::stdio::{Verdict, judge};
use serde_json::Value;

fuzz_target!(|line: &[u8]| {
    match judge(line) {
        Verdict::Message(m) => {
            // A message goes to the server as it came: it serializes again.
            serde_json::to_string(&m).expect("a message serializes");
        }
        Verdict::Ignore => {
            // Only blank lines, notifications and responses are ignored: never a request.
            if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(line) {
                assert!(
                    !(o.contains_key("id") && o.contains_key("method")),
                    "a request was ignored: {}",
                    String::from_utf8_lossy(line)
                );
            }
        }
        Verdict::Reply(r) => {
            let text = r.to_string();
            assert!(!text.contains('\n'), "one line");
            assert_eq!(r["jsonrpc"], "2.0");
            let code = r["error"]["code"].as_i64();
            assert!(matches!(code, Some(-32700 | -32600)), "{text}");
            let id = &r["id"];
            assert!(id.is_null() || id.is_string() || id.is_number(), "{text}");
            // The message says what went wrong; it does not repeat the whole line back.
            let msg = r["error"]["message"].as_str().unwrap_or_default();
            assert!(
                !msg.is_empty() && msg.len() < 1024,
                "{} byte message",
                msg.len()
            );
            if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(line)
                && let Some(want) = o.get("id").filter(|v| v.is_string() || v.is_number())
            {
                assert_eq!(id, want, "the reply answers the request's id");
            }
        }
    }
});
