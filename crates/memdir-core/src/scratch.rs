//! Scratch notes: `scratch/<expiry-ms>-<slug>.md`, where the expiry is Unix milliseconds.

/// The folder that holds scratch notes.
pub const SCRATCH_DIR: &str = "scratch";

/// A parsed scratch file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchName {
    /// When the note expires, in Unix milliseconds.
    pub expires_ms: i64,
    /// The note's slug.
    pub slug: String,
}

impl ScratchName {
    /// Parses `1767225600000-todo.md`; `None` for any other shape.
    pub fn parse(file_name: &str) -> Option<ScratchName> {
        let stem = file_name.strip_suffix(".md")?;
        let (ms, slug) = stem.split_once('-')?;
        if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        validate_slug(slug).ok()?;
        Some(ScratchName {
            expires_ms: ms.parse().ok()?,
            slug: slug.to_string(),
        })
    }

    /// The file name, e.g. `1767225600000-todo.md`.
    pub fn file_name(&self) -> String {
        format!("{}-{}.md", self.expires_ms, self.slug)
    }
}

/// Checks a slug: 1-64 characters of lowercase letters, digits and `-`, not starting or ending
/// with `-`.
pub fn validate_slug(slug: &str) -> Result<(), String> {
    let ok = !slug.is_empty()
        && slug.len() <= 64
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "bad name {slug:?}: use 1-64 lowercase letters, digits and dashes, like `deploy-notes`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let n = ScratchName::parse("1767225600000-todo-list.md").unwrap();
        assert_eq!(n.expires_ms, 1767225600000);
        assert_eq!(n.slug, "todo-list");
        assert_eq!(n.file_name(), "1767225600000-todo-list.md");
        for bad in [
            "todo.md",
            "123-.md",
            "-todo.md",
            "12a-x.md",
            "123-x.txt",
            "123-X.md",
        ] {
            assert_eq!(ScratchName::parse(bad), None, "{bad}");
        }
        for bad in ["", "A", "a b", "a/b", "-a", "a-", "../x", &"a".repeat(65)] {
            assert!(validate_slug(bad).is_err(), "{bad}");
        }
        assert!(validate_slug("deploy-2").is_ok());
    }
}
