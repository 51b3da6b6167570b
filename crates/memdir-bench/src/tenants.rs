//! The scale benchmark of issue 35: N tenants in one PostgreSQL database, two `memdir serve`
//! instances on it, and a bounded loopback client.
//!
//! The tenants are made through the store API (the tenant registry, `PgTenants`, and the
//! engine's `Memory` on each tenant's backend), never by SQL, so the rows are the ones a real
//! service writes: a core, two days of logs and two notes, a few KB each. The client keeps K
//! requests in flight over REST (`/v1/tools/...`), a mix of `memory_context`, `memory_log`,
//! `memory_read`, grep and ranked `memory_search` over A active tenants, and sends each tenant
//! to the instance a hash of its name picks (as a product's load balancer with stickiness would),
//! so each instance holds about half of the active tenants.
//!
//! It prints database bytes per raw file byte (PostgreSQL's own relation sizes), statements per
//! request (PostgreSQL's statement log when this process can read it, and transactions from
//! `pg_stat_database` always), CPU per request (the instances' and this database's backends'
//! utime + stime from `/proc`), p50/p99 per operation, and RSS and local disk per instance.
//! It fails when any request gets an error or a tenant reads another's core.

use anyhow::{Context as _, bail};
use memdir::tenants::{Tenant, Tenants as _};
use memdir::{Clock, Memory};
use memdir_mcp::tokens::{new_token, token_hash};
use memdir_store_pg::PgTenants;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Options.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The PostgreSQL server, without a database (a throwaway one is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432")]
    pub pg: String,
    /// Tenants in the database.
    #[arg(long, default_value_t = 1000)]
    pub tenants: usize,
    /// Tenants the client sends requests to, spread evenly over all of them [default: all].
    #[arg(long)]
    pub active: Option<usize>,
    /// Requests of the measured mix, after one first-touch `memory_context` per active tenant.
    #[arg(long, default_value_t = 10_000)]
    pub requests: usize,
    /// Requests the client keeps in flight.
    #[arg(long, default_value_t = 2)]
    pub in_flight: usize,
    /// Threads that create the tenants.
    #[arg(long, default_value_t = 2)]
    pub create_threads: usize,
    /// Use this database instead of a throwaway one and keep it afterwards; tenants are created
    /// only when it has none (the active ones get new tokens through the registry), so a second
    /// run can skip the creation.
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
    /// The memdir binary (default: beside this one).
    #[arg(long)]
    pub memdir: Option<PathBuf>,
    /// Leave PostgreSQL's statement log off: writing every statement to the server's log costs
    /// the database's CPU, which then counts in the CPU per request (no statement count then).
    #[arg(long)]
    pub no_statement_log: bool,
    /// Let the instances' scheduled sweep run from their start (`[jobs] sweep_every = "1h"`,
    /// checked every second, every tenant made due first), beside the first touch and the mix,
    /// and count it: fails unless the two instances swept each tenant exactly once between them
    /// with no error. The mix's CPU per request then includes the sweep's.
    #[arg(long)]
    pub sweep: bool,
}

/// Clock ticks per second in `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux this runs on).
const TICKS_PER_SEC: f64 = 100.0;

/// The operations of the mix, with their weights out of 100.
const MIX: [(&str, u64); 5] = [
    ("context", 25),
    ("log", 25),
    ("read", 20),
    ("grep", 15),
    ("ranked", 15),
];

/// The instance (0 or 1) a tenant's requests go to: FNV-1a of its name, so the choice is
/// stable across runs and processes, as a sticky load balancer's would be.
pub(crate) fn route(name: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % 2) as usize
}

/// The name of tenant `i`, shaped as a product's user id.
pub(crate) fn tenant_name(i: usize) -> String {
    format!("user-{i:07}@example.com")
}

/// The indices of `active` tenants spread evenly over `0..tenants`.
pub(crate) fn active_set(tenants: usize, active: usize) -> Vec<usize> {
    (0..active).map(|k| k * tenants / active.max(1)).collect()
}

/// The operation a draw in `0..100` picks from [`MIX`].
pub(crate) fn pick(draw: u64) -> &'static str {
    let mut acc = 0;
    for (op, w) in MIX {
        acc += w;
        if draw % 100 < acc {
            return op;
        }
    }
    MIX[0].0
}

