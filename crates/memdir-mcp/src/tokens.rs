//! A service's bearer tokens: minted here, shown once, kept by the registry only as a hash.
//!
//! ```
//! use memdir::tenants::{FolderTenants, Tenant, Tenants};
//! use memdir_mcp::tokens::{new_token, token_hash};
//! let dir = tempfile::tempdir().unwrap();
//! let reg = FolderTenants::new(dir.path());
//! let token = new_token().unwrap();
//! reg.add(&Tenant::new("alice", "alice"), &token_hash(&token)).unwrap();
//! assert_eq!(reg.by_token(&token_hash(&token)).unwrap().unwrap().name, "alice");
//! assert!(reg.by_token(&token_hash("mdt_wrong")).unwrap().is_none());
//! ```

use memdir::StoreError;

/// How a memdir token starts, so one found in a log or a paste is recognisable.
pub const TOKEN_PREFIX: &str = "mdt_";

/// A new bearer token: `mdt_` and 64 hex digits from the operating system's CSPRNG.
pub fn new_token() -> Result<String, StoreError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| {
        StoreError::Unavailable(format!("no randomness from the operating system: {e}"))
    })?;
    let mut s = String::with_capacity(TOKEN_PREFIX.len() + 64);
    s.push_str(TOKEN_PREFIX);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    Ok(s)
}

/// What the registry keeps of a token: its SHA-256, in hex.
pub fn token_hash(token: &str) -> String {
    memdir_core::gates::sha256_hex(token.trim().as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == 68);
        assert_ne!(a, b);
        assert_eq!(token_hash(&a).len(), 64);
        assert_ne!(token_hash(&a), token_hash(&b));
    }
}
