//! Small secrets a memory keeps outside its own files (the gates' key and the ledger's head
//! memdir last wrote), so that a writer of the files alone can neither read the key nor make the
//! remembered head agree with a forged ledger.
//!
//! A folder's are files in the user's state folder (`memdir_folder::keys::Dir`); PostgreSQL
//! keeps them in a table of the service's database beside the tenant's rows, not among them
//! (`memdir_store_pg::PgKeys`).

use crate::store::StoreError;

/// Where a memory's secrets live: named byte strings, each made once and read back, or replaced
/// whole.
pub trait KeyStore: Send + Sync {
    /// The bytes of `name`; `None` when it was never made.
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Makes `name` holding `bytes`; false (and nothing changed) when it exists already.
    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, StoreError>;

    /// Sets `name` to `bytes`, made or replaced whole.
    fn replace(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError>;

    /// Where they are, for messages (a folder's path, a database table and tenant).
    fn shown(&self) -> String;
}
