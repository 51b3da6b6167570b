//! Issue 37's property, through the engine's write paths themselves (the pure renderings are
//! checked in `memdir-core/tests/format_props.rs`): whatever strings an agent or an outside
//! source sends through a log entry (its own and an external one), a new note's fields and body,
//! a ChatGPT and a Claude import (title, speaker, text, ids) and an offload (its label and
//! content, from the agent and from outside), no stored file holds a control character (tab
//! excepted) or a line separator, and the context prints none.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir::import::{ChatFormat, ImportSource};
use memdir::notes::NoteRequest;
use memdir::store::{EntryKind, Store};
use memdir::{Actor, Clock, InMemoryStore, Memory, Source};
use memdir_core::path::MemPath;
use memdir_core::text::is_unsafe;
use proptest::prelude::*;
use serde_json::json;

/// Any string, control characters and line separators made common.
fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => any::<char>(),
            2 => prop::sample::select(vec![
                '\0', '\x07', '\x1b', '\r', '\n', '\t', '\x7f', '\u{85}', '\u{9b}', '\u{2028}',
                '\u{2029}', ' ', '-', ':', '<', '>', 'a',
            ]),
        ],
        1..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

/// Every file of the store with its text.
fn files(store: &InMemoryStore) -> Vec<(String, String)> {
    store
        .walk(&MemPath::root())
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == EntryKind::File)
        .map(|e| {
            let text = String::from_utf8_lossy(&store.read(&e.path).unwrap()).into_owned();
            (e.path.to_string(), text)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_string_through_every_write_path_stores_no_control_character(
        a in hostile(),
        b in hostile(),
    ) {
        let store = InMemoryStore::new();
        let clock = Clock::fixed(
            "2026-11-30T09:15:00Z".parse().unwrap(),
            jiff::tz::TimeZone::UTC,
        );
        let mem = Memory::init_backend(store.backend(), clock, false).unwrap();
        let outside = mem.with_actor(Actor {
            writer: "agent".into(),
            source: Source::External,
        });
        // Refusals (an empty entry, a bad name) are fine; a stored control character is not.
        let _ = mem.log(&a);
        let _ = outside.log(&b);
        for (m, name) in [(&mem, "own"), (&outside, "fetched")] {
            let _ = m.note_new(&NoteRequest {
                name,
                description: &a,
                kind: None,
                tags: &[],
                expires: None,
                body: &b,
                force: false,
            });
        }
        let chatgpt = json!([{
            "id": b, "title": a, "create_time": 1764493200.0, "current_node": "n1",
            "mapping": {"n1": {"id": "n1", "parent": null, "children": [], "message": {
                "author": {"role": a}, "content": {"content_type": "text", "parts": [b]},
                "create_time": 1764493200.0}}}
        }]);
        let claude = json!([{
            "uuid": a, "name": b, "created_at": "2026-11-30T09:00:00Z",
            "chat_messages": [{"sender": "human", "text": a, "created_at": "2026-11-30T09:00:00Z",
                "attachments": [{"file_name": b, "extracted_content": a}]}]
        }]);
        for (format, export) in [(ChatFormat::ChatGpt, chatgpt), (ChatFormat::Claude, claude)] {
            let json = export.to_string();
            let imported = mem.import(ImportSource::Chats { format, json: &json }, "export", false);
            prop_assert!(imported.is_ok(), "{:?}", imported);
        }
        for (m, content, label) in [(&mem, &a, &b), (&outside, &b, &a)] {
            let stored = memdir_mcp::offload::offload(m, content, Some(label));
            prop_assert_eq!(stored.is_ok(), !content.trim().is_empty(), "{:?}", stored);
        }
        for (path, text) in files(&store) {
            prop_assert!(!text.chars().any(is_unsafe), "{}: {:?}", path, text);
        }
        let shown = mem.context().unwrap().render();
        prop_assert!(!shown.chars().any(is_unsafe), "{:?}", shown);
    }
}
