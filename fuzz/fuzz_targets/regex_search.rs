//! `memdir search --regex` with any pattern over any text: a bad pattern is a one-line error,
//! a good one runs in bounded time (the engine caps the compiled size; matching is linear), and
//! every hit is a real line of a real file. The first line of the input is the pattern, the rest
//! a note's text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir::search::SearchRequest;
use memdir_fuzz::Fenced;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long one search of a small folder may take, whatever the pattern (generous: the machine
/// is shared; a backtracking engine takes hours on the classic patterns, not seconds).
const BOUND: Duration = Duration::from_secs(3);

fuzz_target!(|data: &[u8]| {
    static MEM: OnceLock<Fenced> = OnceLock::new();
    let f = MEM.get_or_init(|| {
        let f = Fenced::new();
        let root = f.root();
        std::fs::create_dir_all(root.join("notes")).expect("notes");
        std::fs::write(
            root.join("core.md"),
            "prefers tabs\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\n",
        )
        .expect("core");
        std::fs::write(
            root.join("log/2026-11-30.md"),
            "- 09:00 shipped v2\n- 10:00 [external] web says x\n",
        )
        .expect("log");
        f
    });
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, body) = text.split_once('\n').unwrap_or((text, ""));
    std::fs::write(f.root().join("notes/fuzz.md"), body).expect("write the note");
    for case_sensitive in [true, false] {
        let mut req = SearchRequest::new(pattern);
        req.regex = true;
        req.case_sensitive = case_sensitive;
        req.context = 1;
        let start = Instant::now();
        let res = f.mem.search(&req);
        let took = start.elapsed();
        assert!(took < BOUND, "{pattern:?} took {took:?}");
        match res {
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    !msg.contains('\n') && msg.len() < 2048,
                    "one-line error: {msg:?}"
                );
            }
            Ok(out) => {
                for h in out.hits {
                    let file =
                        std::fs::read_to_string(f.root().join(&h.path)).expect("a real file");
                    let line = file.lines().nth((h.line as usize).wrapping_sub(1));
                    assert!(line.is_some(), "{h:?} is not a line of {}", h.path);
                }
            }
        }
    }
});
