//! `memdir mcp` over stdio, spoken to with raw JSON-RPC lines: the child gets a clean
//! environment (the fixture's root, the fixed time, UTC, the fixture's home).

use super::Fixture;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

/// A running `memdir mcp`; killed when dropped.
pub struct Rpc {
    child: Child,
    out: BufReader<ChildStdout>,
    id: u64,
}

impl Rpc {
    /// Starts `memdir mcp` on the fixture's memory, without the MCP handshake.
    pub fn start(f: &Fixture) -> Rpc {
        let mut child = Command::new(super::bin())
            .arg("mcp")
            .env_clear()
            .env("MEMDIR_ROOT", f.root())
            .env("MEMDIR_NOW", super::NOW)
            .env("TZ", "UTC")
            .env("HOME", f.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Rpc { child, out, id: 0 }
    }

    /// Starts it and does the handshake (`initialize`, then `notifications/initialized`).
    pub fn initialized(f: &Fixture, client: &str) -> Rpc {
        let mut rpc = Rpc::start(f);
        rpc.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": client, "version": "0"}}),
        );
        rpc.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rpc
    }

    /// Writes one message as one line.
    pub fn send(&mut self, msg: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads one line of stdout as JSON-RPC.
    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON-RPC: {e}: {line:?}"))
    }

    /// Sends a request with the next id and reads its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.recv()
    }

    /// Calls a tool; returns its text and whether it was an error.
    pub fn call(&mut self, name: &str, args: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (text, r["result"]["isError"] == true)
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
