//! Issue 21, "the first hour": rough edges a new user hit, each on the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, git, stderr, stdout};

/// Sets a file's modification time to a fixed day long ago, so the search index's change check
/// (size and mtime) trusts it and cannot tell two versions of the same size apart.
fn backdate(f: &Fixture, rel: &str) {
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_577_836_800); // 2020-01-01
    std::fs::File::options()
        .write(true)
        .open(f.root().join(rel))
        .unwrap()
        .set_modified(old)
        .unwrap();
}

#[test]
fn search_reindex_rebuilds_the_keyword_index() {
    let f = Fixture::new_no_git();
    f.put("notes/a.md", "alpha bravo\n");
    backdate(&f, "notes/a.md");
    f.cmd()
        .args(["search", "--mode", "ranked", "alpha"])
        .assert()
        .success();
    // Same size, same mtime: invisible to the index's change check.
    f.put("notes/a.md", "delta bravo\n");
    backdate(&f, "notes/a.md");
    f.cmd()
        .args(["search", "--mode", "ranked", "delta"])
        .assert()
        .code(1);
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "--reindex", "delta"])
        .assert()
        .success();
    assert!(
        stdout(&a).starts_with("notes/a.md:1:delta bravo"),
        "{}",
        stdout(&a)
    );
    // Grep has no index: the flag would do nothing there, so it is refused.
    let a = f
        .cmd()
        .args(["search", "--reindex", "delta"])
        .assert()
        .code(2);
    assert!(stderr(&a).contains("--mode ranked"), "{}", stderr(&a));
}

#[test]
fn a_bad_regex_says_what_is_wrong_and_where() {
    let f = Fixture::new_no_git();
    let a = f.cmd().args(["search", "--regex", "("]).assert().code(2);
    let err = stderr(&a);
    assert_eq!(
        err.trim_end(),
        "memdir: bad regular expression \"(\": unclosed group at character 1; fix it or drop --regex to search the literal text"
    );
    let a = f
        .cmd()
        .args(["search", "--regex", "ab[z-a]"])
        .assert()
        .code(2);
    assert!(
        stderr(&a)
            .contains("invalid character class range, the start must be <= the end at character 4"),
        "{}",
        stderr(&a)
    );
}

#[test]
fn since_and_until_take_relative_days() {
    // The fixture's clock says 2026-11-30.
    let f = Fixture::new_no_git();
    f.put("log/2026-11-20.md", "- 09:00 price talk\n");
    f.put("log/2026-11-29.md", "- 09:00 price review\n");
    f.put("log/2026-11-30.md", "- 09:00 price bump\n");
    let days = |since: &str| {
        let a = f
            .cmd()
            .args(["search", "price", "--path", "log", "--since", since])
            .assert()
            .success();
        stdout(&a).lines().count()
    };
    assert_eq!(days("today"), 1);
    assert_eq!(days("yesterday"), 2);
    assert_eq!(days("7d"), 2);
    assert_eq!(days("last week"), 2);
    assert_eq!(days("2w"), 3);
    let a = f
        .cmd()
        .args(["search", "price", "--until", "yesterday", "--path", "log"])
        .assert()
        .success();
    assert!(!stdout(&a).contains("2026-11-30"), "{}", stdout(&a));
    let a = f
        .cmd()
        .args(["search", "price", "--since", "a while back"])
        .assert()
        .code(2);
    assert_eq!(
        stderr(&a).trim_end(),
        "memdir: --since: bad date \"a while back\": use YYYY-MM-DD, today, yesterday, Nd or Nw (days or weeks ago: 7d, 2w), last week or last month"
    );
}

#[test]
fn a_bad_memdir_now_says_what_a_time_looks_like() {
    let f = Fixture::new_no_git();
    let a = f
        .cmd()
        .env("MEMDIR_NOW", "yesterday")
        .arg("context")
        .assert()
        .code(2);
    assert_eq!(
        stderr(&a).trim_end(),
        "memdir: MEMDIR_NOW=\"yesterday\" is not a time: use an RFC 3339 instant like 2026-11-30T09:00:00Z, or unset it to use the clock"
    );
}

