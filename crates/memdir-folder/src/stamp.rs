//! How the keyword and vector indexes tell a changed file from an unchanged one: a file whose
//! size and modification time are as recorded is skipped; any other is read and hashed, and
//! re-indexed only if its content hash changed.

/// The modification time recorded for a file too recently changed to be trusted; a stamp with
/// it never counts as unchanged.
pub const UNTRUSTED: i64 = -1;

/// A file's size and modification time (ns) as an index records them. A file modified in the
/// last two seconds (or in the future) gets an untrusted time instead: a write within the same
/// clock tick as the recorded one can leave both unchanged (git's "racily clean" problem), so
/// such a file is read and hashed again at every sync until it has aged.
pub fn change_stamp(meta: &std::fs::Metadata) -> (i64, i64) {
    let size = i64::try_from(meta.len()).unwrap_or(i64::MAX);
    let since_epoch = |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).ok();
    let mtime = meta.modified().ok().and_then(since_epoch);
    let now = since_epoch(std::time::SystemTime::now());
    let mtime = match (mtime, now) {
        (Some(m), Some(n)) if m + std::time::Duration::from_secs(2) <= n => {
            i64::try_from(m.as_nanos()).unwrap_or(UNTRUSTED)
        }
        _ => UNTRUSTED,
    };
    (size, mtime)
}

/// True if a file stamped `now` can be skipped, having been `recorded` with the same stamp.
pub fn unchanged(recorded: (i64, i64), now: (i64, i64)) -> bool {
    recorded == now && now.1 != UNTRUSTED
}

/// FNV-1a, 64 bits, with the length: change detection, not a security boundary.
pub fn content_hash(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}:{}", bytes.len())
}
