//! Shared helpers for tests that run the real `memdir` binary in a temp folder.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod mcp;
pub mod serve;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The fixed instant every test runs at unless it says otherwise.
pub const NOW: &str = "2026-11-30T09:15:00Z";

/// A fresh memory folder in a temp dir.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    /// An empty temp dir (no `init` yet).
    pub fn empty() -> Fixture {
        Fixture {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A temp dir after `memdir init`.
    pub fn new() -> Fixture {
        let f = Fixture::empty();
        f.cmd().arg("init").assert().success();
        f
    }

    /// A temp dir after `memdir init --no-git`, for tests about the files alone.
    pub fn new_no_git() -> Fixture {
        let f = Fixture::empty();
        f.cmd().args(["init", "--no-git"]).assert().success();
        f
    }

    /// The memory root.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("mem")
    }

    /// `memdir` with a clean environment, the root, UTC and the fixed clock.
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("memdir").unwrap();
        c.env_clear()
            .env("MEMDIR_ROOT", self.root())
            .env("MEMDIR_NOW", NOW)
            .env("TZ", "UTC")
            .env("HOME", self.dir.path());
        c
    }

    /// Writes a file under the root directly, as a person with an editor would.
    pub fn put(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// Reads a file under the root directly.
    pub fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    /// True if a path exists under the root.
    pub fn exists(&self, rel: &str) -> bool {
        self.root().join(rel).exists()
    }

    /// Runs memdir with `args`, reads the first `n` bytes of its output, closes the pipe, and
    /// returns those bytes with how the program ended (its stderr; stdout is closed).
    pub fn read_then_close(&self, args: &[&str], n: usize) -> (Vec<u8>, std::process::Output) {
        use std::io::Read;
        use std::process::Stdio;
        let mut child = std::process::Command::new(bin())
            .env_clear()
            .env("MEMDIR_ROOT", self.root())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut buf = vec![0u8; n];
        out.read_exact(&mut buf).unwrap();
        drop(out);
        (buf, child.wait_with_output().unwrap())
    }
}

/// stdout of a finished command as text.
pub fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

/// stderr of a finished command as text.
pub fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

/// The `memdir` binary's path, for tests that spawn it themselves.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("memdir")
}

/// True if `p` is inside `root`.
pub fn inside(p: &Path, root: &Path) -> bool {
    p.starts_with(root)
}

/// Runs git in the memory folder and returns its stdout; panics when git fails.
pub fn git(f: &Fixture, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(f.root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs git in any folder; panics when git fails.
pub fn git_in(dir: &Path, args: &[&str]) {
    let st = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?} failed");
}