#[test]
fn an_unknown_tz_is_warned_about() {
    let f = Fixture::new_no_git();
    let a = f
        .cmd()
        .env("TZ", "Not/AZone")
        .args(["log", "x"])
        .assert()
        .success();
    assert!(
        stderr(&a)
            .contains("warning: TZ=\"Not/AZone\" is not a known time zone, so times are in UTC"),
        "{}",
        stderr(&a)
    );
    // UTC itself and a real zone say nothing.
    for tz in ["UTC", "Europe/Berlin"] {
        let a = f.cmd().env("TZ", tz).args(["log", "y"]).assert().success();
        assert!(stderr(&a).is_empty(), "{tz}: {}", stderr(&a));
    }
}

#[test]
fn a_ttl_in_weeks() {
    let f = Fixture::new_no_git();
    f.cmd()
        .args(["scratch", "plan", "--ttl", "1w", "canary first"])
        .assert()
        .success();
    let names: Vec<String> = std::fs::read_dir(f.root().join("scratch"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // 2026-11-30T09:15:00Z plus seven days, in milliseconds.
    let expiry = 1_796_030_100_000i64 + 7 * 86_400_000;
    assert_eq!(names, [format!("{expiry}-plan.md")]);
}

/// `memdir serve` running in a temp memory, killed when dropped.
struct Served {
    child: std::process::Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(f: &Fixture, args: &[&str]) -> Served {
    use std::io::BufRead;
    let mut child = std::process::Command::new(common::bin())
        .env_clear()
        .env("MEMDIR_ROOT", f.root())
        .env("MEMDIR_TOKEN", "s3cret-token-for-tests")
        .arg("serve")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Served { child, addr }
}

/// Sends one HTTP/1.1 request and returns the status line and headers, lowercased.
fn http(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
    text.split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn serve_takes_a_host_name_any_case_of_bearer_and_cors_preflight() {
    let f = Fixture::new_no_git();
    let s = serve(
        &f,
        &[
            "--listen",
            "localhost:0",
            "--allow-origin",
            "http://localhost:5173",
        ],
    );
    assert!(s.addr.starts_with("127.0.0.1:"), "{}", s.addr);
    let post = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];
    // The scheme name is case-insensitive.
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let auth = format!("{scheme} s3cret-token-for-tests");
        let head = http(
            &s.addr,
            "POST",
            &[post[0], post[1], ("authorization", &auth)],
            INITIALIZE,
        );
        assert!(head.starts_with("http/1.1 200"), "{scheme}: {head}");
    }
    let head = http(
        &s.addr,
        "POST",
        &[
            post[0],
            post[1],
            ("authorization", "Basic s3cret-token-for-tests"),
        ],
        INITIALIZE,
    );
    assert!(head.starts_with("http/1.1 401"), "{head}");
    // A browser at an allowed origin: the preflight (no credentials) is answered...
    let head = http(
        &s.addr,
        "OPTIONS",
        &[
            ("origin", "http://localhost:5173"),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "authorization, content-type, mcp-protocol-version",
            ),
        ],
        "",
    );
    assert!(head.starts_with("http/1.1 204"), "{head}");
    assert!(
        head.contains("access-control-allow-origin: http://localhost:5173"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-headers: authorization"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-methods: get, post"),
        "{head}"
    );
    // ...and the call itself is readable by the page, session id included.
    let head = http(
        &s.addr,
        "POST",
        &[
            post[0],
            post[1],
            ("origin", "http://localhost:5173"),
            ("authorization", "Bearer s3cret-token-for-tests"),
        ],
        INITIALIZE,
    );
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains("access-control-allow-origin: http://localhost:5173"),
        "{head}"
    );
    assert!(
        head.contains("access-control-expose-headers: mcp-session-id"),
        "{head}"
    );
    // Another origin gets neither.
    let head = http(
        &s.addr,
        "OPTIONS",
        &[
            ("origin", "http://evil.example"),
            ("access-control-request-method", "POST"),
        ],
        "",
    );
    assert!(!head.contains("access-control-allow-origin"), "{head}");
}

