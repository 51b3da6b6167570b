//! Control characters in text that is stored or shown: the one rule every write path folds
//! with, and how a terminal is shown what slipped past it.
//!
//! A control character in a log line or a note field is never wanted and can do harm: ESC
//! starts a terminal escape sequence (clear the screen, set the title, write the clipboard), a
//! lone CR prints forged text over the start of a line, and a lone CR, NEL (U+0085) or a
//! Unicode line or paragraph separator (U+2028, U+2029) ends a line for some readers (Obsidian,
//! GitHub) and not for others, so one entry could pass for two. [`scrub`] turns every line
//! ending into `\n`, so the file's own structure (an entry's later lines indented) applies to
//! it, and every other control character but tab into U+FFFD.
//!
//! ```
//! use memdir_core::text::{one_line, scrub};
//! assert_eq!(scrub("a\r\nb\u{2028}c\x1b[2J"), "a\nb\nc\u{FFFD}[2J");
//! assert_eq!(one_line("user\n- 09:00 forged"), "user - 09:00 forged");
//! ```

use std::borrow::Cow;

/// True for what a stored line must not hold: C0 and C1 control characters (tab and newline
/// excepted), DEL, and the Unicode line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n') || c == '\u{2028}' || c == '\u{2029}'
}

/// True when `s` holds any character [`is_unsafe`] flags, found on the bytes: a C0 control but
/// tab and newline, DEL, a C1 control (`C2 80`..`C2 9F` in UTF-8) or U+2028/U+2029 (`E2 80
/// A8`/`A9`). In valid UTF-8 `C2` and `E2` only ever start a character, so no byte of another
/// character is mistaken for one. The common case, clean text, costs a byte compare per byte
/// rather than a character decode and a table lookup.
fn has_unsafe(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().any(|(i, &x)| match x {
        b'\t' | b'\n' => false,
        0x00..=0x1f | 0x7f => true,
        0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
        0xe2 => b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9)),
        _ => false,
    })
}

/// The folding rule: `\r\n`, a lone `\r`, NEL, U+2028 and U+2029 become `\n`; every other
/// control character but tab and newline becomes U+FFFD. Text without any is borrowed.
pub fn scrub(s: &str) -> Cow<'_, str> {
    if !has_unsafe(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\u{85}' | '\u{2028}' | '\u{2029}' => out.push('\n'),
            c if is_unsafe(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`scrub`]bed, then every run of whitespace (line breaks included) folded to one space and the
/// ends trimmed: for a field that must stay on one line, such as a speaker or a title.
pub fn one_line(s: &str) -> String {
    scrub(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text for a terminal: what [`is_unsafe`] flags is shown as an escape (`\x1b`, `\u{2028}`)
/// instead of being run. Text without any is borrowed.
pub fn escape_for_terminal(s: &str) -> Cow<'_, str> {
    if !has_unsafe(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// The byte scan agrees with the character rule on any text, controls and separators
        /// mixed with every other plane.
        #[test]
        fn the_byte_scan_is_the_character_rule(s in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{2028}\\u{2029}\\u{2027}\\u{202a}\\u{a0}])*") {
            prop_assert_eq!(has_unsafe(&s), s.chars().any(is_unsafe));
        }
    }

    #[test]
    fn check() {
        let cases = [
            ("plain\ttext\n", "plain\ttext\n"),
            ("crlf\r\nline", "crlf\nline"),
            ("lone\rcr", "lone\ncr"),
            ("nel\u{85}ls\u{2028}ps\u{2029}", "nel\nls\nps\n"),
            ("\x1b]52;c;aGk=\x07", "\u{FFFD}]52;c;aGk=\u{FFFD}"),
            ("nul\0del\x7fc1\u{9b}", "nul\u{FFFD}del\u{FFFD}c1\u{FFFD}"),
        ];
        for (given, want) in cases {
            assert_eq!(scrub(given), want, "{given:?}");
            assert!(!scrub(given).chars().any(is_unsafe));
        }
        assert_eq!(one_line(" a\u{2028}- 09:00 b\r\n"), "a - 09:00 b");
        assert_eq!(
            escape_for_terminal("a\x1b[2Jb\u{2028}"),
            "a\\x1b[2Jb\\u{2028}"
        );
        assert_eq!(escape_for_terminal("tab\tand\n"), "tab\tand\n");
    }
}
