//! The `memdir` binary on an S3 store (a real S3-compatible server: moto in `.ci/run`): a
//! folder exported to S3 and back is byte for byte the same, and the everyday commands work on
//! `--store s3://...`. Skips, saying so, without `MEMDIR_TEST_S3`; `MEMDIR_REQUIRE_S3=1` fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::Fixture;
use std::io::Write;
use std::path::Path;

/// A fresh bucket on the test server, or `None` after saying the test is skipped.
fn bucket() -> Option<(String, String)> {
    let endpoint = std::env::var("MEMDIR_TEST_S3")
        .ok()
        .filter(|v| !v.is_empty());
    let fail = |why: String| {
        if std::env::var("MEMDIR_REQUIRE_S3").is_ok_and(|v| v == "1") {
            panic!("an S3 server is required (MEMDIR_REQUIRE_S3=1) but {why}");
        }
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED ({why}); set MEMDIR_TEST_S3 (.ci/run starts moto)"
        );
        None
    };
    let Some(endpoint) = endpoint else {
        return fail("MEMDIR_TEST_S3 is not set".into());
    };
    let name = format!(
        "memdir-cli-{}-{}",
        std::process::id(),
        jiff::Timestamp::now().as_microsecond() % 1_000_000_000
    );
    match ureq::put(&format!("{endpoint}/{name}")).send_empty() {
        Ok(_) => Some((endpoint, name)),
        Err(e) => fail(format!("no S3 server at {endpoint}: {e}")),
    }
}

/// `memdir` on the fixture's folder, with the AWS settings of the test server.
fn cmd(f: &Fixture, endpoint: &str) -> assert_cmd::Command {
    let mut c = f.cmd();
    c.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing-secret")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", endpoint);
    c
}