/// utime + stime of a process, in seconds, from `/proc/<pid>/stat` (whose second field, the
/// command name in parentheses, may hold spaces: the fields are counted after its last `)`).
pub(crate) fn parse_cpu(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3 of the line, utime 14 and stime 15.
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / TICKS_PER_SEC)
}

/// utime + stime of the running process `pid`, in seconds.
pub(crate) fn cpu_of(pid: u32) -> Option<f64> {
    parse_cpu(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Statements that sessions of database `db` ran, in a stretch of the server's log (with
/// Debian's `log_line_prefix`, `%m [%p] %q%u@%d `): `statement: ...` lines (simple queries,
/// `BEGIN`/`COMMIT`) and `execute ...` lines (extended protocol), one each.
pub(crate) fn count_statements(log: &str, db: &str) -> usize {
    let me = format!("@{db} LOG:  ");
    log.lines()
        .filter_map(|l| l.split_once(&me).map(|(_, s)| s))
        .filter(|s| s.starts_with("statement: ") || s.starts_with("execute "))
        .count()
}

/// A `/proc/<pid>/status` field in KiB (`VmRSS:`, `VmHWM:`), 0 when it cannot be read.
pub(crate) fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn disk_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => disk_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e3
}

/// One connection to the benchmark's database for its own measurements.
struct Pg {
    rt: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl Pg {
    fn connect(url: &str) -> anyhow::Result<Pg> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = rt.block_on(async {
            let (client, conn) = tokio::time::timeout(
                Duration::from_secs(5),
                tokio_postgres::connect(url, tokio_postgres::NoTls),
            )
            .await
            .map_err(|_| anyhow::anyhow!("timed out after 5 s"))??;
            tokio::spawn(conn);
            anyhow::Ok(client)
        })?;
        Ok(Pg { rt, client })
    }

    fn exec(&self, sql: &str) -> anyhow::Result<()> {
        self.rt
            .block_on(self.client.batch_execute(sql))
            .with_context(|| format!("{sql}: failed"))
    }

    /// The first column of every row, as 64-bit integers.
    fn ints(&self, sql: &str) -> anyhow::Result<Vec<i64>> {
        let rows = self
            .rt
            .block_on(self.client.query(sql, &[]))
            .with_context(|| format!("{sql}: failed"))?;
        Ok(rows.iter().map(|r| r.get::<_, i64>(0)).collect())
    }

    fn int(&self, sql: &str) -> anyhow::Result<i64> {
        self.ints(sql)?
            .first()
            .copied()
            .context("the query returned no row")
    }

    /// Rows of (text, integer, integer).
    fn rows3(&self, sql: &str) -> anyhow::Result<Vec<(String, i64, i64)>> {
        let rows = self
            .rt
            .block_on(self.client.query(sql, &[]))
            .with_context(|| format!("{sql}: failed"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }
}

/// Each `memdir` table's heap (with TOAST) and index bytes, by table.
const SIZES: &str = "SELECT c.relname::text,
        (pg_relation_size(c.oid) + coalesce(pg_relation_size(NULLIF(c.reltoastrelid, 0)), 0))::bigint,
        (SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) FROM pg_index i
          WHERE i.indrelid = c.oid OR i.indrelid = NULLIF(c.reltoastrelid, 0))::bigint
   FROM pg_class c
  WHERE c.relnamespace = 'memdir'::regnamespace AND c.relkind = 'r'
  ORDER BY 2 + 3 DESC";

/// Runs the benchmark and prints its tables.
pub fn run(a: Args) -> anyhow::Result<()> {
    let active = a.active.unwrap_or(a.tenants);
    if a.tenants == 0 || active == 0 || active > a.tenants {
        bail!(
            "--active {active} must be between 1 and --tenants {} (at least 1)",
            a.tenants
        );
    }
    if a.in_flight == 0 || a.create_threads == 0 {
        bail!("--in-flight and --create-threads must be at least 1");
    }
    let memdir = crate::memdir_bin(a.memdir.clone())?;
    let server = a.pg.trim_end_matches('/').to_string();
    if let Err(e) = memdir_store_pg::testing::admin(&server, "postgres", "SELECT 1") {
        bail!("PostgreSQL at {server} does not answer ({e}): start it, or pass --pg URL");
    }
    let (db, throwaway) = match &a.database {
        Some(d) => (d.clone(), false),
        None => (format!("memdir_bench_tenants_{}", std::process::id()), true),
    };
    if !db
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        bail!("--database {db:?}: use lowercase letters, digits and '_'");
    }
    let result = bench(&a, active, &memdir, &server, &db);
    if throwaway {
        let _ = memdir_store_pg::testing::admin(
            &server,
            "postgres",
            &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
        );
    } else {
        let _ = memdir_store_pg::testing::admin(
            &server,
            "postgres",
            &format!("ALTER DATABASE {db} RESET log_statement"),
        );
    }
    result
}

/// Makes tenant `i` through the registry and the engine: a core, six log lines on each of the
/// two days before today, two notes (about 3 KB of files, 17 changes).
fn create_tenant(reg: &PgTenants, i: usize, today: jiff::civil::Date) -> anyhow::Result<String> {
    let name = tenant_name(i);
    let token = new_token()?;
    // The principal is the default main writer, so the memory keeps the default settings
    // (stored as nothing) and its logs go to `log/DAY.md`, as `tenant add` arranges.
    reg.add(&Tenant::new(&name, "main"), &token_hash(&token))?;
    let backend = reg.backend(&name, true)?;
    let at = |days_ago: i64| -> anyhow::Result<Clock> {
        let day = today.checked_sub(jiff::Span::new().days(days_ago))?;
        let ts: jiff::Timestamp = format!("{day}T09:00:00Z").parse()?;
        Ok(Clock::fixed(ts, jiff::tz::TimeZone::UTC))
    };
    let day1 = Memory::init_backend(backend.clone(), at(2)?, true)?;
    let core = format!(
        "# Core\n\n- The user is {name}, customer number {i}, an engineer who works on storage.\n\
         - Prefers short answers with the command first.\n- Time zone: UTC.\n"
    );
    day1.write("core.md", &core)?
        .done()
        .map_err(anyhow::Error::msg)?;
    for k in 0..6 {
        day1.log(&format!(
            "worked through the migration plan of project {i}, step {k}: checked the indexes and row sizes"
        ))?;
    }
    for (n, d) in [
        ("projects/storage", "The storage migration and its plan"),
        ("people/team", "Who works with the user on what"),
    ] {
        let body = format!(
            "# {d}\n\n{}\n\nCustomer {i}; see [[storage]] for the plan.\n",
            "Background, decisions and open questions, kept short. ".repeat(6)
        );
        day1.note_new(&memdir::notes::NoteRequest {
            name: n,
            description: d,
            kind: Some("project"),
            tags: &[],
            expires: None,
            body: &body,
            force: false,
        })?;
    }
    let day2 = Memory::open_backend(backend, at(1)?)?;
    for k in 0..6 {
        day2.log(&format!(
            "reviewed the pull request of project {i}, comment {k}: asked for a migration test"
        ))?;
    }
    Ok(token)
}

struct Instance {
    child: Child,
    base: String,
    cache: PathBuf,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CPU seconds so far of the instances and of this database's backends (by pid).
fn cpu_snapshot(
    pg: &Pg,
    db: &str,
    instances: &[Instance],
) -> anyhow::Result<(f64, HashMap<u32, f64>)> {
    let server: f64 = instances
        .iter()
        .map(|i| cpu_of(i.child.id()).unwrap_or(0.0))
        .sum();
    let pids = pg.ints(&format!(
        "SELECT pid::bigint FROM pg_stat_activity WHERE datname = '{db}' AND pid <> pg_backend_pid()"
    ))?;
    let backends = pids
        .into_iter()
        .filter_map(|p| {
            let p = u32::try_from(p).ok()?;
            Some((p, cpu_of(p)?))
        })
        .collect();
    Ok((server, backends))
}

#[derive(Default)]
struct Tally {
    latencies: HashMap<&'static str, Vec<Duration>>,
    errors: HashMap<&'static str, u64>,
    first_error: Option<String>,
}

impl Tally {
    fn merge(&mut self, o: Tally) {
        for (k, v) in o.latencies {
            self.latencies.entry(k).or_default().extend(v);
        }
        for (k, v) in o.errors {
            *self.errors.entry(k).or_default() += v;
        }
        if self.first_error.is_none() {
            self.first_error = o.first_error;
        }
    }
}

/// One active tenant as the client sees it.
struct Target {
    index: usize,
    name: String,
    token: String,
    instance: usize,
}

fn call(
    agent: &ureq::Agent,
    base: &str,
    t: &Target,
    tool: &str,
    args: &Value,
) -> Result<String, String> {
    let resp = agent
        .post(&format!("{base}/v1/tools/{tool}"))
        .header("Authorization", &format!("Bearer {}", t.token))
        .send(args.to_string().as_bytes());
    match resp {
        Ok(mut r) if r.status().as_u16() == 200 => {
            let v: Value = r.body_mut().read_json().unwrap_or(Value::Null);
            let text = v["text"].as_str().unwrap_or_default().to_string();
            if v["is_error"].as_bool() == Some(false) {
                Ok(text)
            } else {
                Err(format!("{tool} for {}: {text}", t.name))
            }
        }
        Ok(r) => Err(format!("{tool} for {}: HTTP {}", t.name, r.status())),
        Err(e) => Err(format!("{tool} for {}: {e}", t.name)),
    }
}

/// Sends `requests` requests with `in_flight` threads; `choose(n, seed)` gives request n's
/// tenant (an index into `targets`) and operation.
fn drive(
    instances: &[Instance],
    targets: &Arc<Vec<Target>>,
    requests: usize,
    in_flight: usize,
    choose: fn(usize, &mut u64, usize) -> (usize, &'static str),
) -> anyhow::Result<(Tally, Duration)> {
    let bases: Arc<Vec<String>> = Arc::new(instances.iter().map(|i| i.base.clone()).collect());
    let next = Arc::new(AtomicUsize::new(0));
    // Tenants that had a ranked search already: the first one on an instance builds its local
    // index, so it is timed apart.
    let ranked: Arc<Mutex<HashSet<usize>>> = Arc::default();
    let started = Instant::now();
    let mut threads = Vec::new();
    for c in 0..in_flight {
        let (bases, targets, next, ranked) =
            (bases.clone(), targets.clone(), next.clone(), ranked.clone());
        threads.push(std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(60)))
                .build()
                .into();
            let mut seed = (c as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut mine = Tally::default();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= requests {
                    break;
                }
                let (ti, op) = choose(n, &mut seed, targets.len());
                let t = &targets[ti];
                let (tool, args) = match op {
                    "context" | "first context" => ("memory_context", json!({})),
                    "log" => (
                        "memory_log",
                        json!({"text": format!("asked about the storage plan again, request {n}")}),
                    ),
                    "read" => ("memory_read", json!({"path": "core.md"})),
                    "grep" => (
                        "memory_search",
                        json!({"pattern": "migration", "mode": "grep"}),
                    ),
                    _ => (
                        "memory_search",
                        json!({"pattern": "storage migration plan", "mode": "ranked", "limit": 5}),
                    ),
                };
                let label = if op == "ranked" {
                    let mut seen = ranked.lock().unwrap_or_else(|p| p.into_inner());
                    if seen.insert(ti) {
                        "ranked (first)"
                    } else {
                        "ranked"
                    }
                } else {
                    op
                };
                let t0 = Instant::now();
                let got = call(&agent, &bases[t.instance], t, tool, &args);
                mine.latencies.entry(label).or_default().push(t0.elapsed());
                let got = got.and_then(|text| {
                    // The core names its tenant: another tenant's core here is a cross-tenant read.
                    if op == "read" && !text.contains(&format!("customer number {},", t.index)) {
                        Err(format!("read core.md for {}: not its core: {text}", t.name))
                    } else {
                        Ok(())
                    }
                });
                if let Err(e) = got {
                    *mine.errors.entry(label).or_default() += 1;
                    mine.first_error.get_or_insert(e);
                }
            }
            mine
        }));
    }
    let mut tally = Tally::default();
    for t in threads {
        tally.merge(
            t.join()
                .map_err(|_| anyhow::anyhow!("a client thread panicked"))?,
        );
    }
    Ok((tally, started.elapsed()))
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn bench(a: &Args, active: usize, memdir: &Path, server: &str, db: &str) -> anyhow::Result<()> {
    let url = format!("{server}/{db}");
    let reg = Arc::new(PgTenants::open(&url, true).context("opening the tenant registry")?);
    let pg = Pg::connect(&url).with_context(|| format!("connecting to {url}"))?;
    let existing = pg.int("SELECT count(*) FROM memdir.credentials")?;
    let today = jiff::tz::TimeZone::UTC
        .to_datetime(jiff::Timestamp::now())
        .date();
    let actives = active_set(a.tenants, active);
    let mut tokens: HashMap<usize, String> = HashMap::new();
    if existing == 0 {
        let t0 = Instant::now();
        let next = Arc::new(AtomicUsize::new(0));
        let made: Arc<Mutex<HashMap<usize, String>>> = Arc::default();
        let wanted: Arc<HashSet<usize>> = Arc::new(actives.iter().copied().collect());
        let mut threads = Vec::new();
        for _ in 0..a.create_threads {
            let (reg, next, made, wanted) =
                (reg.clone(), next.clone(), made.clone(), wanted.clone());
            let n = a.tenants;
            threads.push(std::thread::spawn(move || -> anyhow::Result<()> {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return Ok(());
                    }
                    let token = create_tenant(&reg, i, today)
                        .with_context(|| format!("creating tenant {}", tenant_name(i)))?;
                    if wanted.contains(&i) {
                        made.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(i, token);
                    }
                    if (i + 1) % 10_000 == 0 {
                        eprintln!(
                            "created {} tenants in {:.0} s",
                            i + 1,
                            t0.elapsed().as_secs_f64()
                        );
                    }
                }
            }));
        }
        for t in threads {
            t.join()
                .map_err(|_| anyhow::anyhow!("a creating thread panicked"))??;
        }
        let took = t0.elapsed().as_secs_f64();
        println!(
            "created {} tenants through the registry and the engine with {} threads in {took:.1} s ({:.0} tenants/s)",
            a.tenants,
            a.create_threads,
            a.tenants as f64 / took
        );
        tokens = std::mem::take(&mut *made.lock().unwrap_or_else(|p| p.into_inner()));
    } else {
        if usize::try_from(existing).unwrap_or(0) != a.tenants {
            bail!(
                "database {db} holds {existing} tenants, not --tenants {}: pass --tenants {existing}",
                a.tenants
            );
        }
        // Tokens are shown once and never stored: the active tenants get new ones.
        for &i in &actives {
            let token = new_token()?;
            reg.set_token(&tenant_name(i), &token_hash(&token))?;
            tokens.insert(i, token);
        }
        println!(
            "database {db}: {existing} tenants already; new tokens for the {active} active ones"
        );
    }
    drop(reg);

    // What the tenants cost the database, live rows only (as crates/memdir-store-pg/tests/cost.rs).
    pg.exec("VACUUM FULL")?;
    pg.exec("ANALYZE")?;
    let raw = pg.int("SELECT coalesce(sum(size), 0)::bigint FROM memdir.files WHERE NOT is_dir")?;
    let sizes = pg.rows3(SIZES)?;
    let (heap, index): (i64, i64) = sizes
        .iter()
        .fold((0, 0), |(h, i), (_, a, b)| (h + a, i + b));
    let database = pg.int(&format!("SELECT pg_database_size('{db}')::bigint"))?;
    let n = a.tenants as f64;
    println!();
    println!(
        "{} tenants: {:.1} KB of files each, database {:.1} KB each ({:.2}x raw: rows {:.1} KB, indexes {:.1} KB); pg_database_size {:.1} MB",
        a.tenants,
        raw as f64 / n / 1e3,
        (heap + index) as f64 / n / 1e3,
        (heap + index) as f64 / raw.max(1) as f64,
        heap as f64 / n / 1e3,
        index as f64 / n / 1e3,
        database as f64 / 1e6
    );
    println!();
    println!("| table | rows + TOAST, B/tenant | indexes, B/tenant |");
    println!("|---|---:|---:|");
    for (t, h, i) in &sizes {
        println!("| {t} | {:.0} | {:.0} |", *h as f64 / n, *i as f64 / n);
    }

    // The statement log, when this process can read the server's log file.
    let log_file = memdir_store_pg::testing::server_log();
    let log_file = log_file.filter(|_| !a.no_statement_log);
    if log_file.is_some() {
        pg.exec(&format!("ALTER DATABASE {db} SET log_statement = 'all'"))?;
    }

    let home = tempfile::tempdir()?;
    let config = home.path().join("service.toml");
    // Rate limits far above what the client asks, so the run measures the service; no scheduled
    // sweep in the measured minutes (its batches would be counted as the requests' cost) unless
    // the sweep is what is measured.
    let jobs = if a.sweep {
        // Every tenant due now, whatever an earlier run on a kept database left: this is the
        // benchmark setting its own stage, as `VACUUM FULL` above is.
        pg.exec("UPDATE memdir.jobs SET due_ms = 0, lease_ms = 0, holder = 0 WHERE job = 'sweep'")?;
        "sweep_every = \"1h\"\ncheck_every = \"1s\"\n"
    } else {
        "sweep_every = \"off\"\n"
    };
    std::fs::write(
        &config,
        format!("[limits]\nrate_per_sec = 1000000\nrate_burst = 1000000\n[jobs]\n{jobs}"),
    )?;
    let instances_started = Instant::now();
    let mut instances = Vec::new();
    for i in 0..2 {
        let cache = home.path().join(format!("cache{i}"));
        let mut child = Command::new(memdir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", &cache)
            .env("TZ", "UTC")
            .env("MEMDIR_STORE", &url)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", memdir.display()))?;
        let mut err = BufReader::new(child.stderr.take().context("no stderr")?);
        let mut line = String::new();
        let mut said = String::new();
        let base = loop {
            line.clear();
            if err.read_line(&mut line)? == 0 {
                bail!("memdir serve exited before it listened: {said}");
            }
            said.push_str(&line);
            if let Some(rest) = line.split("memory on ").nth(1) {
                break rest.split(' ').next().unwrap_or_default().to_string();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        instances.push(Instance { child, base, cache });
    }
    let targets: Arc<Vec<Target>> = Arc::new(
        actives
            .iter()
            .map(|&i| {
                let name = tenant_name(i);
                Target {
                    index: i,
                    instance: route(&name),
                    token: tokens.remove(&i).unwrap_or_default(),
                    name,
                }
            })
            .collect(),
    );
    let on0 = targets.iter().filter(|t| t.instance == 0).count();
    println!();
    println!(
        "two `memdir serve` on {db}; {active} active tenants routed by FNV-1a of the name: {on0} to instance 0, {} to instance 1; {} in flight",
        active - on0,
        a.in_flight
    );

    // First touch: one context per active tenant, in order (each the tenant's first request on
    // its instance: the token lookup, opening the tenant).
    let (first, first_wall) = drive(&instances, &targets, active, a.in_flight, |n, _, _| {
        (n, "first context")
    })?;

    // The measured mix.
    let xacts = format!(
        "SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database WHERE datname = '{db}'"
    );
    // Counters reach pg_stat_database when a backend goes idle (at most once a second).
    std::thread::sleep(Duration::from_millis(1500));
    let xact0 = pg.int(&xacts)?;
    let log0 = log_file
        .as_ref()
        .and_then(|f| std::fs::metadata(f).ok())
        .map(|m| m.len());
    let (server0, backends0) = cpu_snapshot(&pg, db, &instances)?;
    let swept0 = counters(&instances, "memdir_jobs_sweeps_total");
    let load0 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let (mut mix, wall) = drive(
        &instances,
        &targets,
        a.requests,
        a.in_flight,
        |_, seed, n| {
            let t = (xorshift(seed) % n as u64) as usize;
            (t, pick(xorshift(seed) % 100))
        },
    )?;
    let (server1, backends1) = cpu_snapshot(&pg, db, &instances)?;
    let swept1 = counters(&instances, "memdir_jobs_sweeps_total");
    let load1 = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let statements = match (&log_file, log0) {
        (Some(f), Some(from)) => {
            // The server writes a line as it runs the statement; let the last ones land.
            std::thread::sleep(Duration::from_millis(500));
            let bytes = std::fs::read(f)?;
            let from = usize::try_from(from).unwrap_or(0).min(bytes.len());
            Some(count_statements(
                &String::from_utf8_lossy(&bytes[from..]),
                db,
            ))
        }
        _ => None,
    };
    std::thread::sleep(Duration::from_millis(1500));
    let xact1 = pg.int(&xacts)?;
    let backend_cpu: f64 = backends1
        .iter()
        .map(|(p, c)| c - backends0.get(p).copied().unwrap_or(0.0))
        .sum();
    let server_cpu = server1 - server0;
    let total: usize = mix.latencies.values().map(Vec::len).sum();

    println!();
    println!(
        "first touch: {active} contexts in {:.1} s; measured mix: {total} requests in {:.1} s ({:.0}/s)",
        first_wall.as_secs_f64(),
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64()
    );
    println!(
        "load average (1, 5, 15 min) before {}, after {}",
        load0
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        load1
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!();
    println!("| operation | requests | errors | p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|");
    let mut first = first;
    let mut rows: Vec<(&str, &mut Tally)> = vec![("first context", &mut first)];
    rows.push(("", &mut mix));
    for (only, tally) in rows {
        let ops: Vec<&'static str> = if only.is_empty() {
            vec!["context", "log", "read", "grep", "ranked (first)", "ranked"]
        } else {
            vec!["first context"]
        };
        for op in ops {
            let errors = tally.errors.get(op).copied().unwrap_or(0);
            let v = tally.latencies.entry(op).or_default();
            println!(
                "| {op} | {} | {errors} | {:.1} | {:.1} |",
                v.len(),
                pct(v, 0.5),
                pct(v, 0.99)
            );
        }
    }
    let per = |x: f64| x / total.max(1) as f64;
    println!();
    println!(
        "CPU per request of the mix: {:.2} ms ({:.2} ms the two instances, {:.2} ms PostgreSQL's backends of {db}; utime + stime from /proc)",
        per(server_cpu + backend_cpu) * 1e3,
        per(server_cpu) * 1e3,
        per(backend_cpu) * 1e3
    );
    match statements {
        Some(s) => println!(
            "statements per request of the mix: {:.2} (PostgreSQL's statement log, log_statement = 'all' on {db}; BEGIN and COMMIT counted)",
            per(s as f64)
        ),
        None if a.no_statement_log => {
            println!("statements per request: not counted (--no-statement-log)")
        }
        None => println!(
            "statements per request: not counted (the server's log is not readable here: set MEMDIR_TEST_PG_LOG)"
        ),
    }
    println!(
        "transactions per request of the mix: {:.2} (pg_stat_database xact_commit + xact_rollback of {db})",
        per((xact1 - xact0) as f64)
    );
    for (i, inst) in instances.iter().enumerate() {
        println!(
            "instance {i}: RSS {:.1} MiB (peak {:.1} MiB), local disk {:.1} MB",
            status_kib(inst.child.id(), "VmRSS:") as f64 / 1024.0,
            status_kib(inst.child.id(), "VmHWM:") as f64 / 1024.0,
            disk_bytes(&inst.cache) as f64 / 1e6
        );
    }
    let errors: u64 = first.errors.values().sum::<u64>() + mix.errors.values().sum::<u64>();
    if a.sweep {
        sweep_report(a, &instances, instances_started, &swept0, &swept1)?;
    }
    if errors > 0 {
        bail!(
            "{errors} requests failed; the first: {}",
            first.first_error.or(mix.first_error).unwrap_or_default()
        );
    }
    Ok(())
}

/// Each instance's count of `counter` on its `/metrics` (0 where it cannot be read).
fn counters(instances: &[Instance], counter: &str) -> Vec<u64> {
    instances
        .iter()
        .map(|i| {
            ureq::get(&format!("{}/metrics", i.base))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .and_then(|m| metric(&m, counter))
                .unwrap_or(0)
        })
        .collect()
}

/// A counter's value in a Prometheus text exposition.
fn metric(exposition: &str, counter: &str) -> Option<u64> {
    exposition.lines().find_map(|l| {
        l.strip_prefix(counter)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// With `--sweep`: waits until the two instances have swept every tenant (or a minute passes
/// with no progress), watches three more checks, and fails unless each tenant was swept exactly
/// once between them with no error.
fn sweep_report(
    a: &Args,
    instances: &[Instance],
    started: Instant,
    at_mix_start: &[u64],
    at_mix_end: &[u64],
) -> anyhow::Result<()> {
    let total = || -> u64 { counters(instances, "memdir_jobs_sweeps_total").iter().sum() };
    let want = a.tenants as u64;
    let (mut last, mut moved) = (total(), Instant::now());
    while last < want && moved.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(250));
        let now = total();
        if now != last {
            (last, moved) = (now, Instant::now());
        }
    }
    let all_after = started.elapsed();
    // Three more checks by each instance: nothing is swept twice in the period.
    std::thread::sleep(Duration::from_millis(3_500));
    let each = counters(instances, "memdir_jobs_sweeps_total");
    let errors: u64 = counters(instances, "memdir_jobs_sweep_errors_total")
        .iter()
        .sum();
    let swept: u64 = each.iter().sum();
    let during: u64 = at_mix_end.iter().sum::<u64>() - at_mix_start.iter().sum::<u64>();
    println!(
        "scheduled sweep: {swept} sweeps for {want} tenants (instance 0 swept {}, instance 1 {}), {errors} errors; the last within {:.1} s of the instances' start; {during} of them during the measured mix",
        each.first().copied().unwrap_or(0),
        each.get(1).copied().unwrap_or(0),
        all_after.as_secs_f64()
    );
    if swept != want || errors > 0 {
        bail!(
            "the sweep ran {swept} times for {want} tenants with {errors} errors: each tenant once was expected"
        );
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_is_read_by_its_whole_name() {
        let m = "# HELP memdir_jobs_sweeps_total Tenants swept\nmemdir_jobs_sweeps_total_x 9\nmemdir_jobs_sweeps_total 41\n";
        assert_eq!(metric(m, "memdir_jobs_sweeps_total"), Some(41));
        assert_eq!(metric(m, "memdir_jobs_sweep_errors_total"), None);
    }

    #[test]
    fn routing_is_stable_and_splits_tenants_about_evenly() {
        // FNV-1a is fixed: the same name goes to the same instance in every run.
        assert_eq!(
            route("user-0000000@example.com"),
            route("user-0000000@example.com")
        );
        let on0 = (0..10_000).filter(|&i| route(&tenant_name(i)) == 0).count();
        assert!(
            (4_500..=5_500).contains(&on0),
            "{on0} of 10,000 on instance 0"
        );
    }

    #[test]
    fn active_tenants_spread_over_all_without_repeats() {
        let a = active_set(100_000, 10_000);
        assert_eq!(a.len(), 10_000);
        assert_eq!(a[0], 0);
        assert_eq!(a[1], 10);
        assert_eq!(*a.last().unwrap(), 99_990);
        assert_eq!(active_set(20, 20), (0..20).collect::<Vec<_>>());
        let unique: HashSet<usize> = active_set(7, 5).into_iter().collect();
        assert_eq!(unique.len(), 5);
    }

    #[test]
    fn the_mix_follows_its_weights() {
        let mut counts: HashMap<&str, u64> = HashMap::new();
        for d in 0..100 {
            *counts.entry(pick(d)).or_default() += 1;
        }
        for (op, w) in MIX {
            assert_eq!(counts[op], w, "{op}");
        }
    }

    #[test]
    fn cpu_is_read_after_a_command_name_with_spaces_and_parens() {
        let stat =
            "4242 (memdir (serve) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0";
        assert_eq!(parse_cpu(stat), Some(3.25));
        assert_eq!(parse_cpu("garbage"), None);
    }

    #[test]
    fn statements_are_counted_for_the_database_only() {
        let log = "\
2026-12-06 02:00:00.000 UTC [10] postgres@bench LOG:  statement: BEGIN
2026-12-06 02:00:00.001 UTC [10] postgres@bench LOG:  execute <unnamed>: SELECT 1
2026-12-06 02:00:00.001 UTC [10] postgres@bench DETAIL:  parameters: $1 = 'x'
2026-12-06 02:00:00.002 UTC [11] postgres@other LOG:  statement: SELECT 2
2026-12-06 02:00:00.003 UTC [10] postgres@bench LOG:  duration: 1 ms
2026-12-06 02:00:00.004 UTC [10] postgres@bench LOG:  statement: COMMIT
";
        assert_eq!(count_statements(log, "bench"), 3);
        assert_eq!(count_statements(log, "other"), 1);
        assert_eq!(count_statements(log, "none"), 0);
    }
}
