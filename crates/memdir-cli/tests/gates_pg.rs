//! The gate ledger on a PostgreSQL store (issue 37, item 2, for the service): its key and the
//! head memdir last wrote live in the database's `memdir.gate_keys`, outside the tenant's files,
//! so whoever rewrites the tenant's `files` and `meta` rows alone cannot forge a ledger that
//! `gate verify` accepts. One tenant per tamper variant; each is found.
//! Skipped with a message when no PostgreSQL server runs (`MEMDIR_REQUIRE_PG=1` fails instead).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use assert_cmd::Command;
use memdir::{Precondition, Store};
use memdir_core::gates::{GENESIS, LedgerEntry};
use memdir_core::path::MemPath;
use memdir_store_pg::{PgStore, pg_or_skip};

const POLICY: &str = "[payment]\ntargets = [\"acme-*\", \"landlord\"]\nmax_amount = 100\n";
const LEDGER: &str = "gates/ledger/2026-11-30.jsonl";

fn memdir(store: &str, home: &std::path::Path) -> Command {
    let mut c = Command::cargo_bin("memdir").unwrap();
    c.env_clear()
        .env("MEMDIR_STORE", store)
        .env("MEMDIR_NOW", common::NOW)
        .env("TZ", "UTC")
        .env("HOME", home);
    c
}

/// A tenant with a policy and three requests in its ledger, verified intact.
fn fresh(url: &str, home: &std::path::Path) -> PgStore {
    memdir(url, home).arg("init").assert().success();
    let s = PgStore::open(url).unwrap();
    Store::write_if(
        &s,
        &MemPath::parse("gates.toml").unwrap(),
        POLICY.as_bytes(),
        &Precondition::Any,
    )
    .unwrap();
    for t in ["landlord", "acme-a", "acme-b"] {
        memdir(url, home)
            .args([
                "gate", "request", "payment", "--target", t, "--amount", "10", "--reason", "test",
            ])
            .assert()
            .success();
    }
    memdir(url, home)
        .args(["gate", "verify"])
        .assert()
        .success();
    s
}

fn lines(s: &PgStore) -> Vec<String> {
    let b = s.read(&MemPath::parse(LEDGER).unwrap()).unwrap();
    String::from_utf8(b)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn put(s: &PgStore, ls: &[String]) {
    let text: String = ls.iter().map(|l| format!("{l}\n")).collect();
    Store::write_if(
        s,
        &MemPath::parse(LEDGER).unwrap(),
        text.as_bytes(),
        &Precondition::Any,
    )
    .unwrap();
}

fn verify(url: &str, home: &std::path::Path) -> String {
    let a = memdir(url, home).args(["gate", "verify"]).assert().code(2);
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn verify_finds_every_tampering_of_a_tenants_rows() {
    let db = pg_or_skip!();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let mut n = 0;
    let mut tenant = || {
        n += 1;
        db.url(&format!("t{n}"))
    };
    let no_head = |url: &str| {
        let t = url.rsplit("tenant=").next().unwrap();
        db.sql(&format!(
            "DELETE FROM memdir.meta WHERE tenant = '{t}' AND name = 'gates-head'"
        ))
        .unwrap();
    };

    // A line edited.
    let url = tenant();
    let s = fresh(&url, home);
    let mut ls = lines(&s);
    ls[1] = ls[1].replacen("\"amount\":\"10\"", "\"amount\":\"1\"", 1);
    put(&s, &ls);
    let e = verify(&url, home);
    assert!(e.contains("line 2: the line was edited"), "{e}");

    // A line deleted.
    let url = tenant();
    let s = fresh(&url, home);
    let mut ls = lines(&s);
    ls.remove(0);
    put(&s, &ls);
    let e = verify(&url, home);
    assert!(e.contains("line 1: entry 2 follows entry 0"), "{e}");

    // Two lines swapped.
    let url = tenant();
    let s = fresh(&url, home);
    let mut ls = lines(&s);
    ls.swap(1, 2);
    put(&s, &ls);
    let e = verify(&url, home);
    assert!(e.contains("line 2: entry 3 follows entry 1"), "{e}");

    // The end cut.
    let url = tenant();
    let s = fresh(&url, home);
    let mut ls = lines(&s);
    ls.pop();
    put(&s, &ls);
    let e = verify(&url, home);
    assert!(e.contains("entries were removed from the end"), "{e}");

    // The head deleted.
    let url = tenant();
    fresh(&url, home);
    no_head(&url);
    let e = verify(&url, home);
    assert!(
        e.contains("its head (.memdir/gates-head) is missing"),
        "{e}"
    );

    // The end cut and the head deleted with it.
    let url = tenant();
    let s = fresh(&url, home);
    let mut ls = lines(&s);
    ls.pop();
    put(&s, &ls);
    no_head(&url);
    let e = verify(&url, home);
    assert!(e.contains("entries were removed"), "{e}");

    // The whole ledger and its head deleted: the head remembered in the database remains.
    let url = tenant();
    fresh(&url, home);
    let t = url.rsplit("tenant=").next().unwrap();
    db.sql(&format!(
        "DELETE FROM memdir.files WHERE tenant = '{t}' AND path LIKE 'gates/ledger/%'"
    ))
    .unwrap();
    no_head(&url);
    let e = verify(&url, home);
    assert!(e.contains("ends at entry 0 but memdir wrote 3"), "{e}");

    // The end cut and the head rewritten to match it (a hash anyone can compute).
    let url = tenant();
    let s = fresh(&url, home);
    let mut ls = lines(&s);
    ls.pop();
    put(&s, &ls);
    let second = LedgerEntry::open(&ls[1]).unwrap();
    s.write_meta("gates-head", format!("2 {}\n", second.hash).as_bytes())
        .unwrap();
    let e = verify(&url, home);
    assert!(e.contains("the head's seal does not match"), "{e}");

    // The chain rewritten consistently (an amount lowered, every hash recomputed, the head
    // rewritten to its end, with a made-up seal and without one) by a writer of the rows.
    let url = tenant();
    let s = fresh(&url, home);
    let mut prev = GENESIS.to_string();
    let mut forged = Vec::new();
    for l in lines(&s) {
        let mut e = LedgerEntry::open(&l).unwrap();
        e.amount = e.amount.map(|_| "1".to_string());
        e.prev = prev;
        forged.push(e.seal().trim_end().to_string());
        prev = e.hash.clone();
    }
    put(&s, &forged);
    for head in [
        format!("3 {prev} {}\n", "0".repeat(64)),
        format!("3 {prev}\n"),
    ] {
        s.write_meta("gates-head", head.as_bytes()).unwrap();
        let e = verify(&url, home);
        assert!(
            e.contains("the head's seal does not match")
                || e.contains("is not the one memdir wrote"),
            "{e}"
        );
    }
    // Every action is denied while the ledger is not intact.
    let out = memdir(&url, home)
        .args([
            "gate", "request", "payment", "--target", "landlord", "--amount", "1", "--reason",
            "test", "--json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ledger: the ledger is not intact"), "{text}");
}
