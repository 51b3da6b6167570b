//! What a context reads, named up front so a remote store fetches it in one round trip
//! ([`Store::prefetch`](crate::store::Store::prefetch)): on PostgreSQL a warm `memory_context`
//! is one query instead of a query (and an existence check) per file, listing and key.

use crate::ctx::Ctx;
use crate::store::{Contents, Prefetched, Want};
use memdir_core::path::MemPath;

/// Prefetches every file, listing, meta file and key a context (`layers::context_sections`) reads, for
/// as long as the guard lives. Paths that do not parse are left out (their reads fail as usual).
pub(crate) fn context(cx: &Ctx) -> Prefetched {
    let layout = cx.layout();
    let file = |p: &str| MemPath::parse(p).ok().map(Want::File);
    let dir = |p: &str, c: Contents| MemPath::parse(p).ok().map(|p| Want::Dir(p, c));
    // Each of the newest days may have a file per writer: twice the days covers the usual
    // case, and a day past it is read from the store as before.
    let days = cx.config().context.log_days.saturating_mul(2);
    let wants: Vec<Want> = [
        file(layout.core),
        layout.index_path().and_then(file),
        file(layout.state),
        dir(layout.log_dir, Contents::Last(days)),
        dir(layout.scratch, Contents::All),
        dir(crate::proposals::PROPOSALS_DIR, Contents::All),
        dir(memdir_core::gates::LEDGER_DIR, Contents::All),
        Some(Want::Meta(crate::change::JOURNAL.to_string())),
        Some(Want::Meta(crate::gates::HEAD_META.to_string())),
        Some(Want::Key(crate::gates::KEY_FILE.to_string())),
        Some(Want::Key(crate::gates::HEAD_FILE.to_string())),
    ]
    .into_iter()
    .flatten()
    .collect();
    cx.store().prefetch(&wants)
}
