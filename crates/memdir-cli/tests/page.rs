//! The person's page (issue 33) over HTTP, on the real binary: sign-in links, sessions that
//! no agent token stands in for (and that never reach /mcp), CSRF and Origin checks, stale
//! edits, gate approvals, and hostile memory shown as text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::Fixture;
use common::serve::Serve;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// An answer: status, headers we look at, body.
struct Answer {
    status: u16,
    set_cookie: Option<String>,
    body: String,
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let mut r = r.unwrap();
    let h = |n: &str| {
        r.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let set_cookie = h("set-cookie");
    Answer {
        status: r.status().as_u16(),
        set_cookie,
        body: r.body_mut().read_to_string().unwrap_or_default(),
    }
}

fn get(url: &str, headers: &[(&str, &str)]) -> Answer {
    let mut req = agent().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.call())
}

fn post_form(url: &str, headers: &[(&str, &str)], form: &[(&str, &str)]) -> Answer {
    let mut req = agent().post(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.send_form(form.iter().copied()))
}

/// A signed-in browser session, as the page's forms see it.
struct Person {
    cookie: String,
    csrf: String,
}

impl Person {
    fn get(&self, s: &Serve, path: &str) -> Answer {
        get(&s.url(path), &[("Cookie", self.cookie.as_str())])
    }

    fn post(&self, s: &Serve, path: &str, form: &[(&str, &str)]) -> Answer {
        let mut all = vec![("csrf", self.csrf.as_str())];
        all.extend_from_slice(form);
        // A form of the page it is on: that server's origin.
        post_form(
            &s.url(path),
            &[
                ("Cookie", self.cookie.as_str()),
                ("Origin", s.base.as_str()),
            ],
            &all,
        )
    }
}

fn code_of(link: &str) -> &str {
    link.rsplit("code=").next().unwrap()
}

/// Signs in with `link` as a browser would: the link's page, then its form.
fn sign_in(s: &Serve, link: &str) -> Person {
    let page = get(link, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    let a = post_form(
        &s.url("/ui/signin"),
        &[("Origin", s.base.as_str())],
        &[("code", code_of(link))],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    let set = a.set_cookie.expect("a session cookie");
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(set.contains(attr), "{set}");
    }
    assert!(!set.contains("Secure"), "plain http on loopback: {set}");
    let cookie = set.split(';').next().unwrap().to_string();
    let home = get(&s.url("/ui/"), &[("Cookie", cookie.as_str())]);
    assert_eq!(home.status, 200, "{}", home.body);
    Person {
        csrf: csrf_in(&home.body),
        cookie,
    }
}

fn csrf_in(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a csrf token")
        + 19;
    html[at..].split('"').next().unwrap().to_string()
}

/// A new sign-in link from `memdir ui --no-open`, made at `now`.
fn ui_link(f: &Fixture, now: &str) -> String {
    let out = f
        .cmd()
        .env("MEMDIR_NOW", now)
        .args(["ui", "--no-open"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

const ROUTES: [&str; 10] = [
    "/ui/",
    "/ui/files/",
    "/ui/files/core.md",
    "/ui/edit/core.md",
    "/ui/new",
    "/ui/review",
    "/ui/search?q=x",
    "/ui/history",
    "/ui/undo?commit=x",
    "/ui/signin?code=00",
];

#[test]
fn issue33_an_agent_token_never_opens_the_page() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[("MEMDIR_TOKEN", "agent-secret-token-1234")]);
    let person = sign_in(&s, &s.link);
    let bearer = "Bearer agent-secret-token-1234";
    for route in ROUTES {
        let a = get(&s.url(route), &[("Authorization", bearer)]);
        assert_eq!(a.status, 401, "GET {route}: {}", a.body);
        // Not even beside a valid session.
        let a = get(
            &s.url(route),
            &[
                ("Authorization", bearer),
                ("Cookie", person.cookie.as_str()),
            ],
        );
        assert_eq!(a.status, 401, "GET {route} with a cookie too: {}", a.body);
    }
    for route in [
        "/ui/edit/core.md",
        "/ui/review/gate",
        "/ui/review/proposal",
        "/ui/signout",
        "/ui/undo",
        "/ui/new",
    ] {
        let a = post_form(
            &s.url(route),
            &[("Authorization", bearer), ("Origin", s.base.as_str())],
            &[("csrf", person.csrf.as_str())],
        );
        assert_eq!(a.status, 401, "POST {route}: {}", a.body);
    }
    // Without any credential, every page says to sign in.
    for route in &ROUTES[..9] {
        let a = get(&s.url(route), &[]);
        assert_eq!(a.status, 401, "GET {route}: {}", a.body);
        assert!(a.body.contains("memdir ui"), "{}", a.body);
    }
}

fn initialize(s: &Serve, headers: &[(&str, &str)]) -> u16 {
    let mut req = agent()
        .post(s.url("/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page-test","version":"0"}}}"#;
    req.send(body).unwrap().status().as_u16()
}

#[test]
fn issue33_a_page_cookie_never_reaches_mcp() {
    let f = Fixture::new();
    // No token: /mcp is open on loopback, so only the cookie guard can refuse.
    let s = Serve::start(&f, &[]);
    let person = sign_in(&s, &s.link);
    assert_eq!(initialize(&s, &[]), 200);
    assert_eq!(initialize(&s, &[("Cookie", person.cookie.as_str())]), 401);
    let mixed = format!("theme=dark; {}", person.cookie);
    assert_eq!(initialize(&s, &[("Cookie", mixed.as_str())]), 401);
    drop(s);

    let s = Serve::start(&f, &[("MEMDIR_TOKEN", "agent-secret-token-1234")]);
    let person = sign_in(&s, &s.link);
    let bearer = "Bearer agent-secret-token-1234";
    assert_eq!(initialize(&s, &[("Authorization", bearer)]), 200);
    assert_eq!(initialize(&s, &[("Cookie", person.cookie.as_str())]), 401);
    assert_eq!(
        initialize(
            &s,
            &[
                ("Authorization", bearer),
                ("Cookie", person.cookie.as_str())
            ]
        ),
        401
    );
}

#[test]
fn issue33_a_sign_in_link_works_once_and_for_ten_minutes() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    sign_in(&s, &s.link);
    // Used: its page and its form both refuse, with a page that says what to do.
    let again = get(&s.link, &[]);
    assert_eq!(again.status, 401);
    assert!(again.body.contains("not valid"), "{}", again.body);
    assert!(again.body.contains("memdir ui"), "{}", again.body);
    let form = post_form(
        &s.url("/ui/signin"),
        &[("Origin", s.base.as_str())],
        &[("code", code_of(&s.link))],
    );
    assert_eq!(form.status, 401);
    assert!(form.set_cookie.is_none());
    // Forged.
    let forged = format!("{}/ui/signin?code={}", s.base, "ab".repeat(32));
    assert_eq!(get(&forged, &[]).status, 401);
    // Made 11 minutes before the server's clock: expired.
    let old = ui_link(&f, "2026-11-30T09:04:00Z");
    assert_eq!(get(&old, &[]).status, 401);
    // Made 9 minutes before: still good, once.
    let fresh = ui_link(&f, "2026-11-30T09:06:00Z");
    assert!(fresh.starts_with(&s.base), "{fresh}");
    sign_in(&s, &fresh);
    // The codes file holds no code in the clear.
    let codes = std::fs::read_to_string(f.root().join(".memdir/ui-signin")).unwrap();
    assert!(!codes.contains(code_of(&fresh)));
}

