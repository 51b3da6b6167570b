//! Sign-in from a product's own login: a short-lived signed JWT (`[ui.sso]` of a service's
//! operator config) becomes a session, so a product signs its user in without a second password.
//!
//! The token must carry `sub` (the person, recorded as the writer of their changes), `tenant`
//! (whose memory they see), `exp` and `aud` = `"memdir"`; it must expire within
//! [`MAX_LIFETIME_SECS`] of now, and it works once (the service records its hash until it
//! expires). The key is the operator's: an HS256 secret, or RS256/ES256 public keys from a PEM
//! file or a JWKS document. Only the algorithm of the configured key is accepted, so a token
//! cannot choose how it is checked (no `none`, no HS256 signed with a public key).
//!
//! The keys are given as values: reading the files and the environment is the binary's job.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;

/// The audience every token must name.
pub const AUDIENCE: &str = "memdir";
/// A token may expire at most this long after it is presented (seconds): sign-in tokens are
/// made for the redirect that carries them, not kept.
pub const MAX_LIFETIME_SECS: i64 = 15 * 60;
/// Clock difference tolerated between the product and memdir (seconds).
pub const LEEWAY_SECS: i64 = 60;

/// Why a token was refused: each says what to do.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SsoError {
    /// The signature, algorithm, audience, issuer or shape is wrong.
    #[error(
        "this sign-in token is not valid ({0}): sign in again from the product that sent you here"
    )]
    Invalid(String),
    /// `exp` has passed.
    #[error("this sign-in token has expired: sign in again from the product that sent you here")]
    Expired,
    /// `exp` is too far ahead.
    #[error(
        "this sign-in token lives too long (more than {} minutes): the product must make short-lived tokens",
        MAX_LIFETIME_SECS / 60
    )]
    TooLong,
    /// The token was used already.
    #[error(
        "this sign-in token was used already: sign in again from the product that sent you here"
    )]
    Reused,
    /// The configured key cannot be read.
    #[error("{0}")]
    Key(String),
}

/// The person a valid token signs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The person (`sub`).
    pub person: String,
    /// Their tenant (`tenant`).
    pub tenant: String,
    /// When the token expires, Unix seconds (`exp`).
    pub exp: i64,
}

#[derive(Deserialize)]
struct Raw {
    sub: String,
    tenant: String,
    exp: i64,
}

enum Keys {
    /// One key and the one algorithm it checks.
    One(DecodingKey, Algorithm),
    /// A JWKS: the key named by the token's `kid` (or the only one), RS256 or ES256.
    Set(JwkSet),
}

/// A configured single sign-on: the operator's key, and the issuer tokens must name, if set.
pub struct Sso {
    keys: Keys,
    issuer: Option<String>,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sso")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl Sso {
    /// Tokens signed with HS256 and `secret` (at least 32 bytes).
    pub fn hs256(secret: &[u8]) -> Result<Sso, SsoError> {
        if secret.len() < 32 {
            return Err(SsoError::Key(
                "the HS256 secret is shorter than 32 bytes: use a long random secret".into(),
            ));
        }
        let key = DecodingKey::from_secret(secret).map_err(|e| SsoError::Key(e.to_string()))?;
        Ok(Sso {
            keys: Keys::One(key, Algorithm::HS256),
            issuer: None,
        })
    }

    /// Tokens signed with the private half of a PEM public key: RSA (RS256) or P-256 (ES256).
    pub fn pem(pem: &[u8]) -> Result<Sso, SsoError> {
        let keys = if let Ok(k) = DecodingKey::from_rsa_pem(pem) {
            Keys::One(k, Algorithm::RS256)
        } else if let Ok(k) = DecodingKey::from_ec_pem(pem) {
            Keys::One(k, Algorithm::ES256)
        } else {
            return Err(SsoError::Key(
                "the PEM file holds no RSA or P-256 public key".into(),
            ));
        };
        Ok(Sso { keys, issuer: None })
    }

    /// Tokens signed with one of the keys of a JWKS document (RS256 or ES256).
    pub fn jwks(json: &[u8]) -> Result<Sso, SsoError> {
        let set: JwkSet = serde_json::from_slice(json)
            .map_err(|e| SsoError::Key(format!("the JWKS document does not parse: {e}")))?;
        if set.keys.is_empty() {
            return Err(SsoError::Key("the JWKS document holds no key".into()));
        }
        Ok(Sso {
            keys: Keys::Set(set),
            issuer: None,
        })
    }

    /// Requires tokens to name `issuer` in `iss`.
    pub fn with_issuer(mut self, issuer: Option<String>) -> Sso {
        self.issuer = issuer;
        self
    }

