//! Ranked mode: BM25 over lines.

use super::walk::Scope;
use super::{SearchOutcome, SearchRequest};
use crate::error::Error;
use std::path::Path;

/// Runs a ranked search over the folder at `root`.
pub(crate) fn search(
    _root: &Path,
    _scope: &Scope,
    _req: &SearchRequest,
) -> Result<SearchOutcome, Error> {
    Err(Error::Invalid(
        "ranked mode is not built yet: use --mode grep".to_string(),
    ))
}
