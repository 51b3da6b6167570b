//! Admin at scale: the tenant list a page at a time through an index, token digests as 32 bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_core::path::MemPath;
use memdir_store::registry::{DAY_MS, Job, Schedule, Tenant, Tenants};
use memdir_store::{Actor, Store};
use memdir_store_pg::{PgTenants, pg_or_skip};

const HOURLY: Schedule = Schedule {
    every_ms: 3_600_000,
    at_ms: None,
};

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
    let first = names(a.claim_jobs(Job::Sweep, HOURLY, 400, 2).unwrap());
    let rest = names(b.claim_jobs(Job::Sweep, HOURLY, 400, 10).unwrap());
    let mut all: Vec<String> = first.iter().chain(&rest).cloned().collect();
    all.sort();
    assert_eq!(all, ["t1", "t2", "t3"], "{first:?} {rest:?}");
    // Claimed: nobody gets them while the leases run.
    assert!(
        a.claim_jobs(Job::Sweep, HOURLY, 400, 10)
            .unwrap()
            .is_empty()
    );
    assert!(
        b.claim_jobs(Job::Sweep, HOURLY, 400, 10)
            .unwrap()
            .is_empty()
    );
    // `a` finishes its own; `b` stops without finishing: its claims come back after the lease.
    for t in &first {
        a.job_done(t, Job::Sweep, HOURLY).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(600));
    let again = names(a.claim_jobs(Job::Sweep, HOURLY, 400, 10).unwrap());
    let want: Vec<String> = rest.iter().filter(|n| *n != "gone").cloned().collect();
    assert_eq!(again, want);
    for t in &again {
        a.job_done(t, Job::Sweep, HOURLY).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(600));
    // Done within the period: nothing is due ("gone" came back after its lease and is marked
    // done without being handed out).
    assert!(
        b.claim_jobs(Job::Sweep, HOURLY, 400, 10)
            .unwrap()
            .is_empty()
    );
    // Past the period, due again.
    db.sql("UPDATE memdir.jobs SET due_ms = 0 WHERE tenant = 't2' AND job = 'sweep'")
        .unwrap();
    assert_eq!(
        names(b.claim_jobs(Job::Sweep, HOURLY, 400, 10).unwrap()),
        ["t2"]
    );
}

fn names(v: Vec<Tenant>) -> Vec<String> {
    let mut n: Vec<String> = v.into_iter().map(|t| t.name).collect();
    n.sort();
    n
}

/// Fails the test with `why` when the SQL condition holds.
fn refute(db: &memdir_store_pg::testing::TestDb, cond: &str, why: &str) {
    db.sql(&format!(
        "DO $$ BEGIN IF ({cond}) THEN RAISE '{why}'; END IF; END $$"
    ))
    .unwrap_or_else(|e| panic!("{why}: {e}"));
}

