//! The person's page as `memdir serve` sets it up: which host names it answers to, and a
//! service's `[ui]` operator settings (single sign-on keys read from files and the environment
//! here, in the binary, and handed to memdir-ui as values).

use crate::ui::CliError;
use memdir_ui::sso::Sso;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// `[ui]` of a service's operator config.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiSettings {
    /// Sign-in with a product's short-lived signed token.
    pub sso: Option<SsoSettings>,
}

/// `[ui.sso]`: exactly one key source, and optionally the issuer tokens must name.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SsoSettings {
    /// The environment variable holding the HS256 secret (never the secret itself).
    pub hs256_secret_env: Option<String>,
    /// A PEM file with the RSA (RS256) or P-256 (ES256) public key.
    pub public_key_pem: Option<PathBuf>,
    /// A JWKS file with the public keys (RS256 or ES256), chosen by the token's `kid`.
    pub jwks: Option<PathBuf>,
    /// The `iss` every token must carry, when set.
    pub issuer: Option<String>,
}

/// The single sign-on `[ui.sso]` describes; file paths are relative to the config's folder.
pub fn sso(settings: &UiSettings, base: &Path) -> Result<Option<Sso>, CliError> {
    let Some(s) = &settings.sso else {
        return Ok(None);
    };
    let bad = |m: String| CliError::invalid(format!("[ui.sso]: {m}"));
    let read = |p: &PathBuf| {
        let path = base.join(p);
        std::fs::read(&path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))
    };
    let sso = match (&s.hs256_secret_env, &s.public_key_pem, &s.jwks) {
        (Some(var), None, None) => {
            let secret = std::env::var(var)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| {
                    bad(format!(
                        "hs256_secret_env names {var}, which is not set: export the shared secret in it"
                    ))
                })?;
            Sso::hs256(secret.trim().as_bytes())
        }
        (None, Some(pem), None) => Sso::pem(&read(pem)?),
        (None, None, Some(jwks)) => Sso::jwks(&read(jwks)?),
        _ => {
            return Err(bad(
                "set exactly one of hs256_secret_env, public_key_pem and jwks".into(),
            ));
        }
    }
    .map_err(|e| bad(e.to_string()))?;
    Ok(Some(sso.with_issuer(s.issuer.clone())))
}

/// The host names the page answers to when listening on `listen`: the loopback names on
/// loopback, and the listening address unless it is unspecified (the public URL's host is
/// added by the page itself).
pub fn hosts(listen: SocketAddr) -> Vec<String> {
    let mut hosts = if listen.ip().is_loopback() {
        memdir_ui::PageConfig::loopback().hosts
    } else {
        Vec::new()
    };
    if !listen.ip().is_unspecified() {
        hosts.push(match listen {
            SocketAddr::V4(v4) => v4.ip().to_string(),
            SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
        });
    }
    hosts
}
