//! Where a memory lives, as the user names it (`--store`, `--root`, `MEMDIR_STORE`,
//! `MEMDIR_ROOT`): a folder path, or a URL of another backend.

use crate::ui::CliError;
use memdir::{Backend, FolderStore};
use memdir_store_pg::PgStore;
use std::path::PathBuf;

/// A memory's location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A folder on local disk.
    Folder(PathBuf),
    /// A PostgreSQL database and tenant: `postgres://HOST/DB?tenant=NAME`.
    Postgres(String),
    /// A bucket, prefix and tenant in S3 or an S3-compatible server:
    /// `s3://BUCKET/PREFIX?tenant=NAME`, reached with the `AWS_*` environment variables.
    S3(String),
}

impl Location {
    /// Reads a location: `postgres://` and `postgresql://` URLs name a database, `file://` and
    /// anything without a scheme a folder.
    pub fn parse(s: &str) -> Result<Location, CliError> {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(Location::Postgres(s.to_string()));
        }
        if s.starts_with("s3://") {
            // Checked now, so a bad URL fails before anything is opened.
            memdir_store_s3::S3Url::parse(s)?;
            return Ok(Location::S3(s.to_string()));
        }
        if let Some(path) = s.strip_prefix("file://") {
            return Ok(Location::Folder(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = s.split_once("://")
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+')
        {
            return Err(CliError::invalid(format!(
                "unknown store {scheme}://: use a folder path, postgres://HOST/DB?tenant=NAME or s3://BUCKET/PREFIX?tenant=NAME"
            )));
        }
        if s.is_empty() {
            return Err(CliError::invalid(
                "the store is empty: give a folder path or postgres://HOST/DB?tenant=NAME",
            ));
        }
        Ok(Location::Folder(PathBuf::from(s)))
    }

    /// The location for messages: a URL without its password.
    pub fn shown(&self) -> String {
        match self {
            Location::Folder(p) => p.display().to_string(),
            Location::Postgres(url) => hide_password(url),
            Location::S3(url) => url.clone(),
        }
    }

    /// A folder name for this memory's caches: its tenant and a hash of the whole location
    /// (without a password), so two memories never share one.
    pub fn cache_name(&self) -> String {
        let shown = self.shown();
        let hash = memdir::Version::of(shown.as_bytes()).to_string();
        let tenant = shown
            .rsplit_once("tenant=")
            .map(|(_, t)| t.split('&').next().unwrap_or(t))
            .unwrap_or("memory");
        let tenant: String = tenant
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        format!("{tenant}-{}", hash.get(..16).unwrap_or(&hash))
    }

    /// True when this names a memory service's root rather than one memory: a PostgreSQL URL
    /// without `tenant=`, or a folder holding a tenant registry (`tenants.json`).
    pub fn is_service(&self) -> bool {
        match self {
            Location::Folder(root) => memdir::tenants::FolderTenants::is_service_root(root),
            Location::Postgres(url) => !has_tenant(url),
            Location::S3(_) => false,
        }
    }

    /// The tenant registry of a service root; `create` makes a missing database or folder.
    pub fn tenants(
        &self,
        create: bool,
    ) -> Result<std::sync::Arc<dyn memdir::tenants::Tenants>, CliError> {
        match self {
            Location::Folder(root) => Ok(std::sync::Arc::new(memdir::tenants::FolderTenants::new(
                root,
            ))),
            Location::Postgres(url) => Ok(std::sync::Arc::new(memdir_store_pg::PgTenants::open(
                url, create,
            )?)),
            Location::S3(_) => Err(CliError::invalid(
                "a memory service keeps its tenants in PostgreSQL or a folder: use --store postgres://HOST/DB or a folder",
            )),
        }
    }

    /// The tenant registry of a service root, and where its people's page sessions live (in
    /// PostgreSQL, the same registry; a folder of tenants has none).
    #[allow(clippy::type_complexity)]
    pub fn service_registry(
        &self,
        create: bool,
        pool_size: usize,
    ) -> Result<
        (
            std::sync::Arc<dyn memdir::tenants::Tenants>,
            Option<std::sync::Arc<dyn memdir_ui::service::SignIns>>,
        ),
        CliError,
    > {
        match self {
            Location::Postgres(url) => {
                let pg = std::sync::Arc::new(memdir_store_pg::PgTenants::open_sized(
                    url, create, pool_size,
                )?);
                Ok((pg.clone(), Some(pg)))
            }
            _ => Ok((self.tenants(create)?, None)),
        }
    }

    /// Opens the backend; `create` makes a missing folder (or registers a new tenant).
    pub fn open(&self, create: bool) -> Result<Backend, CliError> {
        match self {
            Location::Folder(root) => Ok(if create {
                FolderStore::create(root)?
            } else {
                FolderStore::open(root)?
            }
            .backend()),
            Location::Postgres(url) => {
                let store = if create {
                    PgStore::create(url)?
                } else {
                    PgStore::open(url)?
                };
                Ok(store.backend())
            }
            Location::S3(url) => {
                let config = s3_config(url)?;
                let store = if create {
                    memdir_store_s3::S3Store::create(config)?
                } else {
                    memdir_store_s3::S3Store::open(config)?
                };
                Ok(store.backend())
            }
        }
    }
}

/// The settings of an S3 store: credentials, region and endpoint from the usual `AWS_*`
/// environment variables, and the search cache under the user's cache folder. They are read
/// here, when a store is opened, because `export --to` and `import --from` open a second one.
fn s3_config(url: &str) -> Result<memdir_store_s3::S3Config, CliError> {
    let mut config = memdir_store_s3::S3Config::new(url)?.with_aws_vars(std::env::vars());
    if let Some(c) = crate::dirs::cache_home() {
        config = config.with_cache_dir(c.join("memdir").join("s3"));
    }
    Ok(config)
}

/// True when a URL's query names a tenant.
fn has_tenant(url: &str) -> bool {
    url.split_once('?').is_some_and(|(_, q)| {
        q.split('&')
            .any(|p| p.split('=').next() == Some(memdir_store_pg::TENANT_PARAM))
    })
}

/// `scheme://user:secret@host` → `scheme://user@host`.
fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.split_once('@') {
        Some((a, h)) if !a.contains('/') => (a, h),
        _ => return url.to_string(),
    };
    let user = auth.split_once(':').map_or(auth, |(u, _)| u);
    format!("{scheme}://{user}@{host}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::ui::exit;

    #[test]
    fn locations() {
        assert_eq!(
            Location::parse("/tmp/m").unwrap(),
            Location::Folder("/tmp/m".into())
        );
        assert_eq!(
            Location::parse("file:///tmp/m").unwrap(),
            Location::Folder("/tmp/m".into())
        );
        assert!(matches!(
            Location::parse("postgresql://h/db?tenant=a").unwrap(),
            Location::Postgres(_)
        ));
        assert_eq!(
            Location::parse("s3://bucket").unwrap_err().code,
            exit::INVALID
        );
        assert_eq!(
            Location::parse("s3://bucket/mem?tenant=alice").unwrap(),
            Location::S3("s3://bucket/mem?tenant=alice".into())
        );
        assert_eq!(
            Location::parse("gs://bucket").unwrap_err().code,
            exit::INVALID
        );
        assert_eq!(
            Location::parse("postgres://me:pw@h/db?tenant=a")
                .unwrap()
                .shown(),
            "postgres://me@h/db?tenant=a"
        );
    }
}
