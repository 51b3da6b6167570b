//! The conformance suite on the S3 store, against a real S3-compatible server (moto in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use memdir_store::Backend;
use memdir_store_tests::Harness;

/// Each test gets its own bucket; tenants are memories in it. Opening a tenant again is a
/// second store with its own client and runtime, as a second process would have.
struct Buckets(common::TestBucket);

impl Harness for Buckets {
    fn open(&self, tenant: &str) -> Backend {
        self.0.backend(tenant)
    }
}

memdir_store_tests::store_tests!(match common::TestBucket::new() {
    Some(b) => Buckets(b),
    None => return,
});
