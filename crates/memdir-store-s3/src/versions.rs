//! Older versions of objects, in a bucket that keeps them (S3 versioning): listed with
//! `ListObjectVersions` and deleted one by one with `DeleteObject?versionId=`, which
//! object_store does not send. Both go out as URLs object_store presigns with the store's own
//! endpoint, region and credentials ([`Signer::signed_url_opts`]), so nothing here signs by
//! hand. A bucket that never kept versions lists each object once, as its latest.
//!
//! Only `forget` uses this: nothing else in memdir removes an object's older versions.

use crate::{Tenant, s3_err};
use object_store::path::Path as Key;
use object_store::signer::SignedUrlOptions;
use reqwest::Method;
use std::time::Duration;

/// How long a presigned request stays valid: it is sent at once.
const VALID: Duration = Duration::from_secs(300);

/// One version of one object.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct ObjectVersion {
    pub(crate) key: String,
    pub(crate) version_id: String,
    #[serde(default)]
    pub(crate) is_latest: bool,
}

/// One page of `ListObjectVersions` (versions and delete markers come interleaved).
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Page {
    #[serde(default)]
    is_truncated: bool,
    next_key_marker: Option<String>,
    next_version_id_marker: Option<String>,
    #[serde(rename = "Version", default)]
    versions: Vec<ObjectVersion>,
    #[serde(rename = "DeleteMarker", default)]
    markers: Vec<ObjectVersion>,
}

/// Every version under a prefix: those holding bytes, and the delete markers.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    pub(crate) versions: Vec<ObjectVersion>,
    pub(crate) markers: Vec<ObjectVersion>,
}

impl Tenant {
    /// A presigned request to `key` (the bucket itself when empty) with `query` signed in.
    async fn signed(
        &self,
        method: Method,
        key: &Key,
        query: Vec<(String, String)>,
    ) -> Result<reqwest::Response, String> {
        let opts = SignedUrlOptions::new().with_query(query);
        let url = self
            .signer
            .signed_url_opts(method.clone(), key, VALID, &opts)
            .await
            .map_err(|e| e.to_string())?;
        let answer = self
            .http
            .request(method, url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = answer.status();
        if status.is_success() {
            return Ok(answer);
        }
        let body = answer.text().await.unwrap_or_default();
        // S3's error document: its code says why (AccessDenied, NotImplemented, ...).
        let code = body
            .split("<Code>")
            .nth(1)
            .and_then(|s| s.split("</Code>").next())
            .unwrap_or("");
        Err(format!("{status} {code}").trim().to_string())
    }

    /// Every version of every object under `prefix/` (a folder of keys).
    pub(crate) async fn list_versions(&self, prefix: &str) -> Result<Listed, String> {
        let mut out = Listed::default();
        let mut marker: Option<(String, String)> = None;
        loop {
            let mut query = vec![
                ("versions".to_string(), String::new()),
                ("prefix".to_string(), format!("{prefix}/")),
            ];
            if let Some((k, v)) = &marker {
                query.push(("key-marker".into(), k.clone()));
                query.push(("version-id-marker".into(), v.clone()));
            }
            self.count_list();
            let body = self
                .signed(Method::GET, &Key::default(), query)
                .await?
                .bytes()
                .await
                .map_err(|e| e.to_string())?;
            let page: Page = quick_xml::de::from_reader(body.as_ref())
                .map_err(|e| format!("an unreadable version listing: {e}"))?;
            out.versions.extend(page.versions);
            out.markers.extend(page.markers);
            match (page.is_truncated, page.next_key_marker) {
                (true, Some(k)) => {
                    marker = Some((k, page.next_version_id_marker.unwrap_or_default()));
                }
                _ => return Ok(out),
            }
        }
    }

    /// Deletes one version of one object (a delete marker too); a version already gone is fine.
    pub(crate) async fn delete_version(&self, v: &ObjectVersion) -> Result<(), String> {
        let key = Key::parse(&v.key).map_err(|e| e.to_string())?;
        self.count_delete();
        match self
            .signed(
                Method::DELETE,
                &key,
                vec![("versionId".into(), v.version_id.clone())],
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.starts_with("404") => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The bytes of one version of one object; `None` when it is gone.
    pub(crate) async fn get_version(
        &self,
        v: &ObjectVersion,
    ) -> Result<Option<bytes::Bytes>, crate::StoreError> {
        let key = Key::parse(&v.key).map_err(|e| {
            crate::StoreError::Unavailable(format!("s3: a listed key {:?}: {e}", v.key))
        })?;
        let opts = object_store::GetOptions {
            version: Some(v.version_id.clone()),
            ..object_store::GetOptions::default()
        };
        self.count_get();
        match self.os.get_opts(&key, opts).await {
            Ok(r) => Ok(Some(r.bytes().await.map_err(|e| s3_err("read", e))?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(s3_err("read", e)),
        }
    }
}
