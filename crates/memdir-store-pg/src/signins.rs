//! The person's page of a service in PostgreSQL: sign-in codes, spent tokens and sessions as
//! rows of their own tables, keyed by SHA-256 (never the secret itself).
//!
//! A code is used up by one `UPDATE ... WHERE NOT used ... RETURNING`, so two requests racing
//! for it (on one instance or two) get it once between them; a token is spent by an `INSERT`
//! that conflicts on its second use. Rows reference their tenant, so purging a tenant removes
//! its people's sessions with it.

use crate::db_err;
use crate::held::Handle;
use crate::tenants::PgTenants;
use memdir_store::StoreError;
use memdir_store::signins::{PersonSession, SignIns};

/// Migration 4: new tables only; no existing table changes.
pub(crate) const MIGRATION: &str = r#"
-- Single-use sign-in codes (`kind` 'code') and signed tokens already used ('token'), by SHA-256.
CREATE TABLE memdir.ui_signins (
    sha256     text PRIMARY KEY,
    kind       text NOT NULL CHECK (kind IN ('code', 'token')),
    tenant     text NOT NULL REFERENCES memdir.tenants ON DELETE CASCADE,
    person     text NOT NULL,
    expires_ms bigint NOT NULL,
    used       boolean NOT NULL DEFAULT false
);
CREATE INDEX ui_signins_by_expiry ON memdir.ui_signins (expires_ms);
-- Signed-in people, by the SHA-256 of their cookie's secret.
CREATE TABLE memdir.ui_sessions (
    sha256     text PRIMARY KEY,
    tenant     text NOT NULL REFERENCES memdir.tenants ON DELETE CASCADE,
    person     text NOT NULL,
    created_ms bigint NOT NULL,
    seen_ms    bigint NOT NULL
);
CREATE INDEX ui_sessions_by_tenant ON memdir.ui_sessions (tenant);
-- The URL the service's page was last announced at (one row).
CREATE TABLE memdir.ui_served (
    one      boolean PRIMARY KEY DEFAULT true CHECK (one),
    base_url text NOT NULL,
    at_ms    bigint NOT NULL
);
"#;

fn pair(r: &tokio_postgres::Row) -> (String, String) {
    (r.get(0), r.get(1))
}

