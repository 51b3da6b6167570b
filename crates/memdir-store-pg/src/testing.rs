//! A throwaway PostgreSQL database per test, or a clear skip when there is no server.
//!
//! Every test creates its own database (a unique name, `TEMPLATE template0`) on the server at
//! `MEMDIR_TEST_PG` (default `postgres://postgres@127.0.0.1:5432`) and drops it when done. With no
//! server the test passes after saying on stderr that it was skipped; `MEMDIR_REQUIRE_PG=1`
//! (set by `.ci/run`) turns that skip into a failure.
//!
//! Compiled with the `test-support` feature only (this crate's own tests and the CLI's use it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One test's database.
pub struct TestDb {
    /// The server, without a database name.
    server: String,
    /// The database's name.
    pub name: String,
}

fn server() -> String {
    std::env::var("MEMDIR_TEST_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// Runs SQL on the server's `postgres` database from a private runtime.
pub fn admin(server: &str, db: &str, sql: &str) -> Result<(), String> {
    let url = format!("{server}/{db}");
    let sql = sql.to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let (client, conn) = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            tokio_postgres::connect(&url, tokio_postgres::NoTls),
        )
        .await
        .map_err(|_| "timed out".to_string())?
        .map_err(|e| e.to_string())?;
        let task = tokio::spawn(conn);
        let res = client.batch_execute(&sql).await.map_err(|e| e.to_string());
        drop(client);
        let _ = task.await;
        res
    })
}

/// Runs SQL on the test server's `postgres` database.
pub fn admin_server(sql: &str) -> Result<(), String> {
    admin(&server(), "postgres", sql)
}

impl TestDb {
    /// A fresh database, or `None` (after saying so) when no server answers.
    pub fn new() -> Option<TestDb> {
        let server = server();
        let name = format!(
            "memdir_test_{}_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros())
                .unwrap_or(0),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        match admin(
            &server,
            "postgres",
            &format!("CREATE DATABASE {name} TEMPLATE template0"),
        ) {
            Ok(()) => Some(TestDb { server, name }),
            Err(e) => {
                if std::env::var("MEMDIR_REQUIRE_PG").is_ok_and(|v| v == "1") {
                    panic!(
                        "PostgreSQL is required (MEMDIR_REQUIRE_PG=1) but {server} answered: {e}"
                    );
                }
                // Straight to stderr, past the test harness's capture, so a skip is never silent.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED (no PostgreSQL at {server}: {e}); set MEMDIR_REQUIRE_PG=1 to fail instead"
                );
                None
            }
        }
    }

    /// The store URL of `tenant` in this database.
    pub fn url(&self, tenant: &str) -> String {
        format!("{}/{}?tenant={tenant}", self.server, self.name)
    }

    /// Every row of every memdir table of this database (all tenants) that holds `needle`, as
    /// `pg_dump` writes them: text as text, `bytea` as hex (the conformance suite's raw view).
    pub fn raw_hits(&self, needle: &str) -> Vec<String> {
        let out = std::process::Command::new("pg_dump")
            .arg(format!(
                "--dbname={}/{}",
                self.server.trim_end_matches('/'),
                self.name
            ))
            .args(["--data-only", "--schema=memdir"])
            .output()
            .expect("pg_dump runs");
        assert!(out.status.success(), "{out:?}");
        let dump = String::from_utf8_lossy(&out.stdout);
        let hex: String = needle.bytes().map(|b| format!("{b:02x}")).collect();
        dump.lines()
            .filter(|l| l.contains(needle) || l.contains(&hex))
            .map(|l| l.chars().take(120).collect())
            .collect()
    }

