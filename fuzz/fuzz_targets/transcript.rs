//! A session transcript (Claude Code or Codex CLI JSONL), line by line, as `memdir hook
//! pre-compact` and `memdir import --from` render it: no line panics; every tool result lands
//! inside exactly one untrusted block and every block closes, so nothing a tool returned reads as
//! the agent's or the user's words; no control character reaches the file; a long result can be
//! replaced by its reference; the header reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_core::context::{FENCE_OPEN, split_untrusted};
use memdir_core::transcript::{
    Block, Header, Parsed, is_big_result, offload_reference, parse_claude_line, parse_codex_line,
    parse_header, render_header, render_turn,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let day = jiff::civil::date(2026, 11, 30);
    let tz = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
    let mut out = render_header(&Header {
        host: "claude-code".into(),
        session: text.lines().next().unwrap_or("").into(),
        cwd: text.lines().nth(1).unwrap_or("").into(),
        lines: text.lines().count(),
    });
    let (h, body) = parse_header(&out).expect("the header memdir writes reads back");
    assert_eq!(h.lines, text.lines().count());
    assert!(out[body..].starts_with("# Agent session "));
    let mut results = 0;
    for line in text.lines() {
        for parsed in [parse_claude_line(line), parse_codex_line(line)] {
            let Parsed::Turn(mut turn) = parsed else {
                continue;
            };
            assert!(!turn.blocks.is_empty());
            for b in &mut turn.blocks {
                if is_big_result(b) {
                    *b = Block::Offloaded {
                        reference: offload_reference("offload/x.md", 1, 2, 3),
                        error: false,
                    };
                } else if matches!(b, Block::ToolResult { text, .. } if !text.trim().is_empty()) {
                    results += 1;
                }
            }
            out.push_str(&render_turn(&turn, &tz, day));
        }
    }
    let (_, outside) = split_untrusted(&out).expect("every untrusted block closes");
    let blocks = out.lines().filter(|l| l.starts_with(FENCE_OPEN)).count();
    assert_eq!(blocks, results, "one block per tool result: {out}");
    assert!(!outside.contains(FENCE_OPEN));
    assert!(
        !out.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "no control character: {out:?}"
    );
});
