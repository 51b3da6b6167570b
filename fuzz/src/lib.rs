//! What the engine-level fuzz targets share: a fresh memory folder inside a fenced temp
//! directory, and the checks every write to it must pass.
#![forbid(unsafe_code)]
#![cfg(feature = "engine")]

use memdir::{Clock, Memory};
use memdir_core::path::MemPath;
use std::path::{Path, PathBuf};

/// A memory folder at `<tmp>/root`, next to an empty `<tmp>/outside` that must stay empty.
pub struct Fenced {
    /// The temp dir holding both.
    pub dir: tempfile::TempDir,
    /// The memory.
    pub mem: Memory,
}

/// The fixed time every target runs at.
pub fn clock() -> Clock {
    let at: jiff::Timestamp = "2026-11-30T09:00:00Z"
        .parse()
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    Clock::fixed(at, jiff::tz::TimeZone::UTC)
}

impl Fenced {
    /// A new memory without git (git's own files are not what is fuzzed, and it is slow).
    pub fn new() -> Fenced {
        // In memory where there is a tmpfs: the store fsyncs every write, which on a disk
        // makes these targets a hundred times slower and measures the disk, not memdir.
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        };
        let dir = dir.expect("temp dir");
        std::fs::create_dir(dir.path().join("outside")).expect("outside");
        let mem = Memory::init_with(&dir.path().join("root"), clock(), false).expect("init");
        Fenced { dir, mem }
    }

    /// The memory root.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// Checks that nothing was written outside the root (the temp dir holds only `root` and
    /// the empty `outside`, and nothing under the root is a link out) and returns every file
    /// below the root as (path relative to the root, bytes), `.memdir/` left out.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut top: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("list temp dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        top.sort();
        assert_eq!(
            top,
            ["outside", "root"],
            "something was written beside the root"
        );
        assert!(
            std::fs::read_dir(self.dir.path().join("outside"))
                .expect("outside")
                .next()
                .is_none(),
            "something was written outside the root"
        );
        let mut out = Vec::new();
        walk(&self.root(), &self.root(), &mut out);
        out
    }
}

impl Default for Fenced {
    fn default() -> Self {
        Fenced::new()
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).expect("list") {
        let e = e.expect("entry");
        let ty = e.file_type().expect("type");
        let path = e.path();
        let rel = path
            .strip_prefix(root)
            .expect("below root")
            .to_str()
            .expect("memdir writes UTF-8 names")
            .to_string();
        assert!(!ty.is_symlink(), "memdir made a link: {rel:?}");
        if rel == ".memdir" {
            continue;
        }
        assert!(
            MemPath::parse(&rel).is_ok_and(|p| p.as_str() == rel),
            "memdir wrote a path it would refuse: {rel:?}"
        );
        if ty.is_dir() {
            walk(root, &path, out);
        } else {
            out.push((rel, std::fs::read(&path).expect("read")));
        }
    }
}

/// The control characters a memory file may hold: none but newline and tab.
pub fn control_char(text: &str) -> Option<char> {
    text.chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
}

/// The import checks of `import_chatgpt` and `import_claude`.
pub fn check_chat_import(format: memdir::import::ChatFormat, data: &[u8]) {
    use memdir::import::ImportSource;
    use memdir_core::log::{date_of_file_name, parse_entries};
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    let f = Fenced::new();
    let before = f.files();
    let report = match f.mem.import(
        ImportSource::Chats { format, json },
        "conversations.json",
        false,
    ) {
        Err(e) => {
            let msg = e.to_string();
            assert!(
                !msg.is_empty() && !msg.contains('\n'),
                "one-line error: {msg:?}"
            );
            assert_eq!(f.files(), before, "a refused import wrote something");
            return;
        }
        Ok(r) => r,
    };
    let after = f.files();
    let base: usize = before.iter().map(|(_, b)| b.len()).sum();
    let total: usize = after.iter().map(|(_, b)| b.len()).sum();
    // A conversation's note is a few hundred bytes of its own; the rest is the export's text.
    let bound = base + 4 * json.len() + 1024 * (report.conversations + 1);
    assert!(
        total <= bound,
        "wrote {total} bytes from {} bytes of export ({} conversations)",
        json.len(),
        report.conversations
    );
    for (path, bytes) in &after {
        let text = std::str::from_utf8(bytes).expect("memdir writes UTF-8");
        assert!(
            control_char(text).is_none(),
            "{path}: control character {:?} stored",
            control_char(text)
        );
        if let Some(name) = path.strip_prefix("log/") {
            assert!(
                date_of_file_name(name).is_some(),
                "log {path:?} does not name its day"
            );
            for e in parse_entries(text) {
                assert!(
                    e.time.is_some(),
                    "{path}: an entry without its time: {:?}",
                    e.text
                );
                assert_eq!(
                    e.text.lines().count(),
                    1,
                    "{path}: a turn spans lines: {:?}",
                    e.text
                );
            }
        }
    }
    let again = f
        .mem
        .import(
            ImportSource::Chats { format, json },
            "conversations.json",
            false,
        )
        .expect("a second import of the same export works");
    assert_eq!(again.entries_added, 0, "re-running added entries");
    assert_eq!(f.files(), after, "re-running changed files");
}