    /// Checks `token` at `now` (Unix seconds): signature, algorithm, audience, issuer, expiry
    /// and lifetime. Whether it was used already is the caller's to check.
    pub fn verify(&self, token: &str, now: i64) -> Result<Claims, SsoError> {
        let invalid = |e: jsonwebtoken::errors::Error| SsoError::Invalid(e.to_string());
        let (key, alg) = match &self.keys {
            Keys::One(k, a) => (k.clone(), *a),
            Keys::Set(set) => {
                let header = decode_header(token).map_err(invalid)?;
                let jwk = match header.kid.as_deref() {
                    Some(kid) => set.find(kid),
                    None if set.keys.len() == 1 => set.keys.first(),
                    None => None,
                }
                .ok_or_else(|| SsoError::Invalid("no key of the JWKS has its kid".into()))?;
                if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
                    return Err(SsoError::Invalid(format!(
                        "algorithm {:?} is not RS256 or ES256",
                        header.alg
                    )));
                }
                (DecodingKey::from_jwk(jwk).map_err(invalid)?, header.alg)
            }
        };
        let mut v = Validation::new(alg);
        v.set_audience(&[AUDIENCE]);
        v.set_required_spec_claims(&["exp", "aud", "sub"]);
        // Expiry is checked below against memdir's clock (the one every test pins).
        v.validate_exp = false;
        if let Some(iss) = &self.issuer {
            v.set_issuer(&[iss]);
            v.required_spec_claims.insert("iss".into());
        }
        let raw = decode::<Raw>(token, &key, &v).map_err(invalid)?.claims;
        if raw.exp + LEEWAY_SECS <= now {
            return Err(SsoError::Expired);
        }
        if raw.exp > now + MAX_LIFETIME_SECS {
            return Err(SsoError::TooLong);
        }
        Ok(Claims {
            person: raw.sub,
            tenant: raw.tenant,
            exp: raw.exp,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header, encode};

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";
    const NOW: i64 = 1_796_000_000;

    fn token(alg: Algorithm, key: &EncodingKey, claims: serde_json::Value) -> String {
        encode(&Header::new(alg), &claims, key).unwrap()
    }

    fn claims(exp: i64) -> serde_json::Value {
        serde_json::json!({"sub": "ana", "tenant": "acme", "exp": exp, "aud": "memdir"})
    }

    #[test]
    fn hs256_tokens_are_checked() {
        let sso = Sso::hs256(SECRET).unwrap();
        let key = EncodingKey::from_secret(SECRET).unwrap();
        let ok = token(Algorithm::HS256, &key, claims(NOW + 300));
        assert_eq!(
            sso.verify(&ok, NOW).unwrap(),
            Claims {
                person: "ana".into(),
                tenant: "acme".into(),
                exp: NOW + 300
            }
        );
        assert_eq!(sso.verify(&ok, NOW + 400), Err(SsoError::Expired));
        let long = token(Algorithm::HS256, &key, claims(NOW + 3600));
        assert_eq!(sso.verify(&long, NOW), Err(SsoError::TooLong));
        let other = EncodingKey::from_secret(b"another secret, also 32 bytes long!!").unwrap();
        let forged = token(Algorithm::HS256, &other, claims(NOW + 300));
        assert!(matches!(
            sso.verify(&forged, NOW),
            Err(SsoError::Invalid(_))
        ));
        let mut wrong_aud = claims(NOW + 300);
        wrong_aud["aud"] = "someone-else".into();
        let t = token(Algorithm::HS256, &key, wrong_aud);
        assert!(matches!(sso.verify(&t, NOW), Err(SsoError::Invalid(_))));
        let mut no_tenant = claims(NOW + 300);
        no_tenant.as_object_mut().unwrap().remove("tenant");
        let t = token(Algorithm::HS256, &key, no_tenant);
        assert!(matches!(sso.verify(&t, NOW), Err(SsoError::Invalid(_))));
        // `alg: none` and a mangled token.
        let parts: Vec<&str> = ok.split('.').collect();
        let none = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{}.", parts[1]);
        assert!(matches!(sso.verify(&none, NOW), Err(SsoError::Invalid(_))));
        assert!(matches!(sso.verify("x.y", NOW), Err(SsoError::Invalid(_))));
        assert!(Sso::hs256(b"short").is_err());
    }

    #[test]
    fn an_issuer_when_set_must_match() {
        let sso = Sso::hs256(SECRET)
            .unwrap()
            .with_issuer(Some("https://app.example".into()));
        let key = EncodingKey::from_secret(SECRET).unwrap();
        let t = token(Algorithm::HS256, &key, claims(NOW + 60));
        assert!(matches!(sso.verify(&t, NOW), Err(SsoError::Invalid(_))));
        let mut c = claims(NOW + 60);
        c["iss"] = "https://app.example".into();
        let t = token(Algorithm::HS256, &key, c);
        assert!(sso.verify(&t, NOW).is_ok());
    }

    /// A P-256 key pair made for these tests only (never used anywhere else).
    const EC_PRIVATE: &[u8] = include_bytes!("../tests/data/sso-test-es256-private.pem");
    const EC_PUBLIC: &[u8] = include_bytes!("../tests/data/sso-test-es256-public.pem");
    const JWKS: &[u8] = include_bytes!("../tests/data/sso-test-jwks.json");

    #[test]
    fn es256_from_a_pem_or_a_jwks() {
        let key = EncodingKey::from_ec_pem(EC_PRIVATE).unwrap();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        let t = encode(&header, &claims(NOW + 120), &key).unwrap();
        for sso in [Sso::pem(EC_PUBLIC).unwrap(), Sso::jwks(JWKS).unwrap()] {
            assert_eq!(sso.verify(&t, NOW).unwrap().person, "ana");
            // HS256 "signed" with the public key's bytes (algorithm confusion) is refused.
            let hs = EncodingKey::from_secret(EC_PUBLIC).unwrap();
            let confused = encode(&Header::new(Algorithm::HS256), &claims(NOW + 120), &hs).unwrap();
            assert!(matches!(
                sso.verify(&confused, NOW),
                Err(SsoError::Invalid(_))
            ));
        }
        header.kid = Some("unknown".into());
        let t = encode(&header, &claims(NOW + 120), &key).unwrap();
        assert!(matches!(
            Sso::jwks(JWKS).unwrap().verify(&t, NOW),
            Err(SsoError::Invalid(_))
        ));
        assert!(Sso::pem(b"not a key").is_err());
        assert!(Sso::jwks(b"{\"keys\": []}").is_err());
    }
}
