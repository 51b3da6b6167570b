//! A memory's settings (`.memdir/config.toml`) stored as what differs from the defaults.
//!
//! Every memory starts from the same commented template, and most change a line or two of it
//! (a service tenant: its main writer). The template is kept once per database per version of
//! it (`memdir.defaults`, keyed by its SHA-256), and a memory's row of `memdir.meta` holds only
//! the delta from it (`base`, `delta`; `content` NULL): a few dozen bytes where the file is
//! 1.7 KB. A file that shares nothing with the template is kept whole, as before. Reads give back
//! the exact bytes written, also after memdir's template changes, since the template a delta was
//! made against stays in the table.

use crate::delta::Before;
use crate::held::Tx;
use crate::{Db, db_err};
use memdir_store::StoreError;

/// The meta file that holds a memory's settings.
pub(crate) const CONFIG_META: &str = "config.toml";

/// The settings file `init` writes for memdir's own layout: every setting at its default.
fn template() -> String {
    memdir_core::config::Config::template()
}

/// How a settings file is stored: whole, or as a delta against the current template.
enum Stored {
    Whole(Vec<u8>),
    Delta(Vec<u8>),
}

fn store_form(data: &[u8], template: &[u8]) -> Stored {
    let d = Before::between(Some(data), Some(template));
    let shared = match &d {
        Before::Edit { head, tail, .. } => head + tail,
        Before::Absent => 0,
    };
    if shared < 64 {
        return Stored::Whole(data.to_vec());
    }
    Stored::Delta(postcard::to_allocvec(&d).unwrap_or_default())
}

/// The file from its row: whole, or the delta applied to the template it was made against.
pub(crate) fn read_form(
    content: Option<Vec<u8>>,
    delta: Option<Vec<u8>>,
    base: Option<Vec<u8>>,
) -> Result<Vec<u8>, StoreError> {
    if let Some(c) = content {
        return Ok(c);
    }
    let bad =
        || StoreError::Unavailable("postgresql: a stored settings file cannot be read".into());
    let d: Before = postcard::from_bytes(&delta.ok_or_else(bad)?).map_err(|_| bad())?;
    d.apply(Some(&base.ok_or_else(bad)?))
        .flatten()
        .ok_or_else(bad)
}

/// Writes `data` as the settings of `tenant`.
pub(crate) async fn write(c: &Tx<'_>, tenant: &str, data: &[u8]) -> Result<(), StoreError> {
    let t = template();
    match store_form(data, t.as_bytes()) {
        Stored::Whole(data) => c
            .execute(
                "INSERT INTO memdir.meta (tenant, name, content) VALUES ($1, $2, $3)
                 ON CONFLICT (tenant, name) DO UPDATE
                 SET content = EXCLUDED.content, base = NULL, delta = NULL",
                &[&tenant, &CONFIG_META, &data],
            )
            .await
            .map_err(db_err)?,
        Stored::Delta(delta) => c
            .execute(
                "WITH kept AS (
                     INSERT INTO memdir.defaults (hash, content) VALUES (sha256($3), $3)
                     ON CONFLICT DO NOTHING)
                 INSERT INTO memdir.meta (tenant, name, content, base, delta)
                 VALUES ($1, $2, NULL, sha256($3), $4)
                 ON CONFLICT (tenant, name) DO UPDATE
                 SET content = NULL, base = EXCLUDED.base, delta = EXCLUDED.delta",
                &[&tenant, &CONFIG_META, &t.as_bytes(), &delta],
            )
            .await
            .map_err(db_err)?,
    };
    Ok(())
}

impl Db {
    /// A meta file's bytes, settings rebuilt from their delta.
    pub(crate) async fn read_meta(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let c = self.conn().await?;
        let row = c
            .query_opt(
                "SELECT m.content, m.delta, d.content FROM memdir.meta m
                 LEFT JOIN memdir.defaults d ON d.hash = m.base
                 WHERE m.tenant = $1 AND m.name = $2",
                &[&self.tenant, &name],
            )
            .await
            .map_err(db_err)?;
        row.map(|r| read_form(r.get(0), r.get(1), r.get(2)))
            .transpose()
    }
}

/// Migration 4's share: every settings file kept whole becomes a delta where that is smaller.
pub(crate) async fn carry_forward(tx: &tokio_postgres::Transaction<'_>) -> Result<(), StoreError> {
    let mut after = String::new();
    loop {
        let rows = Tx::Raw(tx)
            .query(
                "SELECT tenant, content FROM memdir.meta
                 WHERE name = $1 AND tenant > $2 AND content IS NOT NULL
                 ORDER BY tenant LIMIT 1000",
                &[&CONFIG_META, &after],
            )
            .await
            .map_err(db_err)?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.get(0);
        for r in &rows {
            let (tenant, data): (&str, &[u8]) = (r.get(0), r.get(1));
            write(&Tx::Raw(tx), tenant, data).await?;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn round_trip(data: &[u8]) -> (bool, Vec<u8>) {
        let t = template();
        match store_form(data, t.as_bytes()) {
            Stored::Whole(c) => (false, read_form(Some(c), None, None).unwrap()),
            Stored::Delta(d) => {
                assert!(d.len() < 64, "{} bytes", d.len());
                (
                    true,
                    read_form(None, Some(d), Some(t.into_bytes())).unwrap(),
                )
            }
        }
    }

    #[test]
    fn settings_near_the_template_are_a_few_bytes() {
        let t = template();
        assert_eq!(round_trip(t.as_bytes()), (true, t.clone().into_bytes()));
        let alice = t.replacen("# main = \"main\"", "main = \"alice\"", 1);
        assert_ne!(alice, t);
        assert_eq!(round_trip(alice.as_bytes()), (true, alice.into_bytes()));
        // Nothing in common: kept whole.
        assert_eq!(
            round_trip(b"[git]\nenabled = false\n"),
            (false, b"[git]\nenabled = false\n".to_vec())
        );
    }
}