    /// Runs SQL in this database.
    pub fn sql(&self, sql: &str) -> Result<(), String> {
        admin(&self.server, &self.name, sql)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let _ = admin(
            &self.server,
            "postgres",
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// The test server's own log file, when this process can read it: `MEMDIR_TEST_PG_LOG`, else
/// the newest of Debian's `/var/log/postgresql/postgresql-*-main.log` (where `pg_ctlcluster`
/// sends the server's stderr).
pub fn server_log() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("MEMDIR_TEST_PG_LOG") {
        return Some(p.into());
    }
    let dir = std::fs::read_dir("/var/log/postgresql").ok()?;
    dir.filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("postgresql-") && n.ends_with("-main.log")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
        .filter(|p| std::fs::File::open(p).is_ok())
}

/// Counts the statements PostgreSQL runs for one database, from the server's own log: the
/// database is set to `log_statement = 'all'` (new sessions only), and [`StatementLog::during`]
/// returns the statements logged for it while a closure ran, between two marker queries.
pub struct StatementLog<'a> {
    db: &'a TestDb,
    file: std::path::PathBuf,
    marks: AtomicU64,
}

impl<'a> StatementLog<'a> {
    /// Turns statement logging on for `db`; `None` (after saying why) when the server's log
    /// cannot be read here. Connections opened before this call are not logged.
    pub fn new(db: &'a TestDb) -> Option<StatementLog<'a>> {
        let Some(file) = server_log() else {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (the PostgreSQL server's log is not readable here: set MEMDIR_TEST_PG_LOG)"
            );
            return None;
        };
        db.sql(&format!(
            "ALTER DATABASE {} SET log_statement = 'all'",
            db.name
        ))
        .unwrap();
        Some(StatementLog {
            db,
            file,
            marks: AtomicU64::new(0),
        })
    }

    fn mark(&self) -> String {
        let n = self.marks.fetch_add(1, Ordering::Relaxed);
        let m = format!("memdir-mark-{}-{n}", self.db.name);
        self.db.sql(&format!("SELECT '{m}'")).unwrap();
        m
    }

    /// The statements (as logged: `statement: ...` or `execute <name>: ...`, first line) that
    /// sessions of this database ran while `f` ran.
    pub fn during<T>(&self, f: impl FnOnce() -> T) -> (T, Vec<String>) {
        let from = self.mark();
        let out = f();
        let to = self.mark();
        let me = format!("@{} LOG:  ", self.db.name);
        let mut lines = Vec::new();
        // The server writes each line as it runs the statement; wait for the closing mark.
        for _ in 0..100 {
            let text = std::fs::read(&self.file).unwrap_or_default();
            let text = String::from_utf8_lossy(&text);
            let Some(start) = text.find(&format!("'{from}'")) else {
                std::thread::sleep(std::time::Duration::from_millis(50));
                continue;
            };
            let Some(end) = text[start..].find(&format!("'{to}'")) else {
                std::thread::sleep(std::time::Duration::from_millis(50));
                continue;
            };
            // Up to the line that holds the closing mark.
            let end = text[start..start + end].rfind('\n').unwrap_or(0);
            let between = &text[start..start + end];
            // The line that holds the opening mark is skipped, the closing mark's is cut off.
            lines = between
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once(&me).map(|(_, s)| s))
                .filter(|s| s.starts_with("statement: ") || s.starts_with("execute "))
                .filter(|s| !s.contains("memdir-mark-"))
                .map(str::to_string)
                .collect();
            break;
        }
        (out, lines)
    }
}

/// A fresh database for this test, or return from the test (skipped).
#[macro_export]
macro_rules! pg_or_skip {
    () => {
        match $crate::testing::TestDb::new() {
            Some(db) => db,
            None => return,
        }
    };
}

/// A pgbouncer of its own in transaction mode in front of the test server (issue 35): on a free
/// loopback port, any user name let through as the server's, killed when dropped.
pub struct Pgbouncer {
    child: std::process::Child,
    port: u16,
    user: String,
    dir: std::path::PathBuf,
}

impl Pgbouncer {
    /// Starts one in front of `db`'s server, or `None` (after saying so) when pgbouncer is not
    /// installed; `MEMDIR_REQUIRE_PGBOUNCER=1` (set by `.ci/run`) turns that into a failure.
    pub fn start(db: &TestDb) -> Option<Pgbouncer> {
        Pgbouncer::start_sized(db, 40)
    }

    /// [`Pgbouncer::start`] with at most `pool_size` server connections per database: with one,
    /// every client shares one server connection, so a named statement one client leaves
    /// there is in the next client's way.
    pub fn start_sized(db: &TestDb, pool_size: usize) -> Option<Pgbouncer> {
        let bin = ["pgbouncer", "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
            .into_iter()
            .find(|b| {
                std::process::Command::new(b)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            });
        let Some(bin) = bin else {
            if std::env::var("MEMDIR_REQUIRE_PGBOUNCER").is_ok_and(|v| v == "1") {
                panic!("pgbouncer is required (MEMDIR_REQUIRE_PGBOUNCER=1) but is not installed");
            }
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (pgbouncer is not installed: apt-get install pgbouncer); set MEMDIR_REQUIRE_PGBOUNCER=1 to fail instead"
            );
            return None;
        };
        let config: tokio_postgres::Config = db.server.parse().unwrap();
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => "127.0.0.1".to_string(),
        };
        let server_port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("postgres").to_string();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!(
            "memdir-pgbouncer-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        // pgbouncer refuses to run as root: then it runs as `nobody`, which reads the config.
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ini = dir.join("pgbouncer.ini");
        std::fs::write(
            &ini,
            format!(
                "[databases]\n* = host={host} port={server_port} user={user}\n\
                 [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
                 auth_type = any\npool_mode = transaction\nmax_client_conn = 1000\n\
                 default_pool_size = {pool_size}\nunix_socket_dir =\n\
                 ignore_startup_parameters = extra_float_digits,options\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("pgbouncer.log")).unwrap();
        let mut cmd = std::process::Command::new(bin);
        if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
            cmd.args(["-u", "nobody"]);
        }
        let child = cmd
            .arg(&ini)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let bouncer = Pgbouncer {
            child,
            port,
            user,
            dir,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "pgbouncer did not listen: {}",
                std::fs::read_to_string(bouncer.dir.join("pgbouncer.log")).unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(bouncer)
    }

    /// The store URL of `tenant` in `db`, through this pgbouncer; without a tenant (`None`),
    /// the URL a service root takes.
    pub fn url(&self, db: &TestDb, tenant: Option<&str>) -> String {
        let base = format!(
            "postgres://{}@127.0.0.1:{}/{}",
            self.user, self.port, db.name
        );
        match tenant {
            Some(t) => format!("{base}?tenant={t}"),
            None => base,
        }
    }

    /// The names of the prepared statements on the server connection this query lands on
    /// (with a pool of one, the only one), asked through this pgbouncer.
    pub fn prepared_statements(&self, db: &TestDb) -> Vec<String> {
        let url = self.url(db, None);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let task = tokio::spawn(conn);
            let rows = client
                .simple_query("SELECT name FROM pg_prepared_statements ORDER BY name")
                .await
                .unwrap();
            drop(client);
            let _ = task.await;
            rows.into_iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                    _ => None,
                })
                .collect()
        })
    }

    /// What pgbouncer logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for Pgbouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