/// Every file under `root` except git's and memdir's own, with its bytes.
fn files(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().into_string().unwrap();
            if name == ".git" || name == ".memdir" {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_folder_exported_to_s3_and_back_is_the_same_and_commands_work_there() {
    let Some((endpoint, bucket)) = bucket() else {
        return;
    };
    let f = Fixture::new();
    let url = format!("s3://{bucket}/memories?tenant=alice");
    cmd(&f, &endpoint)
        .args(["log", "decided to keep memories in S3"])
        .assert()
        .success();
    cmd(&f, &endpoint)
        .args([
            "write",
            "notes/db.md",
            "# Databases\nPostgreSQL has advisory locks.\n",
        ])
        .assert()
        .success();
    cmd(&f, &endpoint)
        .args(["export", "--to", &url])
        .assert()
        .success();
    let back = tempfile::tempdir().unwrap();
    let back_root = back.path().join("copy");
    cmd(&f, &endpoint)
        .args(["--store", &url, "export", "--to"])
        .arg(&back_root)
        .assert()
        .success();
    assert_eq!(files(&f.root()), files(&back_root));

    let on_s3 = |args: &[&str]| {
        let out = cmd(&f, &endpoint)
            .arg("--store")
            .arg(&url)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        on_s3(&["read", "notes/db.md"]),
        "# Databases\nPostgreSQL has advisory locks.\n"
    );
    assert_eq!(
        on_s3(&["search", "advisory"]),
        "notes/db.md:2:PostgreSQL has advisory locks.\n"
    );
    on_s3(&["log", "a line written on S3"]);
    assert!(on_s3(&["context"]).contains("a line written on S3"));
    let history = on_s3(&["history"]);
    assert!(history.contains("log log/2026-11-30.md"), "{history}");
    on_s3(&["undo"]);
    assert!(!on_s3(&["context"]).contains("a line written on S3"));

    // A URL that names no memory is refused before anything is opened.
    cmd(&f, &endpoint)
        .args(["--store", &format!("s3://{bucket}/memories"), "context"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("?tenant=NAME"));
    // A memory that was never made says how to make it.
    cmd(&f, &endpoint)
        .args([
            "--store",
            &format!("s3://{bucket}/memories?tenant=nobody"),
            "context",
        ])
        .assert()
        .failure()
        .stderr(predicates::str::contains("memdir init"));
}

/// Every version of every object in `bucket` (delete markers left out) whose bytes hold
/// `needle`, as `key@version`: listed with `?versions`, each read through a URL object_store
/// presigns (the server refuses unsigned reads).
fn object_versions_holding(endpoint: &str, bucket: &str, needle: &str) -> Vec<String> {
    use object_store::signer::{SignedUrlOptions, Signer};
    // The client's TLS takes its crypto from the process default, as the binary's does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let s3 = object_store::aws::AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_access_key_id("testing")
        .with_secret_access_key("testing-secret")
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listing = ureq::get(&format!("{endpoint}/{bucket}?versions"))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    assert!(listing.contains("<IsTruncated>false</IsTruncated>"));
    let field = |s: &str, name: &str| {
        s.split(&format!("<{name}>"))
            .nth(1)
            .and_then(|s| s.split(&format!("</{name}>")).next())
            .unwrap()
            .to_string()
    };
    let mut hits = Vec::new();
    for v in listing.split("<Version>").skip(1) {
        let (key, version) = (field(v, "Key"), field(v, "VersionId"));
        let opts = SignedUrlOptions::new().with_query([("versionId", version.as_str())]);
        let url = rt
            .block_on(s3.signed_url_opts(
                reqwest::Method::GET,
                &object_store::path::Path::parse(&key).unwrap(),
                std::time::Duration::from_secs(300),
                &opts,
            ))
            .unwrap();
        let bytes = ureq::get(url.as_str())
            .call()
            .unwrap()
            .into_body()
            .read_to_vec()
            .unwrap();
        if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            hits.push(format!("{key}@{version}"));
        }
    }
    hits
}

/// The check on S3, through the binary: 30 changes hold a line, in a bucket that keeps
/// every older version of an object. `forget --match` leaves no object and no object version
/// holding it (files, journal, contents, memdir's own state), and history, blame and undo
/// still answer.
#[test]
fn forget_on_s3_leaves_no_object_version_holding_it() {
    const SECRET: &str = "12 Elm Street";
    let Some((endpoint, bucket)) = bucket() else {
        return;
    };
    ureq::put(&format!("{endpoint}/{bucket}?versioning"))
        .send("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>")
        .unwrap();
    let f = Fixture::new();
    let url = format!("s3://{bucket}/memories?tenant=ann");
    let memdir = |args: &[&str]| {
        let out = cmd(&f, &endpoint)
            .arg("--store")
            .arg(&url)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    memdir(&["init"]);
    for i in 0..30 {
        if i % 2 == 0 {
            memdir(&["log", &format!("visit {i} to {SECRET}")]);
        } else {
            memdir(&[
                "--reason",
                &format!("moved to {SECRET}"),
                "write",
                "notes/me.md",
                &format!("name: Ann\naddress: {SECRET} {i}\nlikes: tea\n"),
            ]);
        }
    }
    let holding = || object_versions_holding(&endpoint, &bucket, SECRET);
    assert!(!holding().is_empty(), "the check cannot see it");
    let dry = memdir(&["forget", "--match", SECRET, "--dry-run"]);
    assert!(dry.contains("would rewrite 30 commits"), "{dry}");
    let before = holding();

    let out = memdir(&["forget", "--match", SECRET]);
    assert!(out.contains("rewrote 30 commits"), "{out}");
    assert!(before.len() > 30, "a dry run deleted versions: {before:?}");
    assert_eq!(holding(), Vec::<String>::new());
    let history = memdir(&["history", "--limit", "40"]);
    assert!(
        history.lines().next().unwrap().contains("forget *"),
        "{history}"
    );
    assert!(!history.contains(SECRET), "{history}");
    let blame = memdir(&["blame", "notes/me.md"]);
    assert!(blame.contains("likes: tea"), "{blame}");
    memdir(&["write", "notes/me.md", "name: Ann\n"]);
    memdir(&["undo"]);
    assert!(memdir(&["read", "notes/me.md"]).contains("likes: tea"));
    // A search finds nothing (exit 1, as grep), nor leaves anything in the bucket.
    let found = cmd(&f, &endpoint)
        .args(["--store", &url, "search", "Elm Street"])
        .assert()
        .code(1);
    assert!(!String::from_utf8_lossy(&found.get_output().stdout).contains(SECRET));
    assert_eq!(holding(), Vec::<String>::new());
}
