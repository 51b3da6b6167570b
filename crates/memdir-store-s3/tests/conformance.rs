//! The conformance suite on the S3 store, against a real S3-compatible server (moto in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use memdir_store::Backend;
use memdir_store_tests::Harness;

/// Each test gets its own bucket, keeping older versions of objects as a careful operator's
/// would; tenants are memories in it. Opening a tenant again is a second store with its own
/// client and runtime, as a second process would have.
struct Buckets(common::TestBucket);

impl Harness for Buckets {
    fn open(&self, tenant: &str) -> Backend {
        self.0.backend(tenant)
    }

    /// Every object and every older version in the bucket (all tenants), byte for byte.
    fn raw_hits(&self, _tenant: &str, needle: &str) -> Option<Vec<String>> {
        Some(self.0.raw_hits(needle))
    }
}

fn versioned() -> Option<Buckets> {
    let b = common::TestBucket::new()?;
    b.enable_versioning();
    Some(Buckets(b))
}

memdir_store_tests::store_tests!(match versioned() {
    Some(b) => b,
    None => return,
});
