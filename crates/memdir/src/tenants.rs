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
//! Minting and hashing tokens is the service's (`memdir-mcp`'s `tokens`); this module gathers the
//! registry seam and the folder registry for the front ends.

pub use memdir_folder::tenants::{FolderTenants, REGISTRY_FILE, TENANTS_DIR};
pub use memdir_store::registry::{
    DAY_MS, Job, Schedule, Tenant, Tenants, check_name, check_principal, default_principal, same,
};
