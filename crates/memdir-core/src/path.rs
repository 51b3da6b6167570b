//! Logical paths inside a memory folder.
//!
//! A [`MemPath`] is relative to the memory root and can never name anything outside it: it has no
//! `..`, no absolute part and no NUL byte, and never names memdir's own `.memdir/` folder or a
//! `.git/` folder. This is the lexical half of confinement; the store opens every path relative to
//! a directory handle of the root (`openat2` with `RESOLVE_BENEATH`), which is the other half and
//! the one that stops symlinks.

use std::fmt;

/// The prefix the Anthropic memory tool puts before every path; it means the memory root.
pub const MEMORIES_PREFIX: &str = "/memories";

/// Folder names that are never served: memdir's own state and git's.
pub const RESERVED: [&str; 2] = [".memdir", ".git"];

/// Why a path string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The string holds a NUL byte.
    #[error("path {0:?} contains a NUL byte")]
    Nul(String),
    /// A `..` component (plain or percent-encoded) would climb out of the root.
    #[error("path {0:?} leaves the memory folder: `..` is not allowed")]
    Escape(String),
    /// The path names `.memdir/` or `.git/`.
    #[error("path {0:?} is reserved: `.memdir/` and `.git/` are not part of memory")]
    Reserved(String),
    /// The path is empty where a file is needed.
    #[error("path is empty: name a file inside the memory folder")]
    Empty,
    /// The path cannot be stored or recorded: a control character, a name git refuses
    /// (`git~1`, `.git.`), too deep or too long. The message says which and what to do.
    #[error("{0}")]
    Unusable(String),
}

/// The most components a path may have. git refuses folders nested 100 deep; memdir stops well
/// before, so a path it accepts can always be committed.
pub const MAX_DEPTH: usize = 64;

/// The longest path in bytes (the system's `PATH_MAX` is 4096, and git records the whole path).
pub const MAX_PATH_BYTES: usize = 3072;

/// The longest single name in bytes (the file system's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// A validated path relative to the memory root; the empty path is the root itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MemPath {
    joined: String,
}

impl MemPath {
    /// The memory root.
    pub fn root() -> Self {
        MemPath::default()
    }

    /// Parses a path as an agent or a person gives it.
    ///
    /// `notes/x.md`, `/notes/x.md` and `/memories/notes/x.md` all mean the same file; `.` and
    /// empty components are dropped.
    pub fn parse(input: &str) -> Result<Self, PathError> {
        if input.contains('\0') {
            return Err(PathError::Nul(input.to_string()));
        }
        let rest = match input.strip_prefix(MEMORIES_PREFIX) {
            Some(r) if r.is_empty() || r.starts_with('/') => r,
            _ => input,
        };
        let mut parts: Vec<&str> = Vec::new();
        for comp in rest.split('/') {
            match comp {
                "" | "." => {}
                ".." => return Err(PathError::Escape(input.to_string())),
                c if is_encoded_traversal(c) => return Err(PathError::Escape(input.to_string())),
                c if RESERVED.contains(&c) => return Err(PathError::Reserved(input.to_string())),
                c if is_git_alias(c) => {
                    return Err(PathError::Unusable(format!(
                        "name {c:?} is one git takes for its own folder (.git) and refuses to record: pick another name"
                    )));
                }
                c => {
                    check_component(c)?;
                    parts.push(c)
                }
            }
        }
        if parts.len() > MAX_DEPTH {
            return Err(PathError::Unusable(format!(
                "path is {} levels deep, more than the {MAX_DEPTH} memdir allows: use fewer folders",
                parts.len()
            )));
        }
        let joined = parts.join("/");
        if joined.len() > MAX_PATH_BYTES {
            return Err(PathError::Unusable(format!(
                "path is {} bytes long, more than the {MAX_PATH_BYTES} memdir allows: use shorter names",
                joined.len()
            )));
        }
        Ok(MemPath { joined })
    }

    /// A path memdir itself names: a layer's file or folder from a [`crate::host::FolderLayout`],
    /// or a constant beside them (`MEMORY.md`, `scratch`). Such paths are valid by construction
    /// (a test parses every layout's), so a caller has nothing to handle; one that did not parse
    /// would be a bug, which debug builds stop at and release builds map to the root (a folder,
    /// which no read or write of a file accepts) rather than to a guess.
    pub fn known(path: &'static str) -> Self {
        match Self::parse(path) {
            Ok(p) => p,
            Err(e) => {
                debug_assert!(false, "{path:?} is not a memory path: {e}");
                Self::root()
            }
        }
    }

    /// Like [`MemPath::parse`] but refuses the root: for commands that need a file.
    pub fn parse_file(input: &str) -> Result<Self, PathError> {
        let p = Self::parse(input)?;
        if p.is_root() {
            return Err(PathError::Empty);
        }
        Ok(p)
    }

