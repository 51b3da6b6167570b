//! Fuzzing of what an MCP client controls (issue 13): the tools' JSON input (the Anthropic
//! memory tool and every memdir tool), each stdio line, and the whole stdio message loop.
//! Properties: nothing panics, every request gets exactly one answer, and the server keeps
//! serving after any input.
//!
//! Short runs in `cargo test`; a long run sets the number of cases:
//!
//! ```text
//! MEMDIR_FUZZ_CASES=20000 cargo test --release -p memdir-mcp --test fuzz
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use memdir::{Clock, Memory};
use memdir_mcp::server::MemdirServer;
use memdir_mcp::stdio::{LineTransport, Verdict, judge};
use memdir_mcp::{Tools, tools::specs};
use proptest::prelude::*;
use rmcp::ServiceExt as _;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Cases per property: `MEMDIR_FUZZ_CASES`, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("MEMDIR_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}

fn clock() -> Clock {
    Clock::fixed(
        "2026-11-30T09:15:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    )
}

/// The field names the tools read, so generated objects reach past "missing field".
const FIELDS: &[&str] = &[
    "command",
    "path",
    "file_text",
    "old_str",
    "new_str",
    "insert_line",
    "insert_text",
    "view_range",
    "old_path",
    "new_path",
    "text",
    "query",
    "pattern",
    "start_line",
    "end_line",
    "name",
    "uri",
    "mode",
    "limit",
    "content",
    "old",
    "new",
    "reason",
    "layer",
    "since",
    "until",
    "glob",
    "kind",
    "target",
    "amount",
    "id",
    "max_bytes",
];

/// Strings a model might send, hostile ones included.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("/memories".to_string()),
        Just("/memories/notes/a.md".to_string()),
        Just("/memories/../etc/passwd".to_string()),
        Just("/memories/core.md".to_string()),
        Just("notes/x.md".to_string()),
        Just("".to_string()),
        Just("view".to_string()),
        Just("create".to_string()),
        Just("str_replace".to_string()),
        Just("insert".to_string()),
        Just("delete".to_string()),
        Just("rename".to_string()),
        "/memories/[a-z./~ \\-]{0,24}",
        "[a-z]{1,8}(/[a-z.]{1,8}){0,3}",
        any::<String>(),
        "\\PC{0,64}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-5i64..200).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(FIELDS), inner), 0..6).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// Tool input: mostly objects of known fields with plausible values.
fn tool_input() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::collection::vec((prop::sample::select(FIELDS), json_value()), 0..7).prop_map(
            |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())
        ),
        1 => json_value(),
    ]
}

#[test]
fn tool_json_never_panics_and_always_answers() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Arc::new(
        Memory::init_with(dir.path(), clock(), false).unwrap(),
    ));
    let names: Vec<&'static str> = specs().iter().map(|s| s.name).collect();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases(128)));
    runner
        .run(
            &(prop::sample::select(names), tool_input()),
            |(name, input)| {
                let out = tools.call(name, input.clone());
                prop_assert!(out.is_ok(), "{name} is a known tool");
                let out = out.unwrap();
                prop_assert!(!out.text.is_empty(), "{name} {input} gave an empty answer");
                Ok(())
            },
        )
        .unwrap();
}

/// Lines a client (or a broken one) might send: garbage bytes, JSON of any shape, requests
/// with any params, requests cut short or nested too deep.
#[derive(Debug, Clone)]
enum Line {
    Bytes(Vec<u8>),
    Json(Value),
    Request {
        method: String,
        params: Value,
    },
    CutRequest {
        method: String,
        params: Value,
        keep: usize,
    },
    Deep {
        depth: usize,
    },
    Notification {
        method: String,
        params: Value,
    },
}

const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "no/such/method",
];

fn line() -> impl Strategy<Value = Line> {
    let method = prop_oneof![
        4 => prop::sample::select(METHODS).prop_map(str::to_string),
        1 => "[a-z/]{0,12}",
    ];
    let params = prop_oneof![
        3 => (prop::sample::select(&["memory", "memory_search", "memory_read", "memory_log", "memory_write", "nope"][..]), tool_input())
            .prop_map(|(name, arguments)| json!({"name": name, "arguments": arguments})),
        1 => json_value(),
        1 => "memdir://[a-z/]{0,12}".prop_map(|uri| json!({"uri": uri})),
    ];
    prop_oneof![
        2 => prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 0..64).prop_map(Line::Bytes),
        2 => json_value().prop_map(Line::Json),
        6 => (method.clone(), params.clone()).prop_map(|(method, params)| Line::Request { method, params }),
        1 => (method.clone(), params.clone(), 0usize..200).prop_map(|(method, params, keep)| Line::CutRequest { method, params, keep }),
        1 => (100usize..3000).prop_map(|depth| Line::Deep { depth }),
        1 => (method, params).prop_map(|(method, params)| Line::Notification { method, params }),
    ]
}