#[test]
fn serve_explains_a_bad_listen_address() {
    let f = Fixture::new_no_git();
    for (listen, why) in [
        ("localhost", "no port"),
        ("localhost:http", "bad port"),
        (
            "no-such-host.invalid:8707",
            "not an ip address or a known host name",
        ),
    ] {
        let a = f.cmd().args(["serve", "--listen", listen]).assert().code(2);
        let err = stderr(&a).to_lowercase();
        assert!(
            err.contains(why) && err.contains("localhost:8707"),
            "{listen}: {err}"
        );
    }
}

#[test]
fn a_zero_limit_is_refused() {
    let f = Fixture::new_no_git();
    f.cmd().args(["log", "price talk"]).assert().success();
    for args in [
        &["search", "price", "--limit", "0"][..],
        &["search", "price", "--max-bytes", "0"],
        &["history", "--limit", "0"],
    ] {
        let a = f.cmd().args(args).assert().code(2);
        assert!(
            stderr(&a).contains("0 would print nothing: give 1 or more"),
            "{args:?}: {}",
            stderr(&a)
        );
        assert!(stdout(&a).is_empty());
    }
}

#[test]
fn ranked_limit_says_how_many_more() {
    let f = Fixture::new_no_git();
    f.put(
        "log/2026-11-30.md",
        "- 09:00 postgres upgrade\n- 10:00 postgres backup\n- 11:00 postgres vacuum\n- 12:00 lunch\n",
    );
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "--limit", "2", "postgres"])
        .assert()
        .success();
    let out = stdout(&a);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[2].starts_with("... 1 more match left out"), "{out}");
    // Without a limit all three fit under the default and nothing is said.
    let a = f
        .cmd()
        .args(["search", "--mode", "ranked", "postgres"])
        .assert()
        .success();
    assert_eq!(stdout(&a).lines().count(), 3, "{}", stdout(&a));
}

#[test]
fn init_writes_every_section_as_a_comment() {
    let f = Fixture::new_no_git();
    let config = f.get(".memdir/config.toml");
    for section in [
        "[core]",
        "[scratch]",
        "[index]",
        "[state]",
        "[embed]",
        "[git]",
        "[writers]",
        "[policy]",
    ] {
        assert!(config.contains(section), "{section} missing:\n{config}");
    }
    for key in [
        "# provider = \"none\"",
        "# enabled = true",
        "# main = \"main\"",
        "# core_writers = [\"user\"]",
    ] {
        assert!(config.contains(key), "{key} missing:\n{config}");
    }
    // And the file it wrote is one memdir reads.
    f.cmd().arg("context").assert().success();
}

#[test]
fn man_is_one_complete_page() {
    let f = Fixture::new_no_git();
    let a = f.cmd().arg("man").assert().success();
    let page = stdout(&a);
    assert!(
        page.contains("memdir \\- long\\-term memory for AI agents, as plain files"),
        "{}",
        &page[..page.len().min(600)]
    );
    assert!(!page.contains("memdir\\-init(1)") && !page.contains("memdir-init(1)"));
    for cmd in [
        "memdir init",
        "memdir note new",
        "memdir review accept",
        "memdir review reject",
        "memdir hook session-start",
        "memdir hook pre-compact",
        "memdir reindex",
        "memdir state add",
        "memdir state list",
        "memdir search",
        "memdir version",
    ] {
        assert!(
            page.contains(&format!(".SS \"{cmd}\"")),
            "no section for {cmd}"
        );
    }
    assert!(page.contains("ENVIRONMENT AND EXIT CODES"));
    // Every line roff would read as a request is one we wrote.
    for line in page.lines().filter(|l| l.starts_with('.')) {
        let request = line.split_whitespace().next().unwrap_or_default();
        assert!(
            [
                ".TH", ".SH", ".SS", ".nf", ".fi", ".TP", ".PP", ".RS", ".RE", ".IP", ".br", ".B",
                ".I", ".ie", ".el", ".sp", ".in", ".ti"
            ]
            .contains(&request),
            "stray roff request: {line}"
        );
    }
}