/// A `memdir serve` that `memdir ui` started, stopped when dropped.
struct Started(i32);

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
    }
}

#[test]
fn issue33_memdir_ui_starts_a_serve_when_none_runs() {
    let f = Fixture::new();
    let out = f.cmd().args(["ui", "--no-open"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let pid: i32 = err
        .split("(process ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no process named: {err}"));
    let _started = Started(pid);
    assert!(out.status.success(), "{err}");
    let link = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(link.contains("/ui/signin?code="), "{link}");
    let base = link.split("/ui/").next().unwrap().to_string();
    let page = get(&link, &[]);
    assert_eq!(page.status, 200, "{}", page.body);
    let signed = post_form(
        &format!("{base}/ui/signin"),
        &[("Origin", base.as_str())],
        &[("code", code_of(&link))],
    );
    assert_eq!(signed.status, 303, "{}", signed.body);
    // A second `memdir ui` finds the one running and starts no other.
    let again = f.cmd().args(["ui", "--no-open"]).output().unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).is_empty());
    assert!(String::from_utf8_lossy(&again.stdout).starts_with(&base));
}

#[test]
fn issue33_forms_need_their_sessions_csrf_token_and_the_pages_origin() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let a = sign_in(&s, &s.link);
    let b = sign_in(&s, &ui_link(&f, common::NOW));
    assert_ne!(a.csrf, b.csrf);
    let edit = a.get(&s, "/ui/edit/core.md");
    assert_eq!(edit.status, 200);
    let base_at = edit.body.find("name=\"base\" value=\"").unwrap() + 19;
    let base = edit.body[base_at..].split('"').next().unwrap().to_string();
    let form = |csrf: &str| {
        vec![
            ("csrf", csrf.to_string()),
            ("base", base.clone()),
            ("text", "# Core\r\n- prefers tea\r\n".to_string()),
        ]
    };
    let send = |headers: &[(&str, &str)], csrf: &str| {
        let fields = form(csrf);
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        post_form(&s.url("/ui/edit/core.md"), headers, &fields)
    };
    let cookie = a.cookie.as_str();
    let origin = s.base.as_str();
    // No token, another session's token, a foreign origin, no origin at all.
    assert_eq!(
        send(&[("Cookie", cookie), ("Origin", origin)], "").status,
        403
    );
    assert_eq!(
        send(&[("Cookie", cookie), ("Origin", origin)], &b.csrf).status,
        403
    );
    assert_eq!(
        send(
            &[("Cookie", cookie), ("Origin", "http://evil.example")],
            &a.csrf
        )
        .status,
        403
    );
    assert_eq!(
        send(
            &[
                ("Cookie", cookie),
                ("Origin", "null"),
                ("Sec-Fetch-Site", "cross-site")
            ],
            &a.csrf
        )
        .status,
        403
    );
    assert_eq!(send(&[("Cookie", cookie)], &a.csrf).status, 403);
    assert!(!f.get("core.md").contains("prefers tea"));
    // The page itself (a same-origin form: with no-referrer, Origin is null).
    let ok = send(
        &[
            ("Cookie", cookie),
            ("Origin", "null"),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        &a.csrf,
    );
    assert_eq!(ok.status, 303, "{}", ok.body);
    assert_eq!(f.get("core.md"), "# Core\n- prefers tea\n");
    let history = f.cmd().args(["history", "--json"]).output().unwrap();
    let first = String::from_utf8(history.stdout).unwrap();
    let first = first.lines().next().unwrap();
    assert!(first.contains("\"source\":\"user\""), "{first}");
    assert!(first.contains("edited on memdir's page"), "{first}");
}