/// The bytes of a line, and the id of the request it is when an answer is owed by id.
fn render(l: &Line, id: i64) -> (Vec<u8>, Option<i64>) {
    match l {
        Line::Bytes(b) => (b.clone(), None),
        Line::Json(v) => {
            // Without an `id`, so its answer (if any) cannot be taken for a request's.
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("id");
            }
            (v.to_string().into_bytes(), None)
        }
        Line::Request { method, params } => (
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                .to_string()
                .into_bytes(),
            Some(id),
        ),
        Line::CutRequest {
            method,
            params,
            keep,
        } => {
            // The id comes first, so a line cut anywhere after it is still answered by id.
            let head = format!(r#"{{"id":{id},"#);
            let rest = format!(r#""jsonrpc":"2.0","method":{},"params":{params}}}"#, json!(method));
            let cut: String = rest.chars().take(*keep).collect();
            (format!("{head}{cut}").into_bytes(), Some(id))
        }
        Line::Deep { depth } => (
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{}{}}}"#,
                "[".repeat(*depth),
                "]".repeat(*depth)
            )
            .into_bytes(),
            Some(id),
        ),
        Line::Notification { method, params } => (
            json!({"jsonrpc": "2.0", "method": format!("notifications/{method}"), "params": params})
                .to_string()
                .into_bytes(),
            None,
        ),
    }
}

/// Runs a server over an in-process pipe, sends `lines` after the handshake, then a final
/// ping, and returns the ids answered (an error without an id counts as `None`).
async fn converse(tools: Tools, lines: &[(Vec<u8>, Option<i64>)]) -> Vec<Option<i64>> {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let running = tokio::spawn(async move {
        let service = MemdirServer::new(tools)
            .serve(LineTransport::new(server_read, server_write))
            .await
            .expect("handshake");
        let _ = service.waiting().await;
    });
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut answers = BufReader::new(client_read).lines();
    let init = json!({"jsonrpc": "2.0", "id": -1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "0"}}});
    client_write
        .write_all(
            format!(
                "{init}\n{}\n",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&answers.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["id"], -1);
    let writer = {
        let mut all = Vec::new();
        for (bytes, _) in lines {
            all.extend_from_slice(bytes);
            all.push(b'\n');
        }
        all.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":-2,\"method\":\"ping\"}\n");
        tokio::spawn(async move {
            client_write.write_all(&all).await.unwrap();
            client_write
        })
    };
    let expected: BTreeSet<i64> = lines.iter().filter_map(|(_, id)| *id).chain([-2]).collect();
    let mut got = Vec::new();
    let mut seen = BTreeSet::new();
    while !expected.is_subset(&seen) {
        let Some(line) = answers.next_line().await.unwrap() else {
            panic!("the server closed its output")
        };
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON: {e}: {line}"));
        let id = v["id"].as_i64();
        if let Some(id) = id {
            assert!(seen.insert(id), "two answers to request {id}");
        }
        got.push(id);
    }
    drop(writer.await.unwrap());
    running.abort();
    got
}

#[test]
fn every_stdio_request_is_answered_and_serving_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Arc::new(
        Memory::init_with(dir.path(), clock(), false).unwrap(),
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases(24)));
    runner
        .run(&prop::collection::vec(line(), 1..24), |lines| {
            let rendered: Vec<(Vec<u8>, Option<i64>)> = lines
                .iter()
                .enumerate()
                .map(|(i, l)| render(l, i64::try_from(i).unwrap() + 1))
                .collect();
            let tools = tools.clone();
            let answered = rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(60), converse(tools, &rendered)).await
            });
            prop_assert!(answered.is_ok(), "a request was never answered: {lines:?}");
            Ok(())
        })
        .unwrap();
}

#[test]
fn judging_a_line_never_panics_and_replies_are_json_rpc_errors() {
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases(2048)));
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        json_value().prop_map(|v| v.to_string().into_bytes()),
        (line(), 0i64..100).prop_map(|(l, id)| render(&l, id).0),
    ];
    runner
        .run(&bytes, |b| {
            if let Verdict::Reply(r) = judge(&b) {
                prop_assert_eq!(&r["jsonrpc"], "2.0");
                let code = r["error"]["code"].as_i64().unwrap();
                prop_assert!(code == -32700 || code == -32600, "code {}", code);
                prop_assert!(r["id"].is_null() || r["id"].is_string() || r["id"].is_number());
                prop_assert!(!r["error"]["message"].as_str().unwrap().is_empty());
            }
            Ok(())
        })
        .unwrap();
}
