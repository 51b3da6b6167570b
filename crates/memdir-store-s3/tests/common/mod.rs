//! A fresh bucket per test on a real S3-compatible server, or a clear skip when there is none.
//!
//! The server is the one at `MEMDIR_TEST_S3` (an endpoint URL such as `http://127.0.0.1:5055`;
//! `.ci/run` starts moto there). Each test creates its own bucket. Without the variable, or
//! with no server answering, a test passes after saying on stderr that it was skipped;
//! `MEMDIR_REQUIRE_S3=1` (set by `.ci/run`) turns that skip into a failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use memdir_store::Backend;
use memdir_store_s3::{S3Config, S3Store};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One test's bucket.
#[derive(Clone)]
pub struct TestBucket {
    /// The server's endpoint URL.
    pub endpoint: String,
    /// The bucket's name.
    pub bucket: String,
}

fn skip(why: &str) -> Option<TestBucket> {
    if std::env::var("MEMDIR_REQUIRE_S3").is_ok_and(|v| v == "1") {
        panic!("an S3 server is required (MEMDIR_REQUIRE_S3=1) but {why}");
    }
    // Straight to stderr, past the test harness's capture, so a skip is never silent.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED ({why}); set MEMDIR_TEST_S3=http://HOST:PORT of an S3-compatible server (.ci/run starts moto), and MEMDIR_REQUIRE_S3=1 to fail instead"
    );
    None
}

impl TestBucket {
    /// A fresh bucket, or `None` (after saying so) when there is no server.
    pub fn new() -> Option<TestBucket> {
        let Some(endpoint) = std::env::var("MEMDIR_TEST_S3")
            .ok()
            .filter(|v| !v.is_empty())
        else {
            return skip("MEMDIR_TEST_S3 is not set");
        };
        let endpoint = endpoint.trim_end_matches('/').to_string();
        let bucket = format!(
            "memdir-test-{}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros() % 1_000_000_000)
                .unwrap_or(0),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        // moto takes an unsigned bucket creation; a real server would need signing.
        match ureq::put(&format!("{endpoint}/{bucket}")).send_empty() {
            Ok(_) => Some(TestBucket { endpoint, bucket }),
            Err(e) => skip(&format!("no S3 server at {endpoint}: {e}")),
        }
    }

    /// The store settings of `tenant` in this bucket.
    pub fn config(&self, tenant: &str) -> S3Config {
        S3Config::new(&format!("s3://{}/memories?tenant={tenant}", self.bucket))
            .unwrap()
            .with_aws("AWS_ACCESS_KEY_ID", "testing")
            .with_aws("AWS_SECRET_ACCESS_KEY", "testing-secret-key")
            .with_aws("AWS_REGION", "us-east-1")
            .with_aws("AWS_ENDPOINT_URL", &self.endpoint)
    }

    /// Opens (creating) `tenant`.
    pub fn store(&self, tenant: &str) -> S3Store {
        S3Store::create(self.config(tenant)).unwrap()
    }

    /// Opens (creating) `tenant` with its history.
    pub fn backend(&self, tenant: &str) -> Backend {
        self.store(tenant).backend()
    }

    /// The bucket's listing, as the server sends it (XML).
    pub fn listing(&self) -> String {
        ureq::get(&format!("{}/{}?list-type=2", self.endpoint, self.bucket))
            .call()
            .unwrap()
            .into_body()
            .read_to_string()
            .unwrap()
    }

    /// Turns on S3 versioning: from now on the bucket keeps every older version of an object.
    pub fn enable_versioning(&self) {
        ureq::put(&format!("{}/{}?versioning", self.endpoint, self.bucket))
            .send("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>")
            .unwrap();
    }

    /// Every version of every object in the bucket (delete markers left out): key, version
    /// id and whether it is the latest.
    pub fn versions(&self) -> Vec<(String, String, bool)> {
        let mut out = Vec::new();
        let mut marker = String::new();
        loop {
            let page = ureq::get(&format!(
                "{}/{}?versions&max-keys=1000{marker}",
                self.endpoint, self.bucket
            ))
            .call()
            .unwrap()
            .into_body()
            .read_to_string()
            .unwrap();
            let field = |s: &str, name: &str| {
                s.split(&format!("<{name}>"))
                    .nth(1)
                    .and_then(|s| s.split(&format!("</{name}>")).next())
                    .unwrap_or_default()
                    .to_string()
            };
            for v in page.split("<Version>").skip(1) {
                let v = v.split("</Version>").next().unwrap();
                out.push((
                    field(v, "Key"),
                    field(v, "VersionId"),
                    field(v, "IsLatest") == "true",
                ));
            }
            if field(&page, "IsTruncated") != "true" {
                return out;
            }
            marker = format!(
                "&key-marker={}&version-id-marker={}",
                field(&page, "NextKeyMarker"),
                field(&page, "NextVersionIdMarker")
            );
        }
    }

    /// Every object version in the bucket whose bytes hold `needle`, as `key@version`. The
    /// server wants reads signed: each is a URL object_store presigns for the version.
    pub fn raw_hits(&self, needle: &str) -> Vec<String> {
        use object_store::signer::{SignedUrlOptions, Signer};
        let s3 = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(&self.bucket)
            .with_endpoint(&self.endpoint)
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_access_key_id("testing")
            .with_secret_access_key("testing-secret-key")
            .build()
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut hits = Vec::new();
        for (key, version, _) in self.versions() {
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
                .with_config()
                .limit(1 << 30)
                .read_to_vec()
                .unwrap();
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                hits.push(format!("{key}@{version}"));
            }
        }
        hits
    }

    /// Every key in the bucket, for tests that check the layout.
    pub fn keys(&self) -> Vec<String> {
        self.listing()
            .split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_string)
            .collect()
    }
}

/// A fresh bucket for this test, or return from the test (skipped).
#[macro_export]
macro_rules! s3_or_skip {
    () => {
        match common::TestBucket::new() {
            Some(b) => b,
            None => return,
        }
    };
}
