//! Where a memory lives in S3 and how to reach it: the store URL, the AWS settings the front
//! end read from its environment, the local cache and the lease length.

use memdir_store::StoreError;
use std::path::PathBuf;
use std::time::Duration;

/// The URL query parameter that names the memory.
pub const TENANT_PARAM: &str = "tenant";

/// The default size cap of the local cache: 256 MiB.
pub const DEFAULT_CACHE_CAP: u64 = 256 * 1024 * 1024;

/// The default lease of a lock: a holder renews it every third of this, and a waiter takes over
/// a lease not renewed for this long (a crashed holder blocks nobody for longer).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A store URL split into bucket, prefix and tenant: `s3://BUCKET/PREFIX?tenant=NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Url {
    /// The bucket.
    pub bucket: String,
    /// The key prefix every memory of this URL lives under, without slashes at either end
    /// (empty: the bucket's top).
    pub prefix: String,
    /// The memory's name.
    pub tenant: String,
}

impl S3Url {
    /// Splits `s3://BUCKET/PREFIX?tenant=NAME` (the prefix may be empty or several levels).
    pub fn parse(url: &str) -> Result<S3Url, StoreError> {
        let Some(rest) = url.strip_prefix("s3://") else {
            return Err(StoreError::InvalidPath(
                "an S3 store URL starts with s3:// (e.g. s3://bucket/memories?tenant=alice)".into(),
            ));
        };
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
        if bucket.is_empty() {
            return Err(StoreError::InvalidPath(
                "the S3 store URL names no bucket: use s3://BUCKET/PREFIX?tenant=NAME".into(),
            ));
        }
        let prefix = prefix.trim_matches('/').to_string();
        if prefix.split('/').any(|p| p == "." || p == "..")
            || prefix.contains("//")
            || prefix.chars().any(|c| c.is_control())
        {
            return Err(StoreError::InvalidPath(format!(
                "bad S3 prefix {prefix:?}: use names separated by single '/', without '.' or '..'"
            )));
        }
        let mut tenant = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some((TENANT_PARAM, v)) => tenant = Some(v.to_string()),
                _ => {
                    return Err(StoreError::InvalidPath(format!(
                        "unknown S3 store URL parameter {pair:?}: only ?{TENANT_PARAM}=NAME is taken (credentials and endpoint come from the AWS_* environment variables)"
                    )));
                }
            }
        }
        let tenant = tenant.ok_or_else(|| {
            StoreError::InvalidPath(format!(
                "the store URL names no memory: add ?{TENANT_PARAM}=NAME (e.g. s3://{path}?{TENANT_PARAM}=alice)"
            ))
        })?;
        check_tenant(&tenant)?;
        Ok(S3Url {
            bucket: bucket.to_string(),
            prefix,
            tenant,
        })
    }

    /// The URL again, as a person would type it.
    pub fn shown(&self) -> String {
        let slash = if self.prefix.is_empty() { "" } else { "/" };
        format!(
            "s3://{}{slash}{}?{TENANT_PARAM}={}",
            self.bucket, self.prefix, self.tenant
        )
    }
}

/// Tenant names: 1 to 128 letters, digits, `-`, `_`, `.` or `@`, not starting with `.`, so they
/// are safe in any key, URL or log line, and never name memdir's own `.memdir` prefix.
fn check_tenant(t: &str) -> Result<(), StoreError> {
    let ok = !t.is_empty()
        && t.len() <= 128
        && !t.starts_with('.')
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidPath(format!(
            "bad tenant {t:?}: use 1 to 128 letters, digits, '-', '_', '.' or '@', not starting with '.'"
        )))
    }
}

