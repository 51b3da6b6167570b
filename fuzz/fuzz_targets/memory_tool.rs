//! The Anthropic memory tool (`memory_20250818`) on any input: each line of the fuzz input is
//! one tool call's JSON, run in order on a fresh memory. No call panics; every call answers
//! with text (an error says so); nothing is ever written outside the memory root or under a
//! name memdir would refuse; and a file the tool says it created holds exactly the text given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_fuzz::Fenced;
use memdir_mcp::anthropic::run;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let f = Fenced::new();
    for line in text.lines().take(8) {
        let Ok(input) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let out = run(&f.mem, &input);
        assert!(!out.text.is_empty(), "a call answered nothing: {line}");
        let files = f.files();
        if !out.is_error && input["command"] == "create" {
            let path = input["path"].as_str().unwrap_or_default();
            let want = input["file_text"].as_str().unwrap_or_default();
            let rel = memdir_core::path::MemPath::parse(path).expect("created, so a good path");
            let got = files.iter().find(|(p, _)| p == rel.as_str());
            assert_eq!(
                got.map(|(_, b)| b.as_slice()),
                Some(want.as_bytes()),
                "{line} -> {}",
                out.text
            );
        }
    }
});
