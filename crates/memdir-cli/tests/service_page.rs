//! The person's page of a memory service (issue 33), on the real binary over a real
//! PostgreSQL: `memdir tenant link`, sign-in by a product's signed JWT (`[ui.sso]`), sessions
//! kept in the database so two instances and a restart agree, tenant isolation, and the walls
//! between a person's cookie and an agent's token. Skips with a message when no PostgreSQL
//! server runs (`MEMDIR_REQUIRE_PG=1` fails instead).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use memdir_store_pg::pg_or_skip;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const SSO_SECRET: &str = "a-shared-secret-of-the-product-login-0123456789";

fn memdir(store: &str, home: &Path, now: &str) -> Command {
    let mut c = Command::new(common::bin());
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MEMDIR_STORE", store)
        .env("MEMDIR_NOW", now)
        .env("TZ", "UTC")
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"));
    c
}

fn run(store: &str, home: &Path, now: &str, args: &[&str]) -> (i32, String, String) {
    let o = memdir(store, home, now).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn add(store: &str, home: &Path, name: &str) -> String {
    let (code, out, err) = run(store, home, common::NOW, &["tenant", "add", name]);
    assert_eq!(code, 0, "{err}");
    out.trim().to_string()
}

/// A running service with its page, killed when dropped.
struct Service {
    child: Child,
    base: String,
    /// What the service wrote to stderr after it started.
    log: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Service {
    fn start(store: &str, home: &Path) -> Service {
        let config = home.join("service.toml");
        std::fs::write(
            &config,
            "[ui.sso]\nhs256_secret_env = \"PRODUCT_SSO_SECRET\"\n",
        )
        .unwrap();
        let mut child = memdir(store, home, common::NOW)
            .env("PRODUCT_SSO_SECRET", SSO_SECRET)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let base = loop {
            line.clear();
            assert!(
                err.read_line(&mut line).unwrap() > 0,
                "memdir serve exited before it served the page"
            );
            if let Some(rest) = line.split("page of every tenant at ").nth(1) {
                break rest.split("/ui/").next().unwrap().to_string();
            }
        };
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut err, &mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Service { child, base, log }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Answer {
    status: u16,
    set_cookie: Option<String>,
    body: String,
}

fn send(method: &str, url: &str, headers: &[(&str, &str)], form: &[(&str, &str)]) -> Answer {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let r = if method == "GET" {
        let mut req = agent.get(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.call()
    } else {
        let mut req = agent.post(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if form.is_empty() {
            req.send("{}")
        } else {
            req.send_form(form.iter().copied())
        }
    };
    let mut r = r.unwrap();
    let set_cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Answer {
        status: r.status().as_u16(),
        set_cookie,
        body: r.body_mut().read_to_string().unwrap_or_default(),
    }
}

/// A signed-in browser.
struct Person {
    cookie: String,
    csrf: String,
}

impl Person {
    fn get(&self, s: &Service, path: &str) -> Answer {
        send("GET", &s.url(path), &[("Cookie", &self.cookie)], &[])
    }

    fn post(&self, s: &Service, path: &str, form: &[(&str, &str)]) -> Answer {
        let mut all = vec![("csrf", self.csrf.as_str())];
        all.extend_from_slice(form);
        send(
            "POST",
            &s.url(path),
            &[("Cookie", &self.cookie), ("Origin", &s.base)],
            &all,
        )
    }
}

fn csrf_in(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").expect("a csrf token") + 19;
    html[at..].split('"').next().unwrap().to_string()
}

/// Signs in on `s` by posting `field` = `value` to `action`, as the sign-in page's button does.
fn sign_in(s: &Service, action: &str, field: &str, value: &str) -> Result<Person, Answer> {
    let a = send(
        "POST",
        &s.url(action),
        &[("Origin", &s.base)],
        &[(field, value)],
    );
    if a.status != 303 {
        return Err(a);
    }
    let set = a.set_cookie.clone().expect("a session cookie");
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(set.contains(attr), "{set}");
    }
    let cookie = set.split(';').next().unwrap().to_string();
    let home = send("GET", &s.url("/ui/"), &[("Cookie", &cookie)], &[]);
    assert_eq!(home.status, 200, "{}", home.body);
    Ok(Person {
        csrf: csrf_in(&home.body),
        cookie,
    })
}

fn code_of(link: &str) -> &str {
    link.rsplit("code=").next().unwrap().trim()
}

/// `tenant link NAME --person P` at `now`, for the page at `s`.
fn link(store: &str, home: &Path, now: &str, s: &Service, tenant: &str, person: &str) -> String {
    let (code, out, err) = run(
        store,
        home,
        now,
        &[
            "tenant", "link", tenant, "--person", person, "--url", &s.base,
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with(&format!("{}/ui/signin?code=", s.base)),
        "{out}"
    );
    out.trim().to_string()
}

fn now_secs() -> i64 {
    common::NOW.parse::<jiff::Timestamp>().unwrap().as_second()
}

fn jwt(secret: &str, sub: &str, tenant: &str, exp: i64) -> String {
    let claims = serde_json::json!({"sub": sub, "tenant": tenant, "exp": exp, "aud": "memdir"});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()).unwrap(),
    )
    .unwrap()
}

fn tool(s: &Service, token: &str, name: &str, args: serde_json::Value) -> Answer {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut r = agent
        .post(&s.url(&format!("/v1/tools/{name}")))
        .header("Authorization", &format!("Bearer {token}"))
        .send(args.to_string())
        .unwrap();
    Answer {
        status: r.status().as_u16(),
        set_cookie: None,
        body: r.body_mut().read_to_string().unwrap_or_default(),
    }
}

#[test]
fn every_tenant_has_its_page_and_sees_only_its_memory() {
    let db = pg_or_skip!();
    let home = tempfile::tempdir().unwrap();
    let store = db.url("x").replace("?tenant=x", "");
    let acme = add(&store, home.path(), "acme");
    let beta = add(&store, home.path(), "beta");
    let a = Service::start(&store, home.path());
    let home_b = tempfile::tempdir().unwrap();
    let b = Service::start(&store, home_b.path());

    // Tenant beta's own files, which no one of acme may find.
    let beta_only = [
        "notes/beta-plans.md",
        "notes/deep/beta-secret.md",
        "beta-root.md",
    ];
    for p in beta_only {
        let r = tool(
            &a,
            &beta,
            "memory_write",
            serde_json::json!({"path": p, "content": format!("BETA-ONLY {p}\n")}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(!r.body.contains("\"is_error\":true"), "{}", r.body);
    }

    // A link signs in once, on either instance's page.
    let l = link(&store, home.path(), common::NOW, &a, "acme", "ana");
    let page = send("GET", &l, &[], &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    let ana = sign_in(&a, "/ui/signin", "code", code_of(&l)).unwrap();
    let again = sign_in(&a, "/ui/signin", "code", code_of(&l))
        .err()
        .unwrap();
    assert_eq!(again.status, 401);
    assert!(again.body.contains("used already"), "{}", again.body);
    let reused_page = send("GET", &l, &[], &[]);
    assert_eq!(reused_page.status, 401, "{}", reused_page.body);
    // Made 11 minutes ago: expired. Never made: forged.
    let old = link(
        &store,
        home.path(),
        "2026-11-30T09:04:00Z",
        &a,
        "acme",
        "ana",
    );
    assert_eq!(
        sign_in(&a, "/ui/signin", "code", code_of(&old))
            .err()
            .unwrap()
            .status,
        401
    );
    let forged = sign_in(&b, "/ui/signin", "code", &"ab".repeat(32))
        .err()
        .unwrap();
    assert_eq!(forged.status, 401);
    assert!(forged.body.contains("not valid"), "{}", forged.body);
    // A person's name is a writer's name.
    let (code, _, err) = run(
        &store,
        home.path(),
        common::NOW,
        &[
            "tenant", "link", "acme", "--person", "Ana <x>", "--url", &a.base,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("lowercase letters"), "{err}");
    let (code, _, err) = run(
        &store,
        home.path(),
        common::NOW,
        &["tenant", "link", "nobody", "--url", &a.base],
    );
    assert_eq!(code, 1, "{err}");

    // The session is in the database: the other instance knows it.
    let on_b = ana.get(&b, "/ui/");
    assert_eq!(on_b.status, 200, "{}", on_b.body);

    // Every path of beta is 404 to acme's person, on both instances, and never shows.
    for p in beta_only {
        for s in [&a, &b] {
            let r = ana.get(s, &format!("/ui/files/{p}"));
            assert_eq!(r.status, 404, "{p}: {}", r.body);
            assert!(!r.body.contains("BETA-ONLY"), "{p}");
            let e = ana.get(s, &format!("/ui/edit/{p}"));
            assert!(!e.body.contains("BETA-ONLY"), "{p}");
        }
    }
    let listing = ana.get(&a, "/ui/files/notes");
    assert!(!listing.body.contains("beta-plans"), "{}", listing.body);
    let found = ana.get(&a, "/ui/search?q=BETA-ONLY");
    assert_eq!(found.status, 200);
    assert!(!found.body.contains("beta-plans"), "{}", found.body);

    // What ana makes lands in acme's memory, recorded as hers, and nowhere else.
    let made = ana.post(
        &a,
        "/ui/new",
        &[
            ("name", "ana-fact"),
            ("description", "a fact ana fixed"),
            ("body", "the office moved to Lyon\n"),
        ],
    );
    assert_eq!(made.status, 303, "{}", made.body);
    let read = |token: &str| {
        tool(
            &a,
            token,
            "memory_read",
            serde_json::json!({"path": "notes/ana-fact.md"}),
        )
    };
    assert!(read(&acme).body.contains("office moved to Lyon"));
    assert!(!read(&beta).body.contains("office moved to Lyon"));
    let (code, out, err) = run(&db.url("acme"), home.path(), common::NOW, &["history"]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap_or_default();
    assert!(first.contains("ana"), "{out}");

    // An agent's token never opens the page, even beside a valid cookie; the cookie never
    // reaches the agents' routes, even beside a valid token.
    for path in ["/ui/", "/ui/files/core.md", "/ui/history", "/ui/review"] {
        let r = send(
            "GET",
            &a.url(path),
            &[
                ("Authorization", &format!("Bearer {acme}")),
                ("Cookie", &ana.cookie),
            ],
            &[],
        );
        assert_eq!(r.status, 401, "{path}");
    }
    let bearer = format!("Bearer {acme}");
    for path in ["/mcp", "/v1/tools/memory_read"] {
        let r = send(
            "POST",
            &a.url(path),
            &[("Authorization", &bearer), ("Cookie", &ana.cookie)],
            &[],
        );
        assert_eq!(r.status, 401, "{path}: {}", r.body);
        let r = send("POST", &a.url(path), &[("Cookie", &ana.cookie)], &[]);
        assert_eq!(r.status, 401, "{path}: {}", r.body);
    }

    // A product's signed token signs its user in, once.
    let t = jwt(SSO_SECRET, "bob", "beta", now_secs() + 300);
    let landing = send("GET", &b.url(&format!("/ui/sso?token={t}")), &[], &[]);
    assert_eq!(landing.status, 200, "{}", landing.body);
    let bob = sign_in(&b, "/ui/sso", "token", &t).unwrap();
    let beta_file = bob.get(&a, "/ui/files/notes/beta-plans.md");
    assert_eq!(beta_file.status, 200, "{}", beta_file.body);
    assert!(beta_file.body.contains("BETA-ONLY"));
    assert_eq!(bob.get(&a, "/ui/files/notes/ana-fact.md").status, 404);
    let reused = sign_in(&a, "/ui/sso", "token", &t).err().unwrap();
    assert_eq!(reused.status, 401);
    assert!(reused.body.contains("used already"), "{}", reused.body);
    let expired = jwt(SSO_SECRET, "bob", "beta", now_secs() - 120);
    let r = sign_in(&a, "/ui/sso", "token", &expired).err().unwrap();
    assert_eq!(r.status, 401);
    assert!(r.body.contains("expired"), "{}", r.body);
    let forged = jwt(
        "another-secret-that-the-product-never-had-xx",
        "bob",
        "beta",
        now_secs() + 300,
    );
    let r = sign_in(&a, "/ui/sso", "token", &forged).err().unwrap();
    assert_eq!(r.status, 401);
    assert!(r.body.contains("not valid"), "{}", r.body);
    let landing = send("GET", &a.url(&format!("/ui/sso?token={forged}")), &[], &[]);
    assert_eq!(landing.status, 401);
    let nowhere = jwt(SSO_SECRET, "bob", "no-such-tenant", now_secs() + 300);
    assert_eq!(
        sign_in(&a, "/ui/sso", "token", &nowhere)
            .err()
            .unwrap()
            .status,
        401
    );

    // A form with another session's CSRF token is refused.
    let crossed = send(
        "POST",
        &a.url("/ui/new"),
        &[("Cookie", &ana.cookie), ("Origin", &a.base)],
        &[("csrf", &bob.csrf), ("name", "crossed"), ("body", "x\n")],
    );
    assert_eq!(crossed.status, 403, "{}", crossed.body);

    // Sign out on one instance: the cookie is refused on the other.
    let out = ana.post(&a, "/ui/signout", &[]);
    assert_eq!(out.status, 200, "{}", out.body);
    assert_eq!(ana.get(&b, "/ui/").status, 401);
    assert_eq!(ana.get(&a, "/ui/").status, 401);

    // A restart keeps people signed in.
    drop(a);
    let a2 = Service::start(&store, home.path());
    let again = bob.get(&a2, "/ui/files/notes/beta-plans.md");
    assert_eq!(again.status, 200, "{}", again.body);

    // Without --url, the link names the page the last instance announced.
    let (code, out, err) = run(
        &store,
        home.path(),
        common::NOW,
        &["tenant", "link", "beta"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!("{}/ui/signin?code=", a2.base)),
        "{out}"
    );
}

#[test]
fn a_folder_service_says_its_page_needs_postgresql() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("service");
    let store = root.to_str().unwrap();
    add(store, home.path(), "acme");
    let (code, _, err) = run(
        store,
        home.path(),
        common::NOW,
        &["tenant", "link", "acme", "--url", "http://127.0.0.1:1"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("PostgreSQL"), "{err}");
    let (code, _, err) = run(
        store,
        home.path(),
        common::NOW,
        &["serve", "--listen", "127.0.0.1:0", "--ui"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("PostgreSQL"), "{err}");
}

const POLICY: &str = "[payment]\ntargets = [\"landlord\"]\nmax_amount = 100\napproval_above = 50\napproval_ttl = \"24h\"\n";

#[test]
fn a_gate_decision_without_a_signed_in_person_is_refused_and_recorded() {
    let db = pg_or_skip!();
    let home = tempfile::tempdir().unwrap();
    let store = db.url("x").replace("?tenant=x", "");
    add(&store, home.path(), "acme");
    let acme = db.url("acme");
    let (code, _, err) = run(
        &acme,
        home.path(),
        common::NOW,
        &["write", "gates.toml", POLICY],
    );
    assert_eq!(code, 0, "{err}");
    let out = memdir(&acme, home.path(), common::NOW)
        .env("MEMDIR_SOURCE", "agent")
        .env("MEMDIR_WRITER", "payer")
        .args([
            "--reason", "rent", "gate", "request", "payment", "--target", "landlord", "--amount",
            "80", "--json",
        ])
        .output()
        .unwrap();
    let asked: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(asked["decision"], "pending", "{asked}");
    let id = asked["id"].as_str().unwrap().to_string();
    let status = || {
        let (_, out, _) = run(
            &acme,
            home.path(),
            common::NOW,
            &["gate", "status", &id, "--json"],
        );
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let entries = || {
        let (code, out, err) = run(
            &acme,
            home.path(),
            common::NOW,
            &["gate", "verify", "--json"],
        );
        assert_eq!(code, 0, "the ledger stays intact: {err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["entries"]
            .as_u64()
            .unwrap()
    };
    let s = Service::start(&store, home.path());
    let l = link(&store, home.path(), common::NOW, &s, "acme", "ana");
    let ana = sign_in(&s, "/ui/signin", "code", code_of(&l)).unwrap();
    let form = [("id", id.as_str()), ("action", "approve")];
    let before = entries();

    // No session: refused; it names no tenant, so the service's log records it.
    let anon = send(
        "POST",
        &s.url("/ui/review/gate"),
        &[("Origin", &s.base)],
        &[("csrf", &ana.csrf), ("id", &id), ("action", "approve")],
    );
    assert_eq!(anon.status, 401, "{}", anon.body);
    assert_eq!(
        entries(),
        before,
        "no tenant's ledger is written without a session"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let log = String::from_utf8_lossy(&s.log.lock().unwrap()).into_owned();
        if log.contains(&id) && log.contains("without a signed-in person") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not in the log: {log}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // With the tenant's cookie but not the person's form: refused and recorded in the ledger.
    let forged = send(
        "POST",
        &s.url("/ui/review/gate"),
        &[("Cookie", &ana.cookie), ("Origin", &s.base)],
        &[
            ("csrf", "another-sessions-token"),
            ("id", &id),
            ("action", "approve"),
        ],
    );
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert_eq!(entries(), before + 1);
    let bearer = send(
        "POST",
        &s.url("/ui/review/gate"),
        &[
            ("Cookie", &ana.cookie),
            ("Authorization", "Bearer an-agent-token"),
            ("Origin", &s.base),
        ],
        &form,
    );
    assert_eq!(bearer.status, 401, "{}", bearer.body);
    assert_eq!(entries(), before + 2);
    let cross = send(
        "POST",
        &s.url("/ui/review/gate"),
        &[("Cookie", &ana.cookie), ("Origin", "http://evil.example")],
        &[("csrf", &ana.csrf), ("id", &id), ("action", "approve")],
    );
    assert_eq!(cross.status, 403, "{}", cross.body);
    assert_eq!(entries(), before + 3);
    assert_eq!(status()["decision"], "pending");

    // The signed-in person approves: the agent gets its token.
    let ok = ana.post(&s, "/ui/review/gate", &form);
    assert_eq!(ok.status, 303, "{}", ok.body);
    let v = status();
    assert_eq!(v["decision"], "allowed", "{v}");
}
