//! Admin at scale: the tenant list a page at a time through an index, token digests as 32 bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_core::path::MemPath;
use memdir_store::registry::{Tenant, Tenants};
use memdir_store::{Actor, Store};
use memdir_store_pg::{PgTenants, pg_or_skip};

fn hex(b: u8) -> String {
    format!("{b:02x}").repeat(32)
}

#[test]
fn pages_of_the_tenant_list_join_up_to_the_whole_list_in_byte_order() {
    let db = pg_or_skip!();
    let reg = PgTenants::open(&db.url("x").replace("?tenant=x", ""), false).unwrap();
    // Names whose byte order differs from a language collation's.
    let names = [
        "bob", "Bob", "alice", "_x", "@y", "a.b", "a-b", "Zed", "1", "a_b", "zz", "carol", "Carol",
        "dave", "a@b", "ab",
    ];
    for (i, n) in names.iter().enumerate() {
        reg.add(&Tenant::new(n, "p"), &hex(i as u8)).unwrap();
    }
    let mut want: Vec<&str> = names.to_vec();
    want.sort();
    let mut got = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = reg.list_page(after.as_deref(), 3).unwrap();
        assert!(page.len() <= 3);
        let Some(last) = page.last() else { break };
        after = Some(last.name.clone());
        got.extend(page.into_iter().map(|t| t.name));
    }
    assert_eq!(got, want);
    let all: Vec<String> = reg.list().unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(all, want);
    assert_eq!(reg.list_page(Some("zz"), 10).unwrap().len(), 0);
    assert_eq!(reg.list_page(None, 0).unwrap().len(), 0);
    // Tokens are found by their digest, kept as its 32 bytes.
    assert_eq!(reg.by_token(&hex(2)).unwrap().unwrap().name, "alice");
    reg.set_token("alice", &hex(200)).unwrap();
    assert!(reg.by_token(&hex(2)).unwrap().is_none());
    assert_eq!(reg.by_token(&hex(200)).unwrap().unwrap().name, "alice");
    db.sql(
        "DO $$ BEGIN
           IF (SELECT count(*) FROM memdir.credentials WHERE octet_length(token_digest) <> 32) > 0
           THEN RAISE 'a digest is not 32 bytes'; END IF;
         END $$",
    )
    .unwrap();
}

/// At 200,000 tenants a page is an index scan from the name it starts after, not a sort.
#[test]
fn a_page_of_many_tenants_is_an_index_scan() {
    let db = pg_or_skip!();
    drop(PgTenants::open(&db.url("x").replace("?tenant=x", ""), false).unwrap());
    db.sql(
        "INSERT INTO memdir.tenants (tenant, created_ms)
             SELECT 't' || g, 0 FROM generate_series(1, 200000) g;
         INSERT INTO memdir.credentials (tenant, principal, token_digest, created_ms, token_set_ms)
             SELECT 't' || g, 'p', sha256(g::text::bytea), 0, 0 FROM generate_series(1, 200000) g;
         ANALYZE memdir.credentials;",
    )
    .unwrap();
    // The query `list_page` runs, explained: the plan must read the name index from the start.
    db.sql(
        "DO $$ DECLARE p text := ''; r record; BEGIN
           FOR r IN EXECUTE 'EXPLAIN SELECT tenant, principal, created_ms, token_set_ms
                    FROM memdir.credentials
                    WHERE tenant COLLATE \"C\" > coalesce($1, '''')
                    ORDER BY tenant COLLATE \"C\" LIMIT $2' USING 't150000'::text, 100::bigint
           LOOP p := p || r.\"QUERY PLAN\" || E'\\n'; END LOOP;
           IF p NOT LIKE '%Index Scan using credentials_by_name%' THEN
             RAISE 'not an index scan: %', p;
           END IF;
         END $$",
    )
    .unwrap();
    let reg = PgTenants::open(&db.url("x").replace("?tenant=x", ""), false).unwrap();
    let page = reg.list_page(Some("t150000"), 3).unwrap();
    let names: Vec<&str> = page.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t150001", "t150002", "t150003"]);
}

