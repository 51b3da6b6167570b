//! Hard caps on always-loaded files: a line count and a byte size.

use serde::{Deserialize, Serialize};

/// A hard cap: a file may hold at most `max_lines` lines and `max_bytes` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cap {
    /// Most lines allowed.
    pub max_lines: usize,
    /// Most bytes allowed.
    pub max_bytes: usize,
}

/// The size of a text as the caps count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    /// Lines, counting a last line without a newline.
    pub lines: usize,
    /// Bytes.
    pub bytes: usize,
}

impl Size {
    /// Measures `text`.
    pub fn of(text: &str) -> Size {
        Size {
            lines: text.lines().count(),
            bytes: text.len(),
        }
    }
}

/// A write refused because it would take a file over its cap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{file} would be {} lines and {} bytes, over its cap of {} lines and {} bytes (now {} lines, {} bytes): {fix}",
    new.lines, new.bytes, cap.max_lines, cap.max_bytes, current.lines, current.bytes
)]
pub struct CapExceeded {
    /// The capped file, e.g. `core.md`.
    pub file: String,
    /// The cap.
    pub cap: Cap,
    /// Its size now.
    pub current: Size,
    /// The size the write would give it.
    pub new: Size,
    /// What to do about it.
    pub fix: String,
}

/// The fix a refusal names for a file edited directly.
pub const REMOVE_A_LINE: &str = "remove a line first";

impl Cap {
    /// Checks that `new_text` fits; `current_text` is only used to say where the file stands.
    pub fn check(&self, file: &str, current_text: &str, new_text: &str) -> Result<(), CapExceeded> {
        let new = Size::of(new_text);
        if new.lines > self.max_lines || new.bytes > self.max_bytes {
            return Err(CapExceeded {
                file: file.to_string(),
                cap: *self,
                current: Size::of(current_text),
                new,
                fix: REMOVE_A_LINE.to_string(),
            });
        }
        Ok(())
    }

    /// The larger of the line and byte usage, as a fraction of the cap (1.0 = full).
    pub fn usage(&self, text: &str) -> f64 {
        let s = Size::of(text);
        let lines = s.lines as f64 / self.max_lines.max(1) as f64;
        let bytes = s.bytes as f64 / self.max_bytes.max(1) as f64;
        lines.max(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_over_cap_and_names_everything() {
        let cap = Cap {
            max_lines: 2,
            max_bytes: 100,
        };
        assert!(cap.check("core.md", "", "a\nb\n").is_ok());
        let err = cap.check("core.md", "a\nb\n", "a\nb\nc\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "core.md would be 3 lines and 6 bytes, over its cap of 2 lines and 100 bytes (now 2 lines, 4 bytes): remove a line first"
        );
        let big = "x".repeat(101);
        assert!(cap.check("core.md", "", &big).is_err());
        assert!((cap.usage("a\n") - 0.5).abs() < 1e-9);
    }
}