/// Runs memdir with stdout on a pseudo-terminal (util-linux `script`) and returns what the
/// terminal received.
fn on_a_terminal(f: &Fixture, args: &[&str]) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut line = quote(common::bin().to_str().unwrap());
    for a in args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    let out = std::process::Command::new("script")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("SHELL", "/bin/sh")
        .env("MEMDIR_ROOT", f.root())
        .env("MEMDIR_NOW", common::NOW)
        .env("TZ", "UTC")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn read_ends_with_a_newline_on_a_terminal_only() {
    let f = Fixture::new_no_git();
    f.cmd()
        .args(["write", "notes/a.md", "no newline at the end"])
        .assert()
        .success();
    // Stored exactly as given.
    assert_eq!(f.get("notes/a.md"), "no newline at the end");
    let a = f.cmd().args(["read", "notes/a.md"]).assert().success();
    assert_eq!(
        stdout(&a),
        "no newline at the end",
        "piped output stays exact"
    );
    // The terminal turns "\n" into "\r\n".
    assert_eq!(
        on_a_terminal(&f, &["read", "notes/a.md"]),
        "no newline at the end\r\n"
    );
    f.put("notes/b.md", "ends well\n");
    assert_eq!(on_a_terminal(&f, &["read", "notes/b.md"]), "ends well\r\n");
}

#[test]
fn read_a_line_range() {
    let f = Fixture::new_no_git();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    f.put("notes/long.md", &text);
    let read = |range: &str| {
        let a = f
            .cmd()
            .args(["read", "notes/long.md", "--lines", range])
            .assert()
            .success();
        stdout(&a)
    };
    assert_eq!(read("40:42"), "line 40\nline 41\nline 42\n");
    assert_eq!(read("99:"), "line 99\nline 100\n");
    assert_eq!(read(":2"), "line 1\nline 2\n");
    assert_eq!(read("100:500"), "line 100\n");
    for (bad, why) in [
        ("0:3", "bad line range"),
        ("5:3", "5 is after 3"),
        ("x", "bad line range"),
        ("101:", "has 100 lines"),
    ] {
        let a = f
            .cmd()
            .args(["read", "notes/long.md", "--lines", bad])
            .assert()
            .code(2);
        assert!(stderr(&a).contains(why), "{bad}: {}", stderr(&a));
    }
}

#[test]
fn a_scratch_note_is_read_and_removed_by_its_name() {
    let f = Fixture::new_no_git();
    f.cmd()
        .args(["scratch", "plan", "canary first"])
        .assert()
        .success();
    for name in ["scratch/plan", "/memories/scratch/plan", "scratch/plan.md"] {
        f.cmd()
            .args(["read", name])
            .assert()
            .success()
            .stdout("canary first");
    }
    f.cmd().args(["read", "scratch/other"]).assert().code(1);
    let a = f.cmd().args(["rm", "scratch/plan"]).assert().success();
    assert!(stdout(&a).starts_with("removed scratch/"), "{}", stdout(&a));
    assert_eq!(
        std::fs::read_dir(f.root().join("scratch")).unwrap().count(),
        0
    );
}

#[test]
fn rm_needs_recursive_for_a_folder() {
    let f = Fixture::new_no_git();
    f.put("notes/a.md", "a\n");
    let a = f.cmd().args(["rm", "notes"]).assert().code(2);
    assert_eq!(
        stderr(&a).trim_end(),
        "memdir: notes is a folder: delete it and everything in it with `memdir rm -r notes`"
    );
    assert!(f.exists("notes/a.md"));
    f.cmd().args(["rm", "notes/a.md"]).assert().success();
    f.put("notes/b.md", "b\n");
    f.cmd().args(["rm", "-r", "notes"]).assert().success();
    assert!(!f.exists("notes"));
}