/// Consolidation is scheduled like the sweep but apart from it (one row per tenant and job): a
/// sweep's claim or completion leaves a tenant's consolidation due, and the other way round.
/// A handle whose lease ended and was taken over cannot renew it nor mark it done (the run is
/// the new holder's); at a time of day, a tenant's first run waits for that time and each next
/// one lands on it again.
#[test]
fn jobs_are_claimed_per_tenant_and_job_fenced_by_their_holder_and_kept_on_their_time_of_day() {
    let db = pg_or_skip!();
    let url = db.url("x").replace("?tenant=x", "");
    let a = PgTenants::open(&url, false).unwrap();
    let b = PgTenants::open(&url, false).unwrap();
    for (i, n) in ["c1", "c2"].iter().enumerate() {
        a.add(&Tenant::new(n, "p"), &hex(i as u8)).unwrap();
    }
    let daily = Schedule {
        every_ms: DAY_MS,
        at_ms: None,
    };
    assert_eq!(
        names(a.claim_jobs(Job::Sweep, HOURLY, 60_000, 10).unwrap()),
        ["c1", "c2"]
    );
    // The sweeps are held by `a`; the consolidations are still due, to anyone.
    assert_eq!(
        names(b.claim_jobs(Job::Consolidate, daily, 300, 1).unwrap()).len(),
        1
    );
    assert!(
        b.claim_jobs(Job::Sweep, HOURLY, 300, 10)
            .unwrap()
            .is_empty()
    );
    let c = names(a.claim_jobs(Job::Consolidate, daily, 300, 10).unwrap());
    assert_eq!(c.len(), 1);
    let by_a = c[0].clone();
    // `a` stalls past its lease on `by_a`; `b` takes it over.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(a.renew_job("c1", Job::Sweep, 60_000).unwrap());
    let taken = names(b.claim_jobs(Job::Consolidate, daily, 60_000, 10).unwrap());
    assert!(taken.contains(&by_a), "{taken:?}");
    assert!(!a.renew_job(&by_a, Job::Consolidate, 60_000).unwrap());
    a.job_done(&by_a, Job::Consolidate, daily).unwrap();
    // Still `b`'s: not done, not due, not claimable.
    refute(
        &db,
        &format!(
            "SELECT lease_ms = 0 FROM memdir.jobs WHERE tenant = '{by_a}' AND job = 'consolidate'"
        ),
        "a stale holder marked the job done",
    );
    assert!(
        a.claim_jobs(Job::Consolidate, daily, 60_000, 10)
            .unwrap()
            .is_empty()
    );
    for t in &taken {
        b.job_done(t, Job::Consolidate, daily).unwrap();
    }
    refute(
        &db,
        "SELECT count(*) <> 2 FROM memdir.jobs WHERE job = 'consolidate'
            AND lease_ms = 0 AND due_ms > memdir.now_ms() + 86390000",
        "done consolidations are not due a day later",
    );
    // At a time of day twelve hours from now, a tenant never consolidated waits for it.
    a.add(&Tenant::new("c3", "p"), &hex(9)).unwrap();
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let at = (now_ms + 12 * 3_600_000).rem_euclid(DAY_MS) / 60_000 * 60_000;
    let nightly = Schedule {
        every_ms: DAY_MS,
        at_ms: Some(at),
    };
    assert!(
        a.claim_jobs(Job::Consolidate, nightly, 60_000, 10)
            .unwrap()
            .is_empty()
    );
    refute(
        &db,
        &format!(
            "SELECT mod(due_ms, {DAY_MS}) <> {at}
               OR due_ms < memdir.now_ms() + 11 * 3600000
               OR due_ms > memdir.now_ms() + 13 * 3600000
             FROM memdir.jobs WHERE tenant = 'c3' AND job = 'consolidate'"
        ),
        "the first nightly run is not at its time of day",
    );
    // Past its time (an instance was down at it), it runs late, and the next is on time again.
    db.sql("UPDATE memdir.jobs SET due_ms = 1 WHERE tenant = 'c3' AND job = 'consolidate'")
        .unwrap();
    assert_eq!(
        names(b.claim_jobs(Job::Consolidate, nightly, 60_000, 10).unwrap()),
        ["c3"]
    );
    let weekly = Schedule {
        every_ms: 7 * DAY_MS,
        at_ms: Some(at),
    };
    b.job_done("c3", Job::Consolidate, weekly).unwrap();
    refute(
        &db,
        &format!(
            "SELECT mod(due_ms, {DAY_MS}) <> {at}
               OR due_ms <= memdir.now_ms() + 6 * {DAY_MS}
               OR due_ms > memdir.now_ms() + 7 * {DAY_MS}
             FROM memdir.jobs WHERE tenant = 'c3' AND job = 'consolidate'"
        ),
        "a weekly run at a time of day is not due on that time six to seven days on",
    );
}

/// Migration 10 carries a database's sweep schedule (migration 8's `memdir.sweeps`) into
/// `memdir.jobs` as it was, and gives every registered tenant a consolidation never run.
#[test]
fn the_sweep_schedule_is_carried_into_the_jobs_table() {
    let db = pg_or_skip!();
    let url = db.url("x").replace("?tenant=x", "");
    let a = PgTenants::open(&url, false).unwrap();
    for (i, n) in ["m1", "m2", "m3"].iter().enumerate() {
        a.add(&Tenant::new(n, "p"), &hex(i as u8)).unwrap();
    }
    a.remove("m3", false).unwrap();
    drop(a);
    // The database as version 9 left it: migration 8's table, with a schedule in it.
    db.sql(
        "DROP TABLE memdir.jobs;
         DELETE FROM memdir.migrations WHERE version >= 10;
         CREATE TABLE memdir.sweeps (
             tenant   text PRIMARY KEY REFERENCES memdir.tenants ON DELETE CASCADE,
             due_ms   bigint NOT NULL DEFAULT 0,
             lease_ms bigint NOT NULL DEFAULT 0
         );
         CREATE INDEX sweeps_due ON memdir.sweeps (due_ms);
         INSERT INTO memdir.sweeps VALUES ('m1', 5, 0), ('m2', 99999999999999, 0), ('m3', 7, 0);",
    )
    .unwrap();
    let b = PgTenants::open(&url, false).unwrap();
    refute(
        &db,
        "SELECT to_regclass('memdir.sweeps') IS NOT NULL",
        "memdir.sweeps is still there",
    );
    refute(
        &db,
        "SELECT string_agg(tenant || ':' || job || ':' || due_ms, ' ' ORDER BY tenant, job)
             IS DISTINCT FROM 'm1:consolidate:0 m1:sweep:5 m2:consolidate:0 m2:sweep:99999999999999 m3:sweep:7'
         FROM memdir.jobs",
        "the schedule was not carried forward",
    );
    // m1 is due (and m3, whose credentials are gone, is marked done without being handed out).
    assert_eq!(
        names(b.claim_jobs(Job::Sweep, HOURLY, 60_000, 10).unwrap()),
        ["m1"]
    );
}
