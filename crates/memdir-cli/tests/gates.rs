//! Gates on irreversible actions (issue #17), on the real binary: the policy, requests, caps
//! across processes, a person's approval at a real terminal (a pty), single-use tokens, the
//! hash-chained ledger, and the policy's protection from every agent tool.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Fixture, NOW, bin, stderr, stdout};
use serde_json::Value;
use std::process::{Command, Output, Stdio};

const POLICY: &str = "\
# what the payment agent may do
[payment]
targets = [\"acme-*\", \"landlord\"]
max_amount = 100
daily_amount = 150
daily_count = 20
approval_above = 50
approval_ttl = \"24h\"
";

fn fixture(policy: &str) -> Fixture {
    let f = Fixture::new();
    f.put("gates.toml", policy);
    f
}

/// `memdir gate request ... --json` with `env`; returns the JSON answer and the exit code.
fn request(
    f: &Fixture,
    env: &[(&str, &str)],
    kind: &str,
    target: &str,
    amount: Option<&str>,
) -> (Value, i32) {
    let mut c = f.cmd();
    c.args([
        "gate", "request", kind, "--target", target, "--reason", "test", "--json",
    ]);
    if let Some(a) = amount {
        c.args(["--amount", a]);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out.status.code().unwrap())
}

fn check(
    f: &Fixture,
    env: &[(&str, &str)],
    token: &str,
    kind: &str,
    target: &str,
    amount: Option<&str>,
) -> Output {
    let mut c = f.cmd();
    c.args(["gate", "check", token, "--kind", kind, "--target", target]);
    if let Some(a) = amount {
        c.args(["--amount", a]);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The ledger's lines, in order, as JSON.
fn ledger(f: &Fixture) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(f.root().join("gates/ledger"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>()
        })
        .collect()
}

/// Runs memdir with stdin on a real terminal (a pty), as a person typing would.
fn on_terminal(f: &Fixture, env: &[(&str, &str)], args: &[&str]) -> Output {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let mut c = Command::new(bin());
    c.env_clear()
        .env("MEMDIR_ROOT", f.root())
        .env("MEMDIR_NOW", NOW)
        .env("TZ", "UTC")
        .env("HOME", f.dir.path())
        .args(args)
        .stdin(Stdio::from(slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    drop(master);
    out
}

/// Every file under the root but `.git/` and `.memdir/`, with its content.
fn tree(f: &Fixture) -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".git" || rel == ".memdir" {
                continue;
            }
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&f.root(), &f.root(), &mut out);
    out.sort();
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn whitelist_miss_and_unknown_kind_are_denied_with_their_rule() {
    let f = fixture(POLICY);
    let (v, code) = request(&f, &[], "payment", "mallory", Some("10"));
    assert_eq!(code, 2);
    assert_eq!(v["decision"], "denied");
    assert!(
        v["rule"]
            .as_str()
            .unwrap()
            .starts_with("targets: \"mallory\" is not on the payment whitelist"),
        "{v}"
    );
    assert_eq!(
        v.as_object().unwrap().len(),
        2,
        "exactly decision and rule: {v}"
    );
    let (v, _) = request(&f, &[], "payment", "acme-power", Some("10"));
    assert_eq!(v["decision"], "allowed", "a glob matches: {v}");
    let (v, code) = request(&f, &[], "wire", "landlord", Some("10"));
    assert_eq!((v["decision"].as_str(), code), (Some("denied"), 2));
    assert!(
        v["rule"].as_str().unwrap().contains("no [wire] table"),
        "{v}"
    );
    let l = ledger(&f);
    assert_eq!(l.len(), 3);
    assert_eq!(l[0]["decision"], "denied");
    assert_eq!(l[0]["writer"], "main");
    assert_eq!(l[0]["source"], "user");
    assert_eq!(l[0]["reason"], "test");
    assert_eq!(l[0]["time"], NOW);
    assert!(l[1]["token_sha256"].as_str().unwrap().len() == 64);
    // The human form says the same in words.
    let a = f
        .cmd()
        .args([
            "gate", "request", "payment", "--target", "mallory", "--amount", "1", "--reason", "x",
        ])
        .assert()
        .code(2);
    assert!(
        stdout(&a).starts_with("denied by rule targets:"),
        "{}",
        stdout(&a)
    );
}

#[test]
fn a_policy_error_denies_everything_and_names_its_line() {
    let f = fixture("[payment]\ntargets = [\"landlord\"]\nmax_amount = \"lots\"\n");
    let (v, code) = request(&f, &[], "payment", "landlord", Some("1"));
    assert_eq!(code, 2);
    let rule = v["rule"].as_str().unwrap();
    assert!(
        rule.starts_with("policy: gates.toml line 3: [payment] max_amount must be a number"),
        "{rule}"
    );
    let f = Fixture::new();
    let (v, _) = request(&f, &[], "payment", "landlord", Some("1"));
    assert!(v["rule"].as_str().unwrap().contains("no gates.toml"), "{v}");
}

#[test]
fn daily_cap_holds_after_a_restart_and_across_concurrent_processes() {
    let f = fixture("[payment]\ntargets = [\"landlord\"]\nmax_amount = 100\ndaily_amount = 150\n");
    let (v, _) = request(&f, &[], "payment", "landlord", Some("100"));
    assert_eq!(v["decision"], "allowed");
    // Each call is a new process: the cap comes from the ledger, not from memory.
    let (v, code) = request(&f, &[], "payment", "landlord", Some("60"));
    assert_eq!((v["decision"].as_str(), code), (Some("denied"), 2), "{v}");
    assert!(
        v["rule"]
            .as_str()
            .unwrap()
            .starts_with("daily_amount: 100 of the payment limit of 150"),
        "{v}"
    );
    let (v, _) = request(&f, &[], "payment", "landlord", Some("150.01"));
    assert!(
        v["rule"].as_str().unwrap().starts_with("max_amount:"),
        "{v}"
    );
    // The next local day starts afresh.
    let (v, _) = request(
        &f,
        &[("MEMDIR_NOW", "2026-12-01T00:00:01Z")],
        "payment",
        "landlord",
        Some("100"),
    );
    assert_eq!(v["decision"], "allowed", "{v}");

    // Ten processes at once ask for 40 under a cap of 150: exactly three pass.
    let f = fixture("[payment]\ntargets = [\"landlord\"]\ndaily_amount = 150\n");
    let root = f.root();
    let workers: Vec<_> = (0..10)
        .map(|_| {
            let root = root.clone();
            std::thread::spawn(move || {
                let out = Command::new(bin())
                    .env_clear()
                    .env("MEMDIR_ROOT", &root)
                    .env("MEMDIR_NOW", NOW)
                    .env("TZ", "UTC")
                    .args([
                        "gate", "request", "payment", "--target", "landlord", "--amount", "40",
                        "--reason", "race", "--json",
                    ])
                    .output()
                    .unwrap();
                serde_json::from_slice::<Value>(&out.stdout).unwrap()["decision"] == "allowed"
            })
        })
        .collect();
    let allowed = workers
        .into_iter()
        .map(|w| w.join().unwrap())
        .filter(|ok| *ok)
        .count();
    assert_eq!(allowed, 3);
    assert_eq!(ledger(&f).len(), 10);
    f.cmd().args(["gate", "verify"]).assert().success();
}

#[test]
fn approval_flow_end_to_end_only_a_person_at_a_terminal_approves() {
    let f = fixture(POLICY);
    let (v, code) = request(
        &f,
        &[("MEMDIR_SOURCE", "agent"), ("MEMDIR_WRITER", "payer")],
        "payment",
        "landlord",
        Some("80"),
    );
    assert_eq!(code, 0);
    assert_eq!(v["decision"], "pending");
    assert_eq!(
        v.as_object().unwrap().len(),
        2,
        "exactly decision and id: {v}"
    );
    let id = v["id"].as_str().unwrap().to_string();
    let status = |f: &Fixture| -> Value {
        serde_json::from_slice(
            &f.cmd()
                .args(["gate", "status", &id, "--json"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
    };
    assert_eq!(
        status(&f),
        serde_json::json!({"decision": "pending", "id": id})
    );
    let ctx = stdout(&f.cmd().arg("context").assert().success());
    let line = ctx
        .lines()
        .find(|l| l.starts_with("Gates: 1 request(s) wait"))
        .unwrap_or_else(|| panic!("{ctx}"));
    assert!(
        line.contains(&format!("{id} payment to landlord (80)")),
        "{line}"
    );
    let pending = stdout(&f.cmd().args(["gate", "pending"]).assert().success());
    assert!(
        pending.starts_with(&format!("{id}  payment to landlord (80)  by payer")),
        "{pending}"
    );

    // The agent tries to approve its own request: no terminal; from a terminal but as the agent;
    // through `memdir tool` (there is no approving tool). All refused, all recorded.
    let a = f.cmd().args(["gate", "approve", &id]).assert().code(2);
    assert!(
        stderr(&a).contains("only a person at a terminal may approve"),
        "{}",
        stderr(&a)
    );
    let o = on_terminal(&f, &[("MEMDIR_SOURCE", "agent")], &["gate", "approve", &id]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = on_terminal(&f, &[], &["--source", "agent", "gate", "approve", &id]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let a = f
        .cmd()
        .args(["tool", "gate_approve"])
        .write_stdin(format!("{{\"id\": \"{id}\"}}"))
        .assert()
        .code(2);
    assert!(stderr(&a).contains("unknown tool"), "{}", stderr(&a));
    let refused: Vec<Value> = ledger(&f)
        .into_iter()
        .filter(|e| e["event"] == "refused")
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(
        refused
            .iter()
            .all(|e| e["id"] == id.as_str() && e["rule"].as_str().unwrap().starts_with("approve:"))
    );
    assert_eq!(refused[1]["source"], "agent");
    assert_eq!(status(&f)["decision"], "pending");
    let (v, _) = request(&f, &[], "payment", "landlord", Some("80"));
    assert_eq!(
        v["decision"], "denied",
        "80 pending + 80 is over the daily 150: {v}"
    );

    // The person approves at a terminal; the requester fetches the token; the executor checks it.
    let o = on_terminal(&f, &[], &["gate", "approve", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).starts_with(&format!("approved {id}")),
        "{}",
        text(&o)
    );
    let s = status(&f);
    assert_eq!(s["decision"], "allowed", "{s}");
    let token = s["token"].as_str().unwrap().to_string();
    assert!(token.starts_with(&format!("gt_{id}_")));
    assert!(
        !f.cmd()
            .arg("context")
            .output()
            .unwrap()
            .stdout
            .windows(6)
            .any(|w| w == b"Gates:")
    );
    let o = check(&f, &[], &token, "payment", "landlord", Some("80"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = check(&f, &[], &token, "payment", "landlord", Some("80"));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("already used"), "{}", text(&o));
    assert!(status(&f)["rule"].as_str().unwrap().starts_with("used:"));
    // No token is ever written to the ledger, only its hash.
    let raw = std::fs::read_to_string(f.root().join("gates/ledger/2026-11-30.jsonl")).unwrap();
    assert!(!raw.contains(&token));
    f.cmd().args(["gate", "verify"]).assert().success();
}

#[test]
fn a_person_can_deny_and_the_reservation_is_released() {
    let f = fixture(POLICY);
    let (v, _) = request(&f, &[], "payment", "landlord", Some("90"));
    let id = v["id"].as_str().unwrap().to_string();
    let (v, _) = request(&f, &[], "payment", "landlord", Some("90"));
    assert_eq!(v["decision"], "denied");
    let o = on_terminal(
        &f,
        &[],
        &["gate", "deny", &id, "--reason", "not this month"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s: Value = serde_json::from_slice(
        &f.cmd()
            .args(["gate", "status", &id, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        s["rule"].as_str().unwrap().contains("not this month"),
        "{s}"
    );
    let (v, _) = request(&f, &[], "payment", "landlord", Some("90"));
    assert_eq!(v["decision"], "pending", "{v}");
}

#[test]
fn tokens_are_refused_when_reused_altered_foreign_expired_or_for_anything_else() {
    let f = fixture(POLICY);
    let (v, code) = request(&f, &[], "payment", "acme-rent", Some("40"));
    assert_eq!(code, 0);
    assert_eq!(
        v.as_object().unwrap().len(),
        2,
        "exactly decision and token: {v}"
    );
    let token = v["token"].as_str().unwrap().to_string();
    let refused = |o: Output, has: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(has), "{has}: {}", text(&o));
    };
    refused(
        check(&f, &[], &token, "payment", "acme-other", Some("40")),
        "mismatch: this token is for payment to acme-rent of 40",
    );
    refused(
        check(&f, &[], &token, "payment", "acme-rent", Some("40.01")),
        "mismatch",
    );
    refused(
        check(&f, &[], &token, "payment", "acme-rent", None),
        "mismatch",
    );
    refused(
        check(&f, &[], &token, "deploy", "acme-rent", Some("40")),
        "mismatch",
    );
    let mut altered = token.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == '0' { '1' } else { '0' });
    refused(
        check(&f, &[], &altered, "payment", "acme-rent", Some("40")),
        "altered or foreign",
    );
    refused(
        check(
            &f,
            &[],
            "gt_20261130-0badc0de_00",
            "payment",
            "acme-rent",
            Some("40"),
        ),
        "not a token memdir issued",
    );
    refused(
        check(
            &f,
            &[],
            &format!("gt_20261130-0badc0de_{}", "0".repeat(64)),
            "payment",
            "acme-rent",
            Some("40"),
        ),
        "not a token memdir issued",
    );
    // Expired: the policy's approval_ttl (24h) also bounds a token given at once.
    refused(
        check(
            &f,
            &[("MEMDIR_NOW", "2026-12-01T09:15:00Z")],
            &token,
            "payment",
            "acme-rent",
            Some("40"),
        ),
        "expired",
    );
    let o = check(&f, &[], &token, "payment", "acme-rent", Some("40"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    refused(
        check(&f, &[], &token, "payment", "acme-rent", Some("40")),
        "already used",
    );
    let l = ledger(&f);
    assert_eq!(l.iter().filter(|e| e["event"] == "use").count(), 1);
    assert_eq!(l.iter().filter(|e| e["event"] == "refused").count(), 9);

    // An approval expires after approval_ttl.
    let (v, _) = request(&f, &[], "payment", "landlord", Some("60"));
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(
        on_terminal(&f, &[], &["gate", "approve", &id])
            .status
            .code(),
        Some(0)
    );
    let s: Value = serde_json::from_slice(
        &f.cmd()
            .args(["gate", "status", &id, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let token = s["token"].as_str().unwrap();
    refused(
        check(
            &f,
            &[("MEMDIR_NOW", "2026-12-01T09:15:01Z")],
            token,
            "payment",
            "landlord",
            Some("60"),
        ),
        "expired",
    );
    assert_eq!(
        check(
            &f,
            &[("MEMDIR_NOW", "2026-12-01T09:14:00Z")],
            token,
            "payment",
            "landlord",
            Some("60")
        )
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn two_concurrent_checks_of_one_token_exactly_one_wins() {
    for _ in 0..3 {
        let f = fixture(POLICY);
        let (v, _) = request(&f, &[], "payment", "landlord", Some("10"));
        let token = v["token"].as_str().unwrap().to_string();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let workers: Vec<_> = (0..6)
            .map(|_| {
                let (root, token, barrier) = (f.root(), token.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut c = Command::new(bin());
                    c.env_clear()
                        .env("MEMDIR_ROOT", &root)
                        .env("MEMDIR_NOW", NOW)
                        .env("TZ", "UTC")
                        .env("HOME", root.parent().unwrap())
                        .args([
                            "gate", "check", &token, "--kind", "payment", "--target", "landlord",
                            "--amount", "10",
                        ]);
                    barrier.wait();
                    c.output().unwrap().status.code()
                })
            })
            .collect();
        let codes: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(
            codes.iter().filter(|c| **c == Some(0)).count(),
            1,
            "{codes:?}"
        );
        assert_eq!(
            codes.iter().filter(|c| **c == Some(2)).count(),
            5,
            "{codes:?}"
        );
        f.cmd().args(["gate", "verify"]).assert().success();
    }
}

/// Three requests in a ledger, then one kind of tampering.
fn tampered(edit: impl Fn(&mut Vec<String>)) -> (Fixture, String) {
    let f = fixture(POLICY);
    for t in ["landlord", "acme-a", "acme-b"] {
        request(&f, &[], "payment", t, Some("10"));
    }
    f.cmd().args(["gate", "verify"]).assert().success();
    let path = "gates/ledger/2026-11-30.jsonl";
    let mut lines: Vec<String> = f.get(path).lines().map(str::to_string).collect();
    edit(&mut lines);
    f.put(
        path,
        &lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    );
    let a = f.cmd().args(["gate", "verify"]).assert().code(2);
    (f, stderr(&a))
}

/// Issue 37, item 2: deleting `.memdir/gates-head` turned the end check off, so cutting the
/// last entries (or the whole ledger) with the head passed `gate verify`; and an unkeyed chain
/// could be rewritten whole. Now a ledger without its head is not intact, the head is sealed
/// with a key kept outside the folder (the user's state folder), and the head memdir last wrote
/// is remembered there too.
#[test]
fn verify_finds_a_deleted_or_forged_head_and_a_chain_rewritten_without_the_key() {
    use memdir_core::gates::{GENESIS, LedgerEntry};
    let path = "gates/ledger/2026-11-30.jsonl";
    let head = ".memdir/gates-head";
    let fresh = || {
        let f = fixture(POLICY);
        for t in ["landlord", "acme-a", "acme-b"] {
            request(&f, &[], "payment", t, Some("10"));
        }
        f.cmd().args(["gate", "verify"]).assert().success();
        f
    };
    let verify = |f: &Fixture| stderr(&f.cmd().args(["gate", "verify"]).assert().code(2));
    let lines = |f: &Fixture| -> Vec<String> { f.get(path).lines().map(str::to_string).collect() };
    let write = |f: &Fixture, ls: &[String]| {
        f.put(
            path,
            &ls.iter().map(|l| format!("{l}\n")).collect::<String>(),
        );
    };

    // The head deleted.
    let f = fresh();
    std::fs::remove_file(f.root().join(head)).unwrap();
    let e = verify(&f);
    assert!(
        e.contains("its head (.memdir/gates-head) is missing"),
        "{e}"
    );

    // The last entry cut and the head deleted with it.
    let f = fresh();
    let mut ls = lines(&f);
    ls.pop();
    write(&f, &ls);
    std::fs::remove_file(f.root().join(head)).unwrap();
    let e = verify(&f);
    assert!(e.contains("entries were removed"), "{e}");

    // The whole ledger and its head deleted.
    let f = fresh();
    std::fs::remove_dir_all(f.root().join("gates/ledger")).unwrap();
    std::fs::remove_file(f.root().join(head)).unwrap();
    let e = verify(&f);
    assert!(e.contains("ends at entry 0 but memdir wrote 3"), "{e}");
    // ... and the caps do not reset: every action is denied until it is restored.
    let (v, _) = request(&f, &[], "payment", "landlord", Some("1"));
    assert!(
        v["rule"]
            .as_str()
            .unwrap()
            .starts_with("ledger: the ledger is not intact"),
        "{v}"
    );

    // The last entry cut and the head rewritten to match it (a hash anyone can compute).
    let f = fresh();
    let mut ls = lines(&f);
    ls.pop();
    write(&f, &ls);
    let second = LedgerEntry::open(&ls[1]).unwrap();
    f.put(head, &format!("2 {}\n", second.hash));
    let e = verify(&f);
    assert!(e.contains("the head's seal does not match"), "{e}");

    // The chain rewritten consistently (an amount lowered, every hash recomputed, the head
    // rewritten to its end) by a writer of the folder without the key, who also removed what
    // is remembered outside it: the seal gives it away.
    let f = fresh();
    let mut prev = GENESIS.to_string();
    let mut forged = Vec::new();
    for l in lines(&f) {
        let mut e = LedgerEntry::open(&l).unwrap();
        if e.amount.is_some() {
            e.amount = Some("1".into());
        }
        e.prev = prev;
        forged.push(e.seal().trim_end().to_string());
        prev = e.hash.clone();
    }
    write(&f, &forged);
    let sealed = f.get(head);
    let fake_seal = "0".repeat(64);
    f.put(head, &format!("3 {prev} {fake_seal}\n"));
    let state = f.dir.path().join(".local/state/memdir/gates");
    for d in std::fs::read_dir(&state).unwrap() {
        std::fs::remove_file(d.unwrap().path().join("head")).unwrap();
    }
    let e = verify(&f);
    assert!(e.contains("the head's seal does not match"), "{e}");
    // Without the seal at all, likewise.
    f.put(head, &format!("3 {prev}\n"));
    let e = verify(&f);
    assert!(e.contains("the head's seal does not match"), "{e}");
    assert_ne!(sealed, f.get(head));
}

#[test]
fn verify_finds_an_edited_removed_or_reordered_line_and_says_where() {
    let (_, e) = tampered(|l| l[1] = l[1].replacen("\"amount\":\"10\"", "\"amount\":\"1\"", 1));
    assert!(
        e.contains("gates/ledger/2026-11-30.jsonl line 2: the line was edited"),
        "{e}"
    );
    let (_, e) = tampered(|l| {
        l.remove(0);
    });
    assert!(e.contains("line 1: entry 2 follows entry 0"), "{e}");
    let (_, e) = tampered(|l| l.swap(1, 2));
    assert!(e.contains("line 2: entry 3 follows entry 1"), "{e}");
    let (f, e) = tampered(|l| {
        l.pop();
    });
    assert!(e.contains("entries were removed from the end"), "{e}");
    // A broken ledger denies everything until it is restored.
    let (v, _) = request(&f, &[], "payment", "landlord", Some("1"));
    assert!(
        v["rule"]
            .as_str()
            .unwrap()
            .starts_with("ledger: the ledger is not intact"),
        "{v}"
    );
    let ctx = stdout(&f.cmd().arg("context").assert().success());
    assert!(ctx.contains("Gates: the ledger is not intact"), "{ctx}");
}

#[test]
fn no_agent_tool_and_no_agent_source_can_touch_the_policy_or_the_ledger() {
    let f = fixture(POLICY);
    request(&f, &[], "payment", "landlord", Some("10"));
    f.put("notes/evil.md", "[payment]\ntargets = [\"*\"]\n");
    let ledger_file = "gates/ledger/2026-11-30.jsonl";
    let before = (f.get("gates.toml"), f.get(ledger_file));
    let spellings = [
        "gates.toml",
        "/gates.toml",
        "./gates.toml",
        "/memories/gates.toml",
        "GATES.TOML",
        "Gates.toml",
        "gates.toml.",
        "gates/x.md",
        "/memories/gates/ledger/2026-11-30.jsonl",
        "Gates/ledger/2026-11-30.jsonl",
    ];
    let mut calls: Vec<(String, Value)> = Vec::new();
    for p in spellings {
        let m = if p.starts_with("/memories") {
            p.to_string()
        } else {
            format!(
                "/memories/{}",
                p.trim_start_matches("./").trim_start_matches('/')
            )
        };
        calls.push((
            "memory_write".into(),
            serde_json::json!({"path": p, "content": "[payment]\ntargets = [\"*\"]\n"}),
        ));
        calls.push((
            "memory_edit".into(),
            serde_json::json!({"path": p, "old": "landlord", "new": "*"}),
        ));
        calls.push((
            "memory".into(),
            serde_json::json!({"command": "create", "path": m, "file_text": "x"}),
        ));
        calls.push(("memory".into(), serde_json::json!({"command": "str_replace", "path": m, "old_str": "landlord", "new_str": "*"})));
        calls.push(("memory".into(), serde_json::json!({"command": "insert", "path": m, "insert_line": 0, "insert_text": "[x]\n"})));
        calls.push((
            "memory".into(),
            serde_json::json!({"command": "delete", "path": m}),
        ));
        calls.push(("memory".into(), serde_json::json!({"command": "rename", "old_path": m, "new_path": "/memories/notes/moved"})));
        calls.push(("memory".into(), serde_json::json!({"command": "rename", "old_path": "/memories/notes/evil.md", "new_path": m})));
    }
    for p in ["gates", "/memories/gates", "GATES"] {
        calls.push((
            "memory".into(),
            serde_json::json!({"command": "delete", "path": p}),
        ));
    }
    // MEMDIR_SOURCE=user does not make an agent surface trusted. Every call is an error
    // result, and nothing in the folder changes (no new file under another spelling either).
    let before_tree = tree(&f);
    for source in ["agent", "user"] {
        for (tool, input) in &calls {
            let a = f
                .cmd()
                .env("MEMDIR_SOURCE", source)
                .args(["tool", tool])
                .write_stdin(input.to_string())
                .assert()
                .code(1);
            let out = stdout(&a);
            if tool == "memory_write" {
                assert!(
                    out.contains("gates.toml is the action gates' policy")
                        || out.contains("gates/ holds the gates' append-only ledger"),
                    "{tool} {input}: {out}"
                );
            }
            assert_eq!(tree(&f), before_tree, "{tool} {input}: {out}");
        }
    }
    // The CLI with a non-user source: write, edit, rm, mv.
    for p in ["gates.toml", "./GATES.toml", "/memories/gates.toml"] {
        for args in [
            vec!["write", p, "x"],
            vec!["edit", p, "--old", "landlord", "--new", "*"],
            vec!["rm", p],
            vec!["mv", p, "notes/p.toml"],
            vec!["mv", "notes/evil.md", p],
        ] {
            let a = f
                .cmd()
                .args(["--source", "agent"])
                .args(&args)
                .assert()
                .code(2);
            assert!(
                stderr(&a).contains("only the user may change it"),
                "{args:?}: {}",
                stderr(&a)
            );
        }
    }
    // The ledger is written by `memdir gate` alone, whoever asks.
    for args in [
        vec!["write", ledger_file, "x"],
        vec!["rm", "-r", "gates"],
        vec!["mv", "gates", "old-gates"],
    ] {
        let a = f.cmd().args(&args).assert().code(2);
        assert!(
            stderr(&a).contains("append-only ledger"),
            "{args:?}: {}",
            stderr(&a)
        );
    }
    assert_eq!((f.get("gates.toml"), f.get(ledger_file)), before);
    assert!(f.exists("notes/evil.md"));
    // The user at the CLI may still change the policy.
    f.cmd()
        .args([
            "write",
            "gates.toml",
            "[payment]\ntargets = [\"landlord\"]\n",
        ])
        .assert()
        .success();
}

#[test]
fn the_gate_request_tool_answers_like_the_cli_and_records_the_agent() {
    let f = fixture(POLICY);
    let a = f
        .cmd()
        .env("MEMDIR_WRITER", "payer")
        .args(["tool", "gate_request"])
        .write_stdin(r#"{"kind": "payment", "target": "landlord", "amount": 40, "reason": "rent"}"#)
        .assert()
        .success();
    let out = stdout(&a);
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["decision"], "allowed", "{out}");
    let token = v["token"].as_str().unwrap();
    let a = f
        .cmd()
        .args(["tool", "gate_request"])
        .write_stdin(r#"{"kind": "payment", "target": "mallory", "amount": "1", "reason": "x"}"#)
        .assert()
        .code(1);
    assert!(stdout(&a).contains("\"rule\":\"targets:"), "{}", stdout(&a));
    let a = f
        .cmd()
        .args(["tool", "gate_request"])
        .write_stdin(
            r#"{"kind": "payment", "target": "landlord", "amount": 60, "reason": "deposit"}"#,
        )
        .assert()
        .success();
    let id = serde_json::from_str::<Value>(stdout(&a).lines().next().unwrap()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let a = f
        .cmd()
        .args(["tool", "gate_status"])
        .write_stdin(format!("{{\"id\": \"{id}\"}}"))
        .assert()
        .success();
    assert!(
        stdout(&a).starts_with("{\"decision\":\"pending\""),
        "{}",
        stdout(&a)
    );
    let l = ledger(&f);
    assert_eq!(
        (l[0]["source"].as_str(), l[0]["writer"].as_str()),
        (Some("agent"), Some("payer"))
    );
    assert_eq!(
        check(&f, &[], token, "payment", "landlord", Some("40"))
            .status
            .code(),
        Some(0)
    );
}