    /// The path as `a/b/c.md` (empty for the root).
    pub fn as_str(&self) -> &str {
        &self.joined
    }

    /// True for the memory root.
    pub fn is_root(&self) -> bool {
        self.joined.is_empty()
    }

    /// The components, outermost first.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.joined.split('/').filter(|c| !c.is_empty())
    }

    /// The folder holding this path (the root for a top-level name), or `None` for the root.
    pub fn parent(&self) -> Option<MemPath> {
        if self.is_root() {
            return None;
        }
        Some(match self.joined.rsplit_once('/') {
            Some((head, _)) => MemPath {
                joined: head.to_string(),
            },
            None => MemPath::root(),
        })
    }

    /// The last component, or `None` for the root.
    pub fn file_name(&self) -> Option<&str> {
        if self.is_root() {
            return None;
        }
        Some(self.joined.rsplit('/').next().unwrap_or(&self.joined))
    }

    /// This path with one more component; `name` must be a single plain component.
    pub fn join(&self, name: &str) -> Result<MemPath, PathError> {
        if name.contains('/') || name.is_empty() {
            return Err(PathError::Escape(name.to_string()));
        }
        if self.is_root() {
            Self::parse(name)
        } else {
            Self::parse(&format!("{}/{}", self.joined, name))
        }
    }

    /// True when `self` is `other` or lies inside it.
    pub fn starts_with(&self, other: &MemPath) -> bool {
        other.is_root()
            || self.joined == other.joined
            || self
                .joined
                .strip_prefix(&other.joined)
                .is_some_and(|r| r.starts_with('/'))
    }
}

impl fmt::Display for MemPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.joined)
    }
}

/// A name git (libgit2) treats as its own folder and refuses to record: `.git` in any case,
/// `git~1` (its short name on Windows file systems), either followed only by dots or spaces, or
/// by `:` (an NTFS stream) or `\\`. A file with such a name could be written but never
/// committed, and every later commit would fail on it.
fn is_git_alias(comp: &str) -> bool {
    let lower = comp.to_ascii_lowercase();
    [".git", "git~1"].iter().any(|alias| {
        lower.strip_prefix(alias).is_some_and(|rest| {
            rest.starts_with([':', '\\']) || rest.bytes().all(|b| b == b'.' || b == b' ')
        })
    })
}

/// Refuses a name that would mislead a reader or cannot be stored: control characters (a
/// newline in a name forges a `path:line:text` search hit) and names over [`MAX_NAME_BYTES`].
fn check_component(comp: &str) -> Result<(), PathError> {
    if let Some(c) = comp.chars().find(|c| c.is_control()) {
        return Err(PathError::Unusable(format!(
            "name {comp:?} contains the control character {c:?}: use printable characters only"
        )));
    }
    if comp.len() > MAX_NAME_BYTES {
        return Err(PathError::Unusable(format!(
            "name {:?}... is {} bytes long, more than the {MAX_NAME_BYTES} a file system allows: use a shorter name",
            comp.get(..comp.floor_char_boundary(40)).unwrap_or_default(),
            comp.len()
        )));
    }
    Ok(())
}

/// A component such as `%2e%2e` that a URL decoder would turn into `..` or a separator.
fn is_encoded_traversal(comp: &str) -> bool {
    let lower = comp.to_ascii_lowercase();
    if !lower.contains('%') {
        return false;
    }
    let decoded = lower
        .replace("%2e", ".")
        .replace("%2f", "/")
        .replace("%5c", "/");
    decoded.split('/').any(|c| c == "..") || decoded.contains('/')
}