#[test]
fn write_names_the_file_inside_the_memory() {
    let f = Fixture::new_no_git();
    for (given, shown) in [
        ("/etc/x.md", "etc/x.md"),
        ("/memories/notes/y.md", "notes/y.md"),
        ("notes/z.md", "notes/z.md"),
    ] {
        f.cmd()
            .args(["write", given, "hi"])
            .assert()
            .success()
            .stdout(format!("wrote {shown}\n"));
        assert!(f.exists(shown));
    }
}

#[test]
fn links_to_a_note_not_written_yet() {
    let f = Fixture::new_no_git();
    f.cmd()
        .args([
            "note",
            "new",
            "payment-retry-policy",
            "-d",
            "retries",
            "never re-attempt a captured payment. Related: [[refund-flow]]",
        ])
        .assert()
        .success();
    let a = f.cmd().args(["links", "refund-flow"]).assert().success();
    let out = stdout(&a);
    assert!(
        out.starts_with("refund-flow: no note has this name yet"),
        "{out}"
    );
    assert!(out.contains("notes/payment-retry-policy.md:"), "{out}");
    assert!(out.contains("[[refund-flow]]"), "{out}");
    let a = f
        .cmd()
        .args(["links", "refund-flow", "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_str(stdout(&a).trim()).unwrap();
    assert_eq!(v["missing"], true);
    assert_eq!(v["backlinks"].as_array().unwrap().len(), 1);
    // A name nothing mentions is still not found.
    let a = f.cmd().args(["links", "nothing-here"]).assert().code(1);
    assert!(stderr(&a).contains("nothing links to it"), "{}", stderr(&a));
}

/// One memory-tool call through `memdir tool`: its text and whether it was an error result.
fn memory_tool(f: &Fixture, input: &str) -> (String, bool) {
    let a = f.cmd().arg("tool").write_stdin(input).assert();
    let failed = a.get_output().status.code() == Some(1);
    (stdout(&a), failed)
}

#[test]
fn the_memory_tool_names_the_real_problem_with_a_path() {
    let f = Fixture::new_no_git();
    f.put("a.md", "a file\n");
    // A path through a file.
    let (out, failed) = memory_tool(
        &f,
        r#"{"command": "create", "path": "/memories/a.md/b.md", "file_text": "x"}"#,
    );
    assert!(failed, "{out}");
    assert!(!out.contains("symlink"), "{out}");
    assert!(
        out.contains("a part of the path is a file, not a folder"),
        "{out}"
    );
    // A folder moved into itself.
    f.put("notes/n.md", "n\n");
    let (out, failed) = memory_tool(
        &f,
        r#"{"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/notes/inner"}"#,
    );
    assert!(failed, "{out}");
    assert!(!out.contains("symlink"), "{out}");
    assert!(out.contains("into itself"), "{out}");
    // A real symlink out of the memory keeps the contract's message.
    let outside = f.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, f.root().join("out")).unwrap();
    let (out, failed) = memory_tool(
        &f,
        r#"{"command": "create", "path": "/memories/out/x.md", "file_text": "x"}"#,
    );
    assert!(failed, "{out}");
    assert!(
        out.starts_with("Error: Path would escape /memories directory via symlink"),
        "{out}"
    );
}

#[test]
fn grep_only_options_are_refused_in_ranked_mode() {
    let f = Fixture::new_no_git();
    f.cmd().args(["log", "postgres upgrade"]).assert().success();
    for flag in [&["--regex"][..], &["-s"], &["-C", "2"]] {
        let a = f
            .cmd()
            .args(["search", "--mode", "ranked"])
            .args(flag)
            .arg("postgres")
            .assert()
            .code(2);
        assert!(
            stderr(&a).contains(&format!("{} works in grep mode only", flag[0])),
            "{flag:?}: {}",
            stderr(&a)
        );
    }
    // In grep mode they work.
    f.cmd()
        .args(["search", "-s", "-C", "1", "--regex", "post.res"])
        .assert()
        .success();
}

#[test]
fn a_root_that_is_a_file_says_so_without_os_error_numbers() {
    let f = Fixture::empty();
    std::fs::write(f.root(), "not a folder").unwrap();
    for args in [
        &["init"][..],
        &["log", "x"],
        &["context"],
        &["read", "core.md"],
    ] {
        let a = f.cmd().args(args).assert().code(2);
        let err = stderr(&a);
        assert!(
            err.contains("is a file, not a folder: pass --root DIR or set MEMDIR_ROOT to a folder"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("os error"), "{err}");
    }
    let a = f
        .cmd()
        .env("MEMDIR_ROOT", f.root().join("below"))
        .arg("init")
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("is inside a file, not a folder"),
        "{}",
        stderr(&a)
    );
    let a = f.cmd().arg("tool").write_stdin("{}").assert().code(2);
    assert!(
        stderr(&a).contains("is a file, not a folder"),
        "{}",
        stderr(&a)
    );
}

#[test]
fn note_new_takes_the_notes_prefix() {
    let f = Fixture::new_no_git();
    for (given, path) in [
        ("notes/foo", "notes/foo.md"),
        ("/memories/notes/people/priya.md", "notes/people/priya.md"),
        ("bar", "notes/bar.md"),
    ] {
        f.cmd()
            .args(["note", "new", given, "-d", "a note"])
            .assert()
            .success()
            .stdout(format!("wrote {path}\n"));
        assert!(f.exists(path), "{path}");
    }
    assert!(!f.exists("notes/notes"));
    assert!(f.get("notes/foo.md").contains("name: foo\n"));
}

#[test]
fn note_new_takes_tags_and_an_expiry() {
    // The fixture's clock says 2026-11-30.
    let f = Fixture::new();
    f.cmd()
        .args([
            "note",
            "new",
            "q4-freeze",
            "-d",
            "no deploys until the audit ends",
            "--tags",
            "ops,release",
            "--tags",
            "audit",
            "--expires",
            "2w",
            "frozen",
        ])
        .assert()
        .success()
        .stdout("wrote notes/q4-freeze.md\n");
    assert_eq!(
        f.get("notes/q4-freeze.md"),
        "---\nname: q4-freeze\ndescription: no deploys until the audit ends\ntags: [ops, release, audit]\ncreated: 2026-11-30\nexpires: 2026-12-14\n---\nfrozen\n"
    );
    f.cmd()
        .args(["note", "new", "b", "-d", "b", "--expires", "2027-01-31"])
        .assert()
        .success();
    assert!(f.get("notes/b.md").contains("expires: 2027-01-31\n"));
    // lint reads what note new wrote as a valid note.
    f.cmd().arg("lint").assert().success();
    for (args, says) in [
        (vec!["--expires", "2026-11-01"], "before today"),
        (vec!["--expires", "soon"], "YYYY-MM-DD"),
        (vec!["--tags", "two words"], "bad tag \"two words\""),
        (vec!["--tags", "a,,b"], "bad tag \"\""),
    ] {
        let a = f
            .cmd()
            .args(["note", "new", "c", "-d", "c"])
            .args(&args)
            .assert()
            .code(2);
        assert!(stderr(&a).contains(says), "{args:?}: {}", stderr(&a));
        assert_eq!(stderr(&a).lines().count(), 1, "{}", stderr(&a));
    }
    assert!(!f.exists("notes/c.md"));
    // The expiry is the one sweep acts on: the day after it, the note moves to the archive.
    f.cmd()
        .env("MEMDIR_NOW", "2026-12-15T09:00:00Z")
        .arg("sweep")
        .assert()
        .success();
    assert!(!f.exists("notes/q4-freeze.md"));
    assert!(f.exists("archive/notes/q4-freeze.md"));
    assert!(f.exists("notes/b.md"));
}

#[test]
fn state_adds_a_dated_line_and_lists_entries() {
    let f = Fixture::new();
    // No state.md yet: nothing to list, and the message says how to add one.
    let a = f.cmd().arg("state").assert().code(1);
    assert!(stderr(&a).contains("memdir state add"), "{}", stderr(&a));
    f.cmd()
        .args([
            "--reason", "rota", "state", "add", "on", "call", "until", "Friday",
        ])
        .assert()
        .success()
        .stdout("added to state.md: - 2026-11-30 on call until Friday\n");
    assert_eq!(f.get("state.md"), "- 2026-11-30 on call until Friday\n");
    // A hand-written heading and an entry without a final newline stay as they are.
    f.put("state.md", "# State\n- 2026-11-29 migrating the db");
    f.cmd()
        .args(["state", "add", "-"])
        .write_stdin("shipping v2\nbehind a flag\n")
        .env("MEMDIR_NOW", "2026-12-01T08:00:00Z")
        .assert()
        .success();
    assert_eq!(
        f.get("state.md"),
        "# State\n- 2026-11-29 migrating the db\n- 2026-12-01 shipping v2\n  behind a flag\n"
    );
    let a = f.cmd().args(["state", "list"]).assert().success();
    assert_eq!(
        stdout(&a),
        "2026-11-29 migrating the db\n2026-12-01 shipping v2\n           behind a flag\n"
    );
    let a = f.cmd().args(["state", "list", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(v[1]["date"], "2026-12-01");
    assert_eq!(v[1]["text"], "shipping v2\nbehind a flag");
    assert_eq!(v[1]["line"], 3);
    // Each add is one change in history, by its writer, after the hand edit.
    let log = git(&f, &["log", "--format=%an|%s"]);
    let mut lines = log.lines();
    assert_eq!(lines.next(), Some("main|state add state.md"));
    assert_eq!(lines.next(), Some("hand-edit|hand edit"));
    assert_eq!(lines.next(), Some("main|state add state.md"));
    // state.md loads on every turn: external content is refused, and so is going over the cap.
    let a = f
        .cmd()
        .args(["--source", "external", "state", "add", "x"])
        .assert()
        .code(2);
    assert!(
        stderr(&a).contains("never takes external content"),
        "{}",
        stderr(&a)
    );
    let a = f.cmd().args(["state", "add", " "]).assert().code(2);
    assert!(stderr(&a).contains("state text is empty"), "{}", stderr(&a));
    std::fs::write(
        f.root().join(".memdir/config.toml"),
        "[state]\nmax_lines = 3\n",
    )
    .unwrap();
    let before = f.get("state.md");
    let a = f.cmd().args(["state", "add", "one more"]).assert().code(2);
    assert!(stderr(&a).contains("state.md"), "{}", stderr(&a));
    assert_eq!(f.get("state.md"), before);
}

#[test]
fn index_and_reindex_are_named_apart() {
    let f = Fixture::new();
    f.put(
        "notes/a.md",
        "---\nname: a\ndescription: alpha note\n---\nalpha bravo\n",
    );
    // `memdir reindex` rebuilds the search indexes and leaves MEMORY.md alone.
    let a = f.cmd().arg("reindex").assert().success();
    assert!(
        stdout(&a).starts_with("rebuilt the keyword index: "),
        "{}",
        stdout(&a)
    );
    assert!(!f.exists("MEMORY.md") || !f.get("MEMORY.md").contains("alpha note"));
    let a = f.cmd().args(["reindex", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert!(v["keyword_files"].as_u64().unwrap() >= 1, "{v}");
    // `memdir index` regenerates MEMORY.md.
    let a = f.cmd().arg("index").assert().success();
    assert!(stdout(&a).starts_with("wrote MEMORY.md"), "{}", stdout(&a));
    assert!(f.get("MEMORY.md").contains("alpha note"));
    // The old spelling keeps working, and says what it is called now.
    let a = f.cmd().args(["index", "rebuild"]).assert().success();
    assert!(
        stdout(&a).starts_with("rebuilt the keyword index: "),
        "{}",
        stdout(&a)
    );
    assert!(
        stderr(&a).contains("now `memdir reindex`"),
        "{}",
        stderr(&a)
    );
    // Help names them apart, and the old form is not advertised.
    let top = stdout(&f.cmd().arg("--help").assert().success());
    assert!(
        top.contains("reindex") && top.contains("MEMORY.md"),
        "{top}"
    );
    let index = stdout(&f.cmd().args(["index", "--help"]).assert().success());
    assert!(!index.contains("  rebuild"), "{index}");
    assert!(index.contains("memdir reindex"), "{index}");
}
