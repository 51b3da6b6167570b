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