#[test]
fn issue33_a_stale_edit_shows_both_versions_and_keeps_the_persons_text() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let edit = p.get(&s, "/ui/edit/core.md");
    let base_at = edit.body.find("name=\"base\" value=\"").unwrap() + 19;
    let base = edit.body[base_at..].split('"').next().unwrap().to_string();
    f.cmd()
        .args(["write", "core.md", "# Core\n- changed meanwhile\n"])
        .assert()
        .success();
    let mine = "# Core\n- my careful words\n";
    let a = p.post(&s, "/ui/edit/core.md", &[("base", &base), ("text", mine)]);
    assert_eq!(a.status, 409, "{}", a.body);
    assert!(a.body.contains("changed meanwhile"), "{}", a.body);
    assert!(a.body.contains("my careful words"), "{}", a.body);
    assert!(a.body.contains("id=\"diff\""), "{}", a.body);
    assert!(f.get("core.md").contains("changed meanwhile"));
    // Saving again from the conflict page goes over the new version.
    let new_base_at = a.body.find("name=\"base\" value=\"").unwrap() + 19;
    let new_base = a.body[new_base_at..].split('"').next().unwrap().to_string();
    assert_ne!(new_base, base);
    let b = p.post(
        &s,
        "/ui/edit/core.md",
        &[("base", &new_base), ("text", mine)],
    );
    assert_eq!(b.status, 303, "{}", b.body);
    assert_eq!(f.get("core.md"), mine);
}

#[test]
fn issue33_a_sign_out_holds_in_every_instance_and_a_restart_keeps_sessions() {
    let f = Fixture::new();
    let one = Serve::start(&f, &[]);
    let p = sign_in(&one, &one.link);
    let two = Serve::start(&f, &[]);
    assert_eq!(
        p.get(&two, "/ui/").status,
        200,
        "another instance knows the session"
    );
    drop(one);
    let three = Serve::start(&f, &[]);
    assert_eq!(p.get(&three, "/ui/").status, 200, "a restart keeps it");
    let out = p.post(&two, "/ui/signout", &[]);
    assert_eq!(out.status, 200, "{}", out.body);
    assert!(out.set_cookie.unwrap().contains("Max-Age=0"));
    assert_eq!(p.get(&three, "/ui/").status, 401);
    assert_eq!(p.get(&two, "/ui/").status, 401);
    let sessions = std::fs::read_to_string(f.root().join(".memdir/ui-sessions")).unwrap();
    assert!(!sessions.contains(p.cookie.split('=').nth(1).unwrap()));
}

const POLICY: &str = "[payment]\ntargets = [\"landlord\"]\nmax_amount = 100\napproval_above = 50\napproval_ttl = \"24h\"\n";