/// Everything an [`S3Store`](crate::S3Store) is opened with.
///
/// The AWS settings are `AWS_*` names and values as the usual environment variables spell them
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
/// `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, ...): the binary reads its environment and hands them
/// over, so this crate never reads the environment itself. `Debug` shows their names only.
#[derive(Clone)]
pub struct S3Config {
    /// Bucket, prefix and tenant.
    pub url: S3Url,
    /// `AWS_*` settings, by variable name.
    pub aws: Vec<(String, String)>,
    /// Where file contents are cached between searches; `None` keeps the cache in memory.
    pub cache_dir: Option<PathBuf>,
    /// The most bytes the cache holds before the least recently used entries are dropped.
    pub cache_cap: u64,
    /// How long a lock's lease lasts without renewal.
    pub lease: Duration,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.aws.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("S3Config")
            .field("url", &self.url.shown())
            .field("endpoint", &self.endpoint())
            .field("aws", &names)
            .field("cache_dir", &self.cache_dir)
            .field("cache_cap", &self.cache_cap)
            .field("lease", &self.lease)
            .finish()
    }
}

impl S3Config {
    /// The settings for `url`, with no AWS settings yet, the cache in memory and the default
    /// lease.
    pub fn new(url: &str) -> Result<S3Config, StoreError> {
        Ok(S3Config {
            url: S3Url::parse(url)?,
            aws: Vec::new(),
            cache_dir: None,
            cache_cap: DEFAULT_CACHE_CAP,
            lease: DEFAULT_LEASE,
        })
    }

    /// Adds the `AWS_*` pairs among `vars` (other names are ignored).
    pub fn with_aws_vars(mut self, vars: impl IntoIterator<Item = (String, String)>) -> S3Config {
        self.aws
            .extend(vars.into_iter().filter(|(k, _)| k.starts_with("AWS_")));
        self
    }

    /// Sets one AWS setting by its variable name (`AWS_REGION`, ...).
    pub fn with_aws(mut self, name: &str, value: &str) -> S3Config {
        self.aws.push((name.to_string(), value.to_string()));
        self
    }

    /// Caches file contents under `dir` (created when needed).
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> S3Config {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Sets the lease of locks.
    pub fn with_lease(mut self, lease: Duration) -> S3Config {
        self.lease = lease;
        self
    }

    /// The endpoint named by `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT`), if any; it is not a secret.
    pub fn endpoint(&self) -> Option<&str> {
        self.aws
            .iter()
            .rev()
            .find(|(k, _)| {
                matches!(
                    k.as_str(),
                    "AWS_ENDPOINT_URL" | "AWS_ENDPOINT" | "AWS_ENDPOINT_URL_S3"
                )
            })
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = S3Url::parse("s3://b/mem/dev/?tenant=alice").unwrap();
        assert_eq!(
            (u.bucket.as_str(), u.prefix.as_str(), u.tenant.as_str()),
            ("b", "mem/dev", "alice")
        );
        assert_eq!(u.shown(), "s3://b/mem/dev?tenant=alice");
        let top = S3Url::parse("s3://b?tenant=a").unwrap();
        assert_eq!(
            (top.prefix.as_str(), top.shown().as_str()),
            ("", "s3://b?tenant=a")
        );
        for bad in [
            "s3://b/p",
            "s3:///p?tenant=a",
            "s3://b/p?tenant=",
            "s3://b/p?tenant=.memdir",
            "s3://b/p?tenant=a/b",
            "s3://b/../p?tenant=a",
            "s3://b/p?tenant=a&secret=x",
            "postgres://h/db?tenant=a",
        ] {
            let e = S3Url::parse(bad).unwrap_err().to_string();
            assert!(
                e.chars().next().unwrap().is_lowercase()
                    || e.starts_with("S3")
                    || e.starts_with("an S3"),
                "{e}"
            );
            assert!(!e.ends_with('.'), "{e}");
        }
    }

    #[test]
    fn debug_shows_no_secret() {
        let c = S3Config::new("s3://b/p?tenant=a")
            .unwrap()
            .with_aws("AWS_SECRET_ACCESS_KEY", "hunter2-secret")
            .with_aws("AWS_SESSION_TOKEN", "tok-secret")
            .with_aws("AWS_ENDPOINT_URL", "http://127.0.0.1:5000");
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("tok-secret"),
            "{shown}"
        );
        assert!(
            shown.contains("AWS_SECRET_ACCESS_KEY") && shown.contains("127.0.0.1:5000"),
            "{shown}"
        );
    }
}
