//! A running `memdir serve` with the person's page, for the page's HTTP and browser tests.

use super::Fixture;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running `memdir serve` with its page, killed when dropped.
pub struct Serve {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The sign-in link it printed on start.
    pub link: String,
}

impl Serve {
    /// `memdir serve --listen 127.0.0.1:0` on `f`'s memory, with `envs` added.
    pub fn start(f: &Fixture, envs: &[(&str, &str)]) -> Serve {
        let mut cmd = Command::new(super::bin());
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("MEMDIR_ROOT", f.root())
            .env("MEMDIR_NOW", super::NOW)
            .env("TZ", "UTC")
            .env("HOME", f.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let link = loop {
            line.clear();
            assert!(
                err.read_line(&mut line).unwrap() > 0,
                "memdir serve exited before it printed a sign-in link"
            );
            if let Some(rest) = line.split("sign in at ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_string();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        let base = link.split("/ui/").next().unwrap().to_string();
        Serve { child, base, link }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