impl SignIns for PgTenants {
    fn add_code(
        &self,
        code_sha256: &str,
        tenant: &str,
        person: &str,
        expires_ms: i64,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let pool = self.pool.clone();
        let (h, t, p) = (
            code_sha256.to_string(),
            tenant.to_string(),
            person.to_string(),
        );
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.execute(
                "DELETE FROM memdir.ui_signins WHERE expires_ms <= $1",
                &[&now_ms],
            )
            .await
            .map_err(db_err)?;
            c.execute(
                "INSERT INTO memdir.ui_signins (sha256, kind, tenant, person, expires_ms)
                 VALUES ($1, 'code', $2, $3, $4)",
                &[&h, &t, &p, &expires_ms],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })
    }

    fn peek_code(
        &self,
        code_sha256: &str,
        now_ms: i64,
    ) -> Result<Option<(String, String)>, StoreError> {
        let (pool, h) = (self.pool.clone(), code_sha256.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let row = c
                .query_opt(
                    "SELECT tenant, person FROM memdir.ui_signins
                     WHERE sha256 = $1 AND kind = 'code' AND NOT used AND expires_ms > $2",
                    &[&h, &now_ms],
                )
                .await
                .map_err(db_err)?;
            Ok(row.as_ref().map(pair))
        })
    }

    fn take_code(
        &self,
        code_sha256: &str,
        now_ms: i64,
    ) -> Result<Option<(String, String)>, StoreError> {
        let (pool, h) = (self.pool.clone(), code_sha256.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let row = c
                .query_opt(
                    "UPDATE memdir.ui_signins SET used = true
                     WHERE sha256 = $1 AND kind = 'code' AND NOT used AND expires_ms > $2
                     RETURNING tenant, person",
                    &[&h, &now_ms],
                )
                .await
                .map_err(db_err)?;
            Ok(row.as_ref().map(pair))
        })
    }

    fn spend_token(
        &self,
        token_sha256: &str,
        tenant: &str,
        person: &str,
        expires_ms: i64,
    ) -> Result<bool, StoreError> {
        let pool = self.pool.clone();
        let (h, t, p) = (
            token_sha256.to_string(),
            tenant.to_string(),
            person.to_string(),
        );
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let n = c
                .execute(
                    "INSERT INTO memdir.ui_signins (sha256, kind, tenant, person, expires_ms, used)
                     VALUES ($1, 'token', $2, $3, $4, true) ON CONFLICT DO NOTHING",
                    &[&h, &t, &p, &expires_ms],
                )
                .await
                .map_err(db_err)?;
            Ok(n == 1)
        })
    }

    fn start_session(
        &self,
        session_sha256: &str,
        tenant: &str,
        person: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let pool = self.pool.clone();
        let (h, t, p) = (
            session_sha256.to_string(),
            tenant.to_string(),
            person.to_string(),
        );
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.execute(
                "INSERT INTO memdir.ui_sessions (sha256, tenant, person, created_ms, seen_ms)
                 VALUES ($1, $2, $3, $4, $4)",
                &[&h, &t, &p, &now_ms],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })
    }

    fn session(&self, session_sha256: &str) -> Result<Option<PersonSession>, StoreError> {
        let (pool, h) = (self.pool.clone(), session_sha256.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let row = c
                .query_opt(
                    "SELECT tenant, person, created_ms, seen_ms FROM memdir.ui_sessions
                     WHERE sha256 = $1",
                    &[&h],
                )
                .await
                .map_err(db_err)?;
            Ok(row.map(|r| PersonSession {
                tenant: r.get(0),
                person: r.get(1),
                created_ms: r.get(2),
                seen_ms: r.get(3),
            }))
        })
    }

    fn touch_session(&self, session_sha256: &str, now_ms: i64) -> Result<(), StoreError> {
        let (pool, h) = (self.pool.clone(), session_sha256.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.execute(
                "UPDATE memdir.ui_sessions SET seen_ms = greatest(seen_ms, $2) WHERE sha256 = $1",
                &[&h, &now_ms],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })
    }

    fn end_session(&self, session_sha256: &str) -> Result<(), StoreError> {
        let (pool, h) = (self.pool.clone(), session_sha256.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.execute("DELETE FROM memdir.ui_sessions WHERE sha256 = $1", &[&h])
                .await
                .map_err(db_err)?;
            Ok(())
        })
    }

    fn forget_sessions(
        &self,
        seen_before_ms: i64,
        created_before_ms: i64,
    ) -> Result<(), StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.execute(
                "DELETE FROM memdir.ui_sessions WHERE seen_ms < $1 OR created_ms < $2",
                &[&seen_before_ms, &created_before_ms],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })
    }

    fn announce(&self, base_url: &str, now_ms: i64) -> Result<(), StoreError> {
        let (pool, u) = (self.pool.clone(), base_url.to_string());
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            c.execute(
                "INSERT INTO memdir.ui_served (one, base_url, at_ms) VALUES (true, $1, $2)
                 ON CONFLICT (one) DO UPDATE SET base_url = $1, at_ms = $2",
                &[&u, &now_ms],
            )
            .await
            .map_err(db_err)?;
            Ok(())
        })
    }

    fn announced(&self) -> Result<Option<String>, StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let c = Handle::pooled(&pool).await?;
            let row = c
                .query_opt("SELECT base_url FROM memdir.ui_served", &[])
                .await
                .map_err(db_err)?;
            Ok(row.map(|r| r.get(0)))
        })
    }
}