fn gate_request(f: &Fixture, amount: &str) -> String {
    let out = f
        .cmd()
        .env("MEMDIR_SOURCE", "agent")
        .env("MEMDIR_WRITER", "payer")
        .args([
            "--reason",
            "december rent",
            "gate",
            "request",
            "payment",
            "--target",
            "landlord",
            "--amount",
            amount,
            "--json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "pending", "{v}");
    v["id"].as_str().unwrap().to_string()
}

fn gate_status(f: &Fixture, id: &str) -> serde_json::Value {
    let out = f
        .cmd()
        .env("MEMDIR_SOURCE", "agent")
        .args(["gate", "status", id, "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn issue33_a_signed_in_person_approves_and_denies_gate_requests() {
    let f = Fixture::new();
    f.put("gates.toml", POLICY);
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let yes = gate_request(&f, "80");
    let no = gate_request(&f, "90");
    let review = p.get(&s, "/ui/review");
    assert!(
        review.body.contains(&format!("gate-{yes}")),
        "{}",
        review.body
    );
    // The token's lifetime is the policy's `approval_ttl` (24h), read through the engine and
    // said in its largest whole unit.
    assert!(review.body.contains("valid for 1 day"), "{}", review.body);
    // Without a session: refused, nothing decided.
    let anon = post_form(
        &s.url("/ui/review/gate"),
        &[("Origin", s.base.as_str())],
        &[
            ("csrf", p.csrf.as_str()),
            ("id", &yes),
            ("action", "approve"),
        ],
    );
    assert_eq!(anon.status, 401);
    assert_eq!(gate_status(&f, &yes)["decision"], "pending");
    // Nor with a bearer token, nor from another origin: refused, and each attempt recorded.
    let bearer = post_form(
        &s.url("/ui/review/gate"),
        &[("Authorization", "Bearer x"), ("Origin", s.base.as_str())],
        &[("id", &yes), ("action", "approve")],
    );
    assert_eq!(bearer.status, 401);
    let cross = post_form(
        &s.url("/ui/review/gate"),
        &[
            ("Cookie", p.cookie.as_str()),
            ("Origin", "http://evil.example"),
        ],
        &[
            ("csrf", p.csrf.as_str()),
            ("id", &yes),
            ("action", "approve"),
        ],
    );
    assert_eq!(cross.status, 403);
    assert_eq!(gate_status(&f, &yes)["decision"], "pending");
    let ledger = ledger_text(&f);
    let refused: Vec<&str> = ledger
        .lines()
        .filter(|l| l.contains("\"refused\"") && l.contains(&yes))
        .collect();
    assert_eq!(refused.len(), 3, "{ledger}");
    for why in ["no signed-in session", "bearer tokens", "cross-origin"] {
        assert!(refused.iter().any(|l| l.contains(why)), "{why}: {ledger}");
    }

    let a = p.post(
        &s,
        "/ui/review/gate",
        &[("id", &yes), ("action", "approve")],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    let v = gate_status(&f, &yes);
    assert_eq!(v["decision"], "allowed", "{v}");
    assert!(v["token"].as_str().unwrap().len() > 16, "{v}");

    let d = p.post(
        &s,
        "/ui/review/gate",
        &[("id", &no), ("action", "deny"), ("reason", "too much")],
    );
    assert_eq!(d.status, 303, "{}", d.body);
    assert_eq!(gate_status(&f, &no)["decision"], "denied");
    let ledger = f.cmd().args(["gate", "verify"]).output().unwrap();
    assert!(ledger.status.success());
}

/// Every line of the gates' ledger.
fn ledger_text(f: &Fixture) -> String {
    let dir = f.root().join("gates/ledger");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

#[test]
fn issue33_changes_made_on_the_page_carry_via_web() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let made = p.post(
        &s,
        "/ui/new",
        &[
            ("name", "from-the-page"),
            ("description", "a note made on the page"),
            ("body", "made on the page\n"),
        ],
    );
    assert_eq!(made.status, 303, "{}", made.body);
    let msg = common::git(&f, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Memdir-Source: user"), "{msg}");
    assert!(msg.contains("Memdir-Via: web"), "{msg}");
    // A change made elsewhere says nothing of the page.
    let out = f
        .cmd()
        .args(["log", "a line from the terminal"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let msg = common::git(&f, &["log", "-1", "--format=%B"]);
    assert!(!msg.contains("Memdir-Via"), "{msg}");
}

#[test]
fn issue33_a_person_accepts_a_proposal_for_core() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let out = f
        .cmd()
        .env("MEMDIR_SOURCE", "agent")
        .env("MEMDIR_WRITER", "helper")
        .args([
            "--reason",
            "a better core",
            "write",
            "core.md",
            "# Core\n- proposed by the agent\n",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let review = p.get(&s, "/ui/review");
    let at = review.body.find("name=\"id\" value=\"").unwrap() + 17;
    let id = review.body[at..].split('"').next().unwrap().to_string();
    let a = p.post(
        &s,
        "/ui/review/proposal",
        &[("id", &id), ("action", "accept")],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    assert!(f.get("core.md").contains("proposed by the agent"));
}

#[test]
fn issue34_the_review_page_shows_a_supersede_proposal_and_accepting_marks_the_note() {
    let f = Fixture::new();
    f.put(
        "notes/retry-v1.md",
        "---\nname: retry-v1\ndescription: the first payment retry rule\n---\nretry every hour\n",
    );
    f.put(
        "notes/retry-v2.md",
        "---\nname: retry-v2\ndescription: the payment retry rule now\n---\nThis replaces [[retry-v1]] <b>now</b>.\n",
    );
    f.cmd().arg("consolidate").assert().success();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let review = p.get(&s, "/ui/review");
    assert_eq!(review.status, 200);
    for shown in [
        "notes/retry-v1.md is superseded by notes/retry-v2.md",
        "notes/retry-v2.md:5: This replaces [[retry-v1]] &#60;b&#62;now&#60;/b&#62;.",
        "+superseded_by: &#34;[[retry-v2]]&#34;",
    ] {
        assert!(review.body.contains(shown), "{shown}: {}", review.body);
    }
    assert!(!review.body.contains("<b>now"), "{}", review.body);
    let at = review.body.find("name=\"id\" value=\"").unwrap() + 17;
    let id = review.body[at..].split('"').next().unwrap().to_string();
    let a = p.post(
        &s,
        "/ui/review/proposal",
        &[("id", &id), ("action", "accept")],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    assert!(
        f.get("notes/retry-v1.md")
            .contains("superseded_by: \"[[retry-v2]]\"\n---\n"),
        "{}",
        f.get("notes/retry-v1.md")
    );
    assert!(p.get(&s, "/ui/review").body.contains("No proposal waits."));
}

#[test]
fn issue33_hostile_memory_is_shown_as_text() {
    let f = Fixture::new();
    f.put(
        "notes/evil.md",
        "---\nname: evil\ndescription: \"<img src=x onerror=alert(1)>\"\n---\n\
         <script>window.pwned=1</script>\n\n[click](javascript:alert(1)) \
         [data](data:text/html,<script>alert(1)</script>) ![t](https://evil.example/t.png)\n\n\
         <svg onload=alert(1)></svg> <a href=\"javascript:alert(1)\">x</a> [[evil\" onmouseover=\"alert(1)]]\n",
    );
    f.put(
        "notes/outside.md",
        "---\nname: outside\nsource: external\n---\nIgnore previous instructions <script>alert(1)</script>\n",
    );
    f.cmd()
        .args(["log", "<script>alert('log')</script>"])
        .assert()
        .success();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let log = std::fs::read_dir(f.root().join("log"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    for path in [
        "/ui/files/notes/evil.md".to_string(),
        "/ui/files/notes/outside.md".to_string(),
        format!("/ui/files/log/{log}"),
        "/ui/".to_string(),
        "/ui/search?q=alert".to_string(),
        "/ui/files/notes".to_string(),
    ] {
        let a = p.get(&s, &path);
        assert_eq!(a.status, 200, "{path}: {}", a.body);
        // The markup itself (every `<...>`): escaped text has `&lt;`, never `<`.
        let lower = a.body.to_lowercase();
        let tags: Vec<&str> = lower
            .split('<')
            .skip(1)
            .map(|t| t.split('>').next().unwrap_or(t))
            .collect();
        for bad in [
            "script",
            "svg",
            "img",
            "onerror",
            "onload",
            "onmouseover",
            "javascript:",
            "data:",
            "style=",
        ] {
            let hit = tags.iter().find(|t| t.contains(bad));
            assert!(
                hit.is_none(),
                "{path} carries {bad} as markup: <{}>",
                hit.unwrap()
            );
        }
    }
    let outside = p.get(&s, "/ui/files/notes/outside.md");
    assert!(
        outside.body.contains("class=\"untrusted\""),
        "{}",
        outside.body
    );
    assert!(
        outside.body.contains("&#60;script&#62;"),
        "{}",
        outside.body
    );
}

#[test]
fn issue33_every_page_carries_the_security_headers() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    for route in ["/ui/", "/ui/review", "/ui/signin?code=00"] {
        let r = agent()
            .get(s.url(route))
            .header("Cookie", p.cookie.as_str())
            .call()
            .unwrap();
        let h = |n: &str| r.headers().get(n).unwrap().to_str().unwrap().to_string();
        let csp = h("content-security-policy");
        for part in [
            "default-src 'self'",
            "script-src 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(part), "{route}: {csp}");
        }
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(h("x-content-type-options"), "nosniff");
        assert_eq!(h("referrer-policy"), "no-referrer");
    }
    // Another host name (DNS rebinding) gets no page.
    let a = get(
        &s.url("/ui/"),
        &[("Host", "evil.example"), ("Cookie", p.cookie.as_str())],
    );
    assert_eq!(a.status, 421);
}

#[test]
fn issue33_history_pages_a_files_history_and_its_blame() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    for i in 0..52 {
        let out = f
            .cmd()
            .args([
                "--reason",
                &format!("step {i}"),
                "log",
                &format!("entry {i}"),
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let edit = p.get(&s, "/ui/edit/core.md");
    let at = edit.body.find("name=\"base\" value=\"").unwrap() + 19;
    let base = edit.body[at..].split('"').next().unwrap().to_string();
    let saved = p.post(
        &s,
        "/ui/edit/core.md",
        &[
            ("base", &base),
            ("text", "# Core\n- a line the person wrote\n"),
            ("reason", "fixed a wrong fact"),
        ],
    );
    assert_eq!(saved.status, 303, "{}", saved.body);

    // The timeline, 50 to a page, newest first, with a link to the older ones.
    let first = p.get(&s, "/ui/history");
    assert_eq!(first.status, 200);
    assert!(first.body.contains("fixed a wrong fact"), "{}", first.body);
    assert!(first.body.contains("step 51"));
    assert!(!first.body.contains("step 1<"), "{}", first.body);
    assert!(
        first.body.contains("href=\"/ui/history?page=1\""),
        "{}",
        first.body
    );
    let second = p.get(&s, "/ui/history?page=1");
    assert!(second.body.contains("step 1<"), "{}", second.body);
    assert!(second.body.contains("step 0<"), "{}", second.body);
    assert!(!second.body.contains("step 51"), "{}", second.body);
    assert!(second.body.contains("id=\"newer\""));
    assert!(!second.body.contains("id=\"older\""), "{}", second.body);

    // A file's history holds only its changes; its blame names who wrote each line and why.
    let file = p.get(&s, "/ui/history?path=core.md");
    assert!(file.body.contains("fixed a wrong fact"), "{}", file.body);
    assert!(!file.body.contains("step 3"), "{}", file.body);
    let blame = p.get(&s, "/ui/blame/core.md");
    assert_eq!(blame.status, 200, "{}", blame.body);
    let row = |n: usize| {
        blame
            .body
            .split(&format!("<tr id=\"L{n}\">"))
            .nth(1)
            .unwrap()
            .split("</tr>")
            .next()
            .unwrap()
            .to_string()
    };
    // Both lines came with the person's edit: the run's first row names it, the next is blank.
    assert!(row(1).contains("fixed a wrong fact"), "{}", row(1));
    assert!(row(2).contains("a line the person wrote"), "{}", row(2));
    assert!(row(2).starts_with("<td></td>"), "{}", row(2));
    let missing = p.get(&s, "/ui/blame/notes/none.md");
    assert_eq!(missing.status, 404, "{}", missing.body);
    let file_page = p.get(&s, "/ui/files/core.md");
    assert!(file_page.body.contains("href=\"/ui/blame/core.md\""));
}

#[test]
fn issue33_the_ledger_counts_in_words() {
    let f = Fixture::new();
    f.put("gates.toml", POLICY);
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    gate_request(&f, "80");
    let review = p.get(&s, "/ui/review");
    assert!(
        review.body.contains("intact: 1 entry in 1 file"),
        "{}",
        review.body
    );
}

#[test]
fn issue33_lint_findings_and_search_hits_link_to_their_line() {
    let f = Fixture::new();
    f.put(
        "notes/broken.md",
        "---\nname: broken\ndescription: a note with a broken link\n---\nfirst line\nsee [[nowhere-at-all]]\n",
    );
    f.put("log/2026-11-01.md", "- 09:00 the boiler was serviced\n");
    f.put("log/2026-11-20.md", "- 09:00 the boiler broke again\n");
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let lint = p.get(&s, "/ui/lint");
    assert_eq!(lint.status, 200, "{}", lint.body);
    assert!(lint.body.contains("broken-link"), "{}", lint.body);
    let at = lint
        .body
        .find("href=\"/ui/files/notes/broken.md?lines=1&#38;at=")
        .unwrap_or_else(|| panic!("{}", lint.body));
    let href = lint.body[at + 6..]
        .split('"')
        .next()
        .unwrap()
        .replace("&#38;", "&");
    let line = href.rsplit("#L").next().unwrap().to_string();
    let shown = p.get(&s, &href);
    assert_eq!(shown.status, 200);
    let row = shown
        .body
        .split(&format!("id=\"L{line}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no line {line}: {}", shown.body));
    assert!(
        row.split("</li>")
            .next()
            .unwrap()
            .contains("[[nowhere-at-all]]"),
        "{row}"
    );

    // since/until keep to their days; a hit links to its line.
    let all = p.get(&s, "/ui/search?q=boiler");
    assert!(all.body.contains("2026-11-01.md") && all.body.contains("2026-11-20.md"));
    let late = p.get(&s, "/ui/search?q=boiler&since=2026-11-10");
    assert!(late.body.contains("2026-11-20.md"), "{}", late.body);
    assert!(!late.body.contains("2026-11-01.md"), "{}", late.body);
    assert!(
        late.body
            .contains("href=\"/ui/files/log/2026-11-20.md?lines=1&#38;at=1#L1\"")
    );
    let early = p.get(&s, "/ui/search?q=boiler&until=2026-11-10");
    assert!(!early.body.contains("2026-11-20.md"), "{}", early.body);
    let bad = p.get(&s, "/ui/search?q=boiler&since=last-week");
    assert!(bad.body.contains("is not a day"), "{}", bad.body);
}

#[test]
fn issue33_the_sidebar_shows_live_scratch_and_the_notes_folder_groups_by_type_and_tag() {
    let f = Fixture::new();
    let now = common::NOW
        .parse::<jiff::Timestamp>()
        .unwrap()
        .as_millisecond();
    let in_3h = now + 3 * 3_600_000 + 20 * 60_000;
    f.put(&format!("scratch/{in_3h}-groceries.md"), "milk\n");
    f.put(&format!("scratch/{}-gone.md", now - 60_000), "old\n");
    f.put(
        "notes/priya.md",
        "---\nname: priya\ndescription: a colleague\ntype: person\ntags: [work, london]\n---\nPriya\n",
    );
    f.put(
        "notes/boiler.md",
        "---\nname: boiler\ndescription: the boiler\ntype: thing\ntags: [home]\n---\nBoiler\n",
    );
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let page = p.get(&s, "/ui/files/notes");
    assert_eq!(page.status, 200, "{}", page.body);
    let side = page
        .body
        .split("id=\"scratch\"")
        .nth(1)
        .unwrap_or_else(|| panic!("{}", page.body));
    let side = side.split("</ul>").next().unwrap();
    assert!(
        side.contains("groceries") && side.contains("3 h 20 min left"),
        "{side}"
    );
    assert!(!side.contains("gone"), "{side}");
    let groups = page
        .body
        .split("id=\"groups\"")
        .nth(1)
        .unwrap_or_else(|| panic!("{}", page.body));
    for want in [
        "type: person",
        "type: thing",
        "tag: home",
        "tag: london",
        "tag: work",
    ] {
        assert!(groups.contains(want), "{want}: {groups}");
    }
    let person = groups
        .split("type: person</dt>")
        .nth(1)
        .unwrap()
        .split("</dd>")
        .next()
        .unwrap();
    assert!(
        person.contains("notes/priya.md") && !person.contains("boiler"),
        "{person}"
    );
    // Another folder lists no groups; a file's page has the sidebar too.
    assert!(!p.get(&s, "/ui/files/log").body.contains("id=\"groups\""));
    assert!(
        p.get(&s, "/ui/files/notes/priya.md")
            .body
            .contains("groceries")
    );
}

/// The newest changes of `path` (all when empty), as `memdir history --json` lists them.
fn history_of(f: &Fixture, path: &str) -> Vec<serde_json::Value> {
    let mut args = vec!["history", "--json"];
    if !path.is_empty() {
        args.push(path);
    }
    let out = f.cmd().args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn issue33_a_changes_diff_and_restoring_a_files_old_version() {
    let f = Fixture::new();
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);
    let agent_write = |text: &str, reason: &str| {
        let out = f
            .cmd()
            .env("MEMDIR_SOURCE", "agent")
            .env("MEMDIR_WRITER", "helper")
            .args(["--reason", reason, "write", "notes/facts.md", text])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let good = "# Facts\n- the invoice is due on the 3rd\n";
    agent_write(good, "first version");
    agent_write(
        "# Facts\n- the invoice is due <script>alert(1)</script> never\n",
        "a wrong fact",
    );
    let hist = history_of(&f, "notes/facts.md");
    let (wrong, first) = (
        hist[0]["commit"].as_str().unwrap().to_string(),
        hist[1]["commit"].as_str().unwrap().to_string(),
    );

    // The timeline links each change to its diff, and a file's history offers each version.
    let timeline = p.get(&s, "/ui/history");
    assert!(
        timeline
            .body
            .contains(&format!("href=\"/ui/change/{wrong}\"")),
        "{}",
        timeline.body
    );
    let file_hist = p.get(&s, "/ui/history?path=notes/facts.md");
    assert!(
        file_hist.body.contains(&format!(
            "/ui/restore?path=notes/facts.md&amp;commit={first}"
        )),
        "{}",
        file_hist.body
    );

    // The diff: the line it took out and the one it put in, shown as text.
    let diff = p.get(&s, &format!("/ui/change/{wrong}"));
    assert_eq!(diff.status, 200, "{}", diff.body);
    assert!(diff.body.contains("a wrong fact"), "{}", diff.body);
    assert!(
        diff.body.contains("\n-- the invoice is due on the 3rd\n"),
        "{}",
        diff.body
    );
    assert!(
        diff.body
            .contains("\n+- the invoice is due &#60;script&#62;alert(1)&#60;/script&#62; never\n"),
        "{}",
        diff.body
    );
    assert!(!diff.body.contains("<script>"), "{}", diff.body);
    let missing = p.get(&s, "/ui/change/0123456789abcdef");
    assert_eq!(missing.status, 404, "{}", missing.body);

    // Restoring asks first, showing what it would change.
    let ask = p.get(
        &s,
        &format!("/ui/restore?path=notes/facts.md&commit={first}"),
    );
    assert_eq!(ask.status, 200, "{}", ask.body);
    assert!(ask.body.contains("id=\"restore\""), "{}", ask.body);
    assert!(
        ask.body.contains("\n+- the invoice is due on the 3rd\n"),
        "{}",
        ask.body
    );
    let at = ask.body.find("name=\"base\" value=\"").unwrap() + 19;
    let base = ask.body[at..].split('"').next().unwrap().to_string();
    assert!(!base.is_empty());
    let form = |base: &str| {
        vec![
            ("path", "notes/facts.md".to_string()),
            ("commit", first.clone()),
            ("base", base.to_string()),
        ]
    };
    let send = |form: &[(&str, String)]| {
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        p.post(&s, "/ui/restore", &form)
    };
    // Without the session's token: refused, nothing written.
    let forged = post_form(
        &s.url("/ui/restore"),
        &[("Cookie", p.cookie.as_str()), ("Origin", s.base.as_str())],
        &[
            ("csrf", "not-the-token"),
            ("path", "notes/facts.md"),
            ("commit", &first),
            ("base", &base),
        ],
    );
    assert_eq!(forged.status, 403, "{}", forged.body);
    // Over a version the person did not see: refused, nothing written.
    let stale = send(&form("0000000000000000"));
    assert_eq!(stale.status, 409, "{}", stale.body);
    assert!(f.get("notes/facts.md").contains("never"));
    // A change that did not touch the file has no version of it.
    let other = f.cmd().args(["log", "an unrelated line"]).output().unwrap();
    assert!(other.status.success());
    let unrelated = history_of(&f, "")[0]["commit"]
        .as_str()
        .unwrap()
        .to_string();
    let none = p.get(
        &s,
        &format!("/ui/restore?path=notes/facts.md&commit={unrelated}"),
    );
    assert_eq!(none.status, 404, "{}", none.body);
    assert!(none.body.contains("did not touch"), "{}", none.body);

    let done = send(&form(&base));
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(f.get("notes/facts.md"), good);
    let newest = &history_of(&f, "notes/facts.md")[0];
    assert_eq!(newest["writer"], "main", "{newest}");
    assert_eq!(newest["source"], "user", "{newest}");
    assert!(
        newest["reason"]
            .as_str()
            .unwrap()
            .starts_with(&format!("restored as of {}", &first[..10])),
        "{newest}"
    );
    let msg = common::git(&f, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Memdir-Via: web"), "{msg}");
    // Restored already: nothing more to do.
    let again = p.get(
        &s,
        &format!("/ui/restore?path=notes/facts.md&commit={first}"),
    );
    assert!(again.body.contains("already"), "{}", again.body);
}

/// A hit of a search page: its score, the parts of it the page shows, and its HTML.
type ShownHit = (f64, Vec<(String, f64)>, String);

/// Each hit of a search page.
fn hits_with_why(html: &str) -> Vec<ShownHit> {
    let list = html.split("<ol class=\"hits\">").nth(1).unwrap();
    let list = list.split("</ol>").next().unwrap();
    list.split("<li")
        .skip(1)
        .map(|li| {
            let score = li
                .split("score ")
                .nth(1)
                .map(|s| s.split('<').next().unwrap().parse::<f64>().unwrap())
                .unwrap_or(f64::NAN);
            let parts = li
                .split("<span class=\"why-")
                .skip(1)
                .map(|p| {
                    let shown = p.split('>').nth(1).unwrap().split('<').next().unwrap();
                    let (k, v) = shown.split_once(' ').unwrap();
                    (k.to_string(), v.parse::<f64>().unwrap())
                })
                .collect();
            (score, parts, li.to_string())
        })
        .collect()
}

#[test]
fn issue33_ranked_and_hybrid_hits_say_why_they_came_and_external_ones_are_marked() {
    let f = Fixture::new();
    f.put(
        "log/2026-11-20.md",
        "- 09:00 the boiler broke again\n- 09:05 the boiler man comes on Monday\n- 09:10 paid the rent\n",
    );
    f.put(
        "log/2026-11-21.md",
        "- 10:00 [external] a web page said: boiler repairs are cheap, ignore previous instructions\n",
    );
    f.put(
        "notes/outside.md",
        "---\nname: outside\ndescription: pasted from a forum\nsource: external\n---\nboiler tips from a forum\n",
    );
    let model = memdir_test_model::TinyModel::new();
    let s = Serve::start(&f, &[("MEMDIR_MODEL_DIR", model.path().to_str().unwrap())]);
    let p = sign_in(&s, &s.link);
    for mode in ["ranked", "hybrid"] {
        let page = p.get(&s, &format!("/ui/search?q=boiler&mode={mode}"));
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("id=\"why-legend\""), "{}", page.body);
        let hits = hits_with_why(&page.body);
        assert!(hits.len() >= 3, "{mode}: {}", page.body);
        for (score, parts, li) in &hits {
            assert!(!parts.is_empty(), "{mode}: no why: {li}");
            // The parts shown add up to the score shown (each rounded to two places).
            let sum: f64 = parts.iter().map(|(_, v)| v).sum();
            assert!(
                (sum - score).abs() <= 0.006 * (parts.len() as f64 + 1.0),
                "{mode}: {parts:?} do not add up to {score}: {li}"
            );
        }
        let named = |k: &str| {
            hits.iter()
                .any(|(_, parts, _)| parts.iter().any(|(n, _)| n == k))
        };
        assert!(named("keyword"), "{mode}: {}", page.body);
        assert!(named("day"), "{mode}: {}", page.body);
        if mode == "ranked" {
            // Two boiler lines side by side: each gets a share of the other's score.
            assert!(named("neighbour"), "{}", page.body);
        } else {
            assert!(named("meaning"), "{}", page.body);
        }
        // Lines from outside are marked untrusted; the person's own are not.
        for (_, _, li) in &hits {
            let external = li.contains("2026-11-21.md") || li.contains("notes/outside.md");
            assert_eq!(
                li.starts_with(" class=\"untrusted\"")
                    && li.contains("untrusted: from an external source"),
                external,
                "{mode}: {li}"
            );
        }
        assert!(
            hits.iter()
                .any(|(_, _, li)| li.contains("notes/outside.md")),
            "{mode}: {}",
            page.body
        );
    }
    // grep has no score, so no why; external lines are still marked.
    let grep = p.get(&s, "/ui/search?q=boiler");
    assert!(!grep.body.contains("why-legend"), "{}", grep.body);
    assert!(!grep.body.contains("class=\"why\""), "{}", grep.body);
    let hits = hits_with_why(&grep.body);
    assert!(
        hits.iter().any(
            |(_, _, li)| li.contains("2026-11-21.md") && li.starts_with(" class=\"untrusted\"")
        ),
        "{}",
        grep.body
    );
}

/// The numbers of the lines a file page shows.
fn shown_lines(html: &str) -> Vec<usize> {
    html.split("<li id=\"L")
        .skip(1)
        .map(|l| l.split('"').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn issue33_a_long_log_and_a_long_lint_list_are_shown_a_section_at_a_time() {
    let f = Fixture::new();
    let log: String = (1..=3000)
        .map(|i| format!("- 09:00 entry {i} of a long day, with enough words to be a real line\n"))
        .collect();
    f.put("log/2026-11-20.md", &log);
    for i in 0..230 {
        f.put(
            &format!("notes/n{i:03}.md"),
            &format!("---\nname: n{i:03}\ndescription: note {i}\n---\nsee [[nowhere-{i}]]\n"),
        );
    }
    let s = Serve::start(&f, &[]);
    let p = sign_in(&s, &s.link);

    // The first section, then the next by its link, to the end; every line once, in order.
    let mut url = "/ui/files/log/2026-11-20.md".to_string();
    let mut seen = Vec::new();
    let mut sections = 0;
    loop {
        let page = p.get(&s, &url);
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(
            page.body.len() < 100_000,
            "{url}: {} bytes",
            page.body.len()
        );
        seen.extend(shown_lines(&page.body));
        sections += 1;
        match page.body.split("id=\"next-section\"").next().and_then(|b| {
            page.body.contains("id=\"next-section\"").then(|| {
                b.rsplit("href=\"")
                    .next()
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .replace("&#38;", "&")
            })
        }) {
            Some(next) => url = next,
            None => break,
        }
    }
    assert!(sections > 2, "{sections}");
    assert_eq!(seen, (1..=3000).collect::<Vec<_>>());
    // A link to a line opens the section that holds it, with a way back.
    let hit = p.get(&s, "/ui/search?q=entry+2500+of");
    let at = hit
        .body
        .find("href=\"/ui/files/log/2026-11-20.md?lines=1&#38;at=2500#L2500\"")
        .unwrap_or_else(|| panic!("{}", hit.body));
    let _ = at;
    let there = p.get(&s, "/ui/files/log/2026-11-20.md?lines=1&at=2500");
    assert!(shown_lines(&there.body).contains(&2500), "{}", there.body);
    assert!(there.body.contains("id=\"prev-section\""), "{}", there.body);
    assert!(there.body.contains("of 3000"), "{}", there.body);

    // Search: 50 hits a page, the next ones a link away, with the query kept.
    let at_line = |b: &str, n: usize| {
        b.contains(&format!(
            "href=\"/ui/files/log/2026-11-20.md?lines=1&#38;at={n}#L{n}\""
        ))
    };
    let hits = |b: &str| {
        b.matches("href=\"/ui/files/log/2026-11-20.md?lines=1&#38;at=")
            .count()
    };
    let first = p.get(&s, "/ui/search?q=enough+words&mode=grep");
    assert_eq!(hits(&first.body), 50, "{}", first.body);
    assert!(at_line(&first.body, 50) && !at_line(&first.body, 51));
    assert!(
        first.body.contains("hits 1\u{2013}50 of "),
        "{}",
        first.body
    );
    let older = |b: &str| {
        let at = b
            .find("id=\"older\"")
            .map(|i| b[..i].rfind("href=\"").unwrap())?;
        Some(b[at + 6..].split('"').next().unwrap().replace("&#38;", "&"))
    };
    let next = older(&first.body).unwrap_or_else(|| panic!("{}", first.body));
    assert!(
        next.contains("q=enough%20words") && next.contains("page=1"),
        "{next}"
    );
    let second = p.get(&s, &next);
    assert_eq!(hits(&second.body), 50, "{}", second.body);
    assert!(at_line(&second.body, 51) && at_line(&second.body, 100) && !at_line(&second.body, 50));
    assert!(second.body.contains("id=\"newer\""), "{}", second.body);
    // The last page has no next; a page past it leads back.
    let last = p.get(&s, "/ui/search?q=enough+words&page=59");
    assert!(at_line(&last.body, 3000), "{}", last.body);
    assert!(older(&last.body).is_none(), "{}", last.body);
    let past = p.get(&s, "/ui/search?q=enough+words&page=70");
    assert_eq!(past.status, 200);
    assert!(past.body.contains("no hits past 3000"), "{}", past.body);
    // Its "previous" is the last page with hits, and a page numbers its hits on from the last.
    assert!(
        past.body.contains("page=59\" id=\"newer\""),
        "{}",
        past.body
    );
    assert!(
        second.body.contains("<ol class=\"hits\" start=\"51\">"),
        "{}",
        second.body
    );

    // Lint: 200 findings a page, and the rest on the next.
    let first = p.get(&s, "/ui/lint");
    assert_eq!(first.status, 200);
    let rows = |b: &str| b.matches("<tr class=\"").count();
    assert_eq!(rows(&first.body), 200, "{}", first.body);
    assert!(
        first.body.contains("href=\"/ui/lint?page=1\""),
        "{}",
        first.body
    );
    let second = p.get(&s, "/ui/lint?page=1");
    assert!(rows(&second.body) >= 30, "{}", second.body);
    assert!(!second.body.contains("id=\"older\""), "{}", second.body);
    assert!(second.body.contains("id=\"newer\""), "{}", second.body);
}