/// A `--path` glob as search and forget read it: `notes/**`, `*.md`, or a folder meaning
/// everything under it (`/memories/` and `./` in front are the memory's root). The error is
/// one line naming the glob.
pub fn path_glob(g: &str) -> Result<globset::GlobSet, String> {
    let g = g.trim_start_matches("/memories/").trim_start_matches("./");
    let g = g.trim_end_matches('/');
    let bad =
        |e: globset::Error| format!("bad --path glob {g:?}: {e}; use a glob like notes/** or *.md");
    let mut set = globset::GlobSetBuilder::new();
    for pat in [g.to_string(), format!("{g}/**")] {
        set.add(
            globset::GlobBuilder::new(&pat)
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(bad)?,
        );
    }
    set.build().map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(input: &str, expect: Result<&str, &str>) {
        let got = MemPath::parse(input).map(|p| p.as_str().to_string());
        match (got, expect) {
            (Ok(g), Ok(e)) => assert_eq!(g, e, "input {input:?}"),
            (Err(g), Err(e)) => assert!(g.to_string().contains(e), "input {input:?}: {g}"),
            (g, e) => panic!("input {input:?}: got {g:?}, want {e:?}"),
        }
    }

    #[test]
    fn forms_that_mean_the_same_file() {
        check("notes/x.md", Ok("notes/x.md"));
        check("/notes/x.md", Ok("notes/x.md"));
        check("/memories/notes/x.md", Ok("notes/x.md"));
        check("/memories", Ok(""));
        check("/memories/", Ok(""));
        check("./notes//x.md", Ok("notes/x.md"));
        check("/memoriesx/a.md", Ok("memoriesx/a.md"));
        check("", Ok(""));
    }

    #[test]
    fn refusals() {
        check("../x", Err("leaves the memory folder"));
        check("/memories/../x", Err("leaves the memory folder"));
        check("a/../../x", Err("leaves the memory folder"));
        check("%2e%2e/x", Err("leaves the memory folder"));
        check("a/%2E%2E%2Fb", Err("leaves the memory folder"));
        check("a\0b", Err("NUL"));
        check(".memdir/config.toml", Err("reserved"));
        check("/memories/.git/HEAD", Err("reserved"));
        check("notes/.git", Err("reserved"));
        // Names libgit2 refuses to record (it protects NTFS and case-folding file systems).
        for name in [
            "git~1",
            "GIT~1",
            ".git.",
            ".git ",
            ".GIT",
            ".Git. .",
            ".git::$INDEX_ALLOCATION",
        ] {
            check(
                &format!("x/{name}/y.md"),
                Err("git takes for its own folder"),
            );
        }
        for fine in [
            "git~2",
            ".gitmodules",
            ".gitignore",
            ".github/x.md",
            "git",
            "foo.",
            "a:b",
        ] {
            check(fine, Ok(fine));
        }
        check("a\nb.md", Err("control character"));
        check("a\rb.md", Err("control character"));
        check("a\u{7f}b.md", Err("control character"));
        check(&["d"; MAX_DEPTH].join("/"), Ok(&["d"; MAX_DEPTH].join("/")));
        check(&["d"; MAX_DEPTH + 1].join("/"), Err("levels deep"));
        check(&"a".repeat(MAX_NAME_BYTES), Ok(&"a".repeat(MAX_NAME_BYTES)));
        check(&"a".repeat(MAX_NAME_BYTES + 1), Err("shorter name"));
        check(&[&"a".repeat(200) as &str; 20].join("/"), Err("bytes long"));
        assert_eq!(MemPath::parse_file("/memories"), Err(PathError::Empty));
    }

    #[test]
    fn parent_and_name() {
        let p = MemPath::parse("a/b/c.md").unwrap();
        assert_eq!(p.file_name(), Some("c.md"));
        assert_eq!(p.parent().unwrap().as_str(), "a/b");
        assert_eq!(
            MemPath::parse("c.md").unwrap().parent(),
            Some(MemPath::root())
        );
        assert_eq!(MemPath::root().parent(), None);
        assert!(p.starts_with(&MemPath::parse("a").unwrap()));
        assert!(!p.starts_with(&MemPath::parse("a/b/c").unwrap()));
    }

    proptest! {
        /// No string, however odd, parses to a path that climbs out or names reserved folders.
        #[test]
        fn no_path_string_escapes(s in "(/|\\.|\\.\\.|%2e|%2f|a|b|\\.memdir|\\.git|memories|\0|\\\\){0,12}") {
            if let Ok(p) = MemPath::parse(&s) {
                prop_assert!(!p.as_str().starts_with('/'));
                for c in p.components() {
                    prop_assert!(c != ".." && c != "." && !c.is_empty());
                    prop_assert!(!RESERVED.contains(&c));
                    prop_assert!(!c.contains('\0'));
                }
            }
        }

        /// An accepted path never holds a control character or a name git would refuse, and
        /// stays within the depth and length limits.
        #[test]
        fn accepted_paths_are_storable(s in "(/|\\.|\\.git|git~1|GIT~1| |:|\n|\t|\u{7f}|a|\u{e9}){0,16}") {
            if let Ok(p) = MemPath::parse(&s) {
                prop_assert!(p.components().count() <= MAX_DEPTH);
                prop_assert!(p.as_str().len() <= MAX_PATH_BYTES);
                for c in p.components() {
                    prop_assert!(!c.chars().any(char::is_control), "{c:?}");
                    prop_assert!(!is_git_alias(c), "{c:?}");
                }
            }
        }

        #[test]
        fn parse_is_idempotent(s in "[a-z./%]{0,20}") {
            if let Ok(p) = MemPath::parse(&s) {
                prop_assert_eq!(MemPath::parse(p.as_str()).unwrap(), p);
            }
        }
    }
}
