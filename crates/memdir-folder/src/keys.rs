//! Small files a memory keeps outside its folder, in a folder of the user's (the gates' key and
//! remembered head): read, made once for the user alone, or replaced whole.

use std::io;
use std::path::Path;

/// The bytes of `dir/name`; `None` when it does not exist.
pub fn read(dir: &Path, name: &str) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(dir.join(name)) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Makes `dir` (for the user alone) and `dir/name` holding `bytes`, readable by the user
/// alone and synced; false when the file already exists (it is left as it is).
pub fn create_secret(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<bool> {
    use std::io::Write as _;
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut dirs, 0o700);
    dirs.create(dir)?;
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    match open.open(dir.join(name)) {
        Ok(mut f) => {
            f.write_all(bytes)?;
            f.sync_all()?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Replaces `dir/name` with `bytes` whole (written beside it, then renamed over it).
pub fn replace(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name))
}

/// A key folder as a [`KeyStore`](memdir_store::KeyStore): the user's state folder of one
/// memory.
#[derive(Debug, Clone)]
pub struct Dir(pub std::path::PathBuf);

impl Dir {
    fn err(&self, what: &str, name: &str, e: io::Error) -> memdir_store::StoreError {
        memdir_store::StoreError::Unavailable(format!(
            "cannot {what} the gates' {name} in {}: {e}",
            self.0.display()
        ))
    }
}

impl memdir_store::KeyStore for Dir {
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, memdir_store::StoreError> {
        read(&self.0, name).map_err(|e| self.err("read", name, e))
    }

    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, memdir_store::StoreError> {
        create_secret(&self.0, name, bytes).map_err(|e| self.err("make", name, e))
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<(), memdir_store::StoreError> {
        replace(&self.0, name, bytes).map_err(|e| self.err("record", name, e))
    }

    fn shown(&self) -> String {
        self.0.display().to_string()
    }
}
