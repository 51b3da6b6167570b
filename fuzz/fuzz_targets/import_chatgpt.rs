//! `memdir import chatgpt` on any `conversations.json`: a bad export is a clear error and
//! writes nothing; a good one writes only below the memory root, no control character lands in
//! a log or note it writes, every log line it adds reads back as one entry in a log whose name
//! says its day, what it writes is bounded by a multiple of the input, and re-running adds
//! nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir::import::ChatFormat;

fuzz_target!(|data: &[u8]| {
    memdir_fuzz::check_chat_import(ChatFormat::ChatGpt, data);
});
