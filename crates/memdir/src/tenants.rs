//! The tenants of a memory service: who may reach which memory, by bearer token.
//!
//! A service root (a PostgreSQL database, or a folder of memories) holds many memories, one per
//! tenant, and a registry of credentials: each tenant has a name, a principal (the writer its
//! changes are recorded under, whatever a client says) and the SHA-256 of its bearer token. The
//! token itself is shown once, when it is made, and never stored: a registry that leaks gives
//! no one a way in.
//!
//! Looking a token up by its hash is safe against timing: the hash of a 256-bit random secret
//! tells an attacker nothing they can steer byte by byte. The folder registry still compares
//! hashes in constant time, since it scans them all anyway.
//!
//! ```
//! use memdir::tenants::{FolderTenants, Tenant, Tenants, new_token, token_hash};
//! let dir = tempfile::tempdir().unwrap();
//! let reg = FolderTenants::new(dir.path());
//! let token = new_token().unwrap();
//! reg.add(&Tenant::new("alice", "alice"), &token_hash(&token)).unwrap();
//! assert_eq!(reg.by_token(&token_hash(&token)).unwrap().unwrap().name, "alice");
//! assert!(reg.by_token(&token_hash("mdt_wrong")).unwrap().is_none());
//! ```

use crate::store::StoreError;

pub use memdir_folder::tenants::{FolderTenants, REGISTRY_FILE, TENANTS_DIR};
pub use memdir_store::registry::{
    Tenant, Tenants, check_name, check_principal, default_principal, same,
};

/// How a memdir token starts, so one found in a log or a paste is recognisable.
pub const TOKEN_PREFIX: &str = "mdt_";

/// A new bearer token: `mdt_` and 64 hex digits from the operating system's CSPRNG.
pub fn new_token() -> Result<String, StoreError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| {
        StoreError::Backend(format!("no randomness from the operating system: {e}"))
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

    #[test]
    fn principals_are_writer_names() {
        assert_eq!(
            default_principal("Alice.Smith@example.com"),
            "alice-smith-example-com"
        );
        assert_eq!(default_principal("@@"), "tenant");
        check_principal("alice").unwrap();
        assert!(check_principal("alice@example.com").is_err());
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", ".", "..", "a/b", "a b", "ä", &"x".repeat(129)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["alice", "a.b-c_d@e", "1"] {
            check_name(good).unwrap();
        }
    }
}