/// `tenant remove --purge` deletes the tenant's history with its files, and nobody else's.
#[test]
fn a_purge_takes_the_history_too() {
    let db = pg_or_skip!();
    let reg = PgTenants::open(&db.url("x").replace("?tenant=x", ""), false).unwrap();
    for (i, n) in ["alice", "bob"].iter().enumerate() {
        reg.add(&Tenant::new(n, "p"), &hex(i as u8)).unwrap();
        let s = reg.store(n).unwrap();
        s.write(&MemPath::parse("core.md").unwrap(), b"x\n")
            .unwrap();
        let h = s.history();
        h.start(jiff::Timestamp::UNIX_EPOCH).unwrap();
        s.append(&MemPath::parse("core.md").unwrap(), b"y\n")
            .unwrap();
        h.commit(
            &Actor::default(),
            "log",
            "core.md",
            None,
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap()
        .unwrap();
    }
    reg.remove("alice", true).unwrap();
    let left = |sql: &str| {
        db.sql(&format!(
            "DO $$ BEGIN IF ({sql}) THEN RAISE 'left behind'; END IF; END $$"
        ))
    };
    left("SELECT count(*) <> 2 FROM memdir.history").unwrap();
    left("SELECT EXISTS (SELECT 1 FROM memdir.files WHERE tenant = 'alice')").unwrap();
    assert_eq!(
        reg.store("bob")
            .unwrap()
            .history()
            .history(None, 10)
            .unwrap()
            .len(),
        2
    );
}

/// Scheduled sweeps (issue 35, item 6): a due tenant is claimed by one registry handle at a time
/// (two handles stand for two instances), a claim whose lease ended is taken over (an instance
/// that stopped mid-batch), a done sweep is not due again within its period, and a tenant whose
/// credentials were removed is not handed out.
#[test]
fn sweeps_are_claimed_once_taken_over_after_their_lease_and_due_again_after_their_period() {
    let db = pg_or_skip!();
    let url = db.url("x").replace("?tenant=x", "");
    let a = PgTenants::open(&url, false).unwrap();
    let b = PgTenants::open(&url, false).unwrap();
    for (i, n) in ["t1", "t2", "t3", "gone"].iter().enumerate() {
        a.add(&Tenant::new(n, "p"), &hex(i as u8)).unwrap();
    }
    a.remove("gone", false).unwrap();
    let names = |v: Vec<Tenant>| {
        let mut n: Vec<String> = v.into_iter().map(|t| t.name).collect();
        n.sort();
        n
    };
    let first = names(a.claim_sweeps(400, 2).unwrap());
    let rest = names(b.claim_sweeps(400, 10).unwrap());
    let mut all: Vec<String> = first.iter().chain(&rest).cloned().collect();
    all.sort();
    assert_eq!(all, ["t1", "t2", "t3"], "{first:?} {rest:?}");
    // Claimed: nobody gets them while the leases run.
    assert!(a.claim_sweeps(400, 10).unwrap().is_empty());
    assert!(b.claim_sweeps(400, 10).unwrap().is_empty());
    // `a` finishes its own; `b` stops without finishing: its claims come back after the lease.
    for t in &first {
        a.swept(t, 3_600_000).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(600));
    let again = names(a.claim_sweeps(400, 10).unwrap());
    let want: Vec<String> = rest.iter().filter(|n| *n != "gone").cloned().collect();
    assert_eq!(again, want);
    for t in &again {
        a.swept(t, 3_600_000).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(600));
    // Done within the period: nothing is due ("gone" came back after its lease and is marked
    // done without being handed out).
    assert!(b.claim_sweeps(400, 10).unwrap().is_empty());
    // Past the period, due again.
    db.sql("UPDATE memdir.sweeps SET due_ms = 0 WHERE tenant = 't2'")
        .unwrap();
    assert_eq!(names(b.claim_sweeps(400, 10).unwrap()), ["t2"]);
}
