//! Offloading: a large tool output goes to `offload/YYYY-MM-DD/HHMMSS-<label>.md` and the agent
//! keeps only a short reference (path, size, first and last lines) in its context. Nothing is
//! summarised away: the file holds the output as given, so the compression can be undone by
//! reading it back; only control characters are folded ([`memdir_core::text::scrub`]), and an
//! output from an external source is labelled in the file (`source: external` in a frontmatter,
//! as a note is), not only in the commit.

use memdir::{Error, Memory, Precondition, StoreError};
use memdir_core::path::MemPath;

/// The folder offloaded outputs live in.
pub const OFFLOAD_DIR: &str = "offload";
/// The largest output one offload takes.
pub const MAX_OFFLOAD_BYTES: usize = 8 * 1024 * 1024;
/// How much of the first and last line the reference quotes.
const QUOTE_CHARS: usize = 160;

/// Where an output went and what it looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadRef {
    /// The file, e.g. `offload/2026-11-30/091500-cargo-test.md`.
    pub path: String,
    /// Bytes stored.
    pub bytes: usize,
    /// Lines stored.
    pub lines: usize,
    /// The first non-empty line, cut to a quote.
    pub first: String,
    /// The last non-empty line, cut to a quote.
    pub last: String,
}

impl OffloadRef {
    /// The short reference an agent keeps in its context.
    pub fn render(&self) -> String {
        let end = self.lines.clamp(1, 100);
        format!(
            "offloaded {} bytes ({} lines) to {}\nfirst line: {}\nlast line: {}\nread it back with memory_read {{\"path\": \"{}\", \"start_line\": 1, \"end_line\": {end}}} (CLI: memdir read {})",
            self.bytes, self.lines, self.path, self.first, self.last, self.path, self.path
        )
    }
}

/// A label as a file-name slug: lowercase letters, digits and dashes, at most 40 characters.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "output".to_string()
    } else {
        out
    }
}

fn quote(line: &str) -> String {
    let line = line.trim_end_matches('\r');
    match line.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Stores `content` under `offload/<today>/` and returns its reference.
pub fn offload(mem: &Memory, content: &str, label: Option<&str>) -> Result<OffloadRef, Error> {
    if content.trim().is_empty() {
        return Err(Error::Invalid(
            "the content to offload is empty: pass the output to store".into(),
        ));
    }
    if content.len() > MAX_OFFLOAD_BYTES {
        return Err(Error::Invalid(format!(
            "the content is {} bytes, over the offload cap of {MAX_OFFLOAD_BYTES} bytes: split it and offload the parts",
            content.len()
        )));
    }
    let content = memdir_core::text::scrub(content);
    let external = mem.actor().source == memdir::Source::External;
    let stored = if external {
        std::borrow::Cow::Owned(memdir_core::note::mark_external(&content))
    } else {
        std::borrow::Cow::Borrowed(content.as_ref())
    };
    let now = mem.clock().now();
    let dir = format!("{OFFLOAD_DIR}/{}", now.strftime("%Y-%m-%d"));
    let stem = format!("{}-{}", now.strftime("%H%M%S"), slug(label.unwrap_or("")));
    // Each name is tried with "create only", so two offloads in the same second never take
    // the same name, on any backend, without a lock. The write goes through the engine like
    // any other, so it is committed as the writer's change and not swept into the next one
    // as a hand edit.
    let create = mem.with_precondition(Precondition::Absent);
    let mut n = 1;
    let path = loop {
        let name = if n == 1 {
            format!("{dir}/{stem}.md")
        } else {
            format!("{dir}/{stem}-{n}.md")
        };
        let p = MemPath::parse_file(&name)?;
        match create.write(p.as_str(), &stored) {
            // The offload folder is never core, so its writes are never gated.
            Ok(_) => break p,
            Err(Error::Store(StoreError::Conflict(_))) => n += 1,
            Err(e) => return Err(e),
        }
    };
    // The reference quotes what was stored, not what was sent: the write's guard may have
    // redacted a credential, which must not come back into the agent's context from here.
    let written = match mem.read(path.as_str()) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => String::new(),
    };
    let body = if external {
        memdir_core::note::Note::parse(&written).body
    } else {
        written.clone()
    };
    let mut nonblank = body.lines().filter(|l| !l.trim().is_empty());
    let first = nonblank.next().map(quote).unwrap_or_default();
    let last = body
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(quote)
        .unwrap_or_default();
    Ok(OffloadRef {
        path: path.to_string(),
        bytes: written.len(),
        lines: written.lines().count(),
        first,
        last,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_slugs() {
        assert_eq!(slug("cargo test --all"), "cargo-test-all");
        assert_eq!(slug("  "), "output");
        assert_eq!(slug("Ünïcode/../x"), "n-code-x");
        assert_eq!(slug(&"a".repeat(100)).len(), 40);
    }
}
