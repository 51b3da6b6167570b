//! What every write passes before the engine stores it: the path ([`path`], which every
//! [`Change`](crate::change::Change) write runs itself, so no feature can skip it) and the
//! content ([`content`]: credentials).
//!
//! The path guard: the gates' ledger (`gates/`) is written only by the gate itself, `gates.toml`
//! only by the user and never from an agent surface, and the generated indexes (`MEMORY.md`,
//! a folder's generated index) only by the index code. A change that is refused writes nothing.
//!
//! Every write entry point (log, scratch, write, edit and the partial edits, state, note new,
//! import, and through them offload, proposals, the MCP tools, REST, hooks and the memory tool)
//! hands its new text to [`content`] first, before its change begins, so a secret never reaches
//! a file, the change journal (which holds a log entry) or a proposal. The detector is
//! [`memdir_secrets`] (gitleaks' rule set); the policy is `[secrets] policy` in
//! `.memdir/config.toml`:
//! - `redact` (default): each secret becomes `[redacted:<kind>:<first-4>…]`, and the change's
//!   recorded reason says how many secrets of which kinds it redacted, never their values;
//! - `refuse`: the write fails with one line naming the kind and the line, nothing written;
//! - `off`: content is stored as given.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::provenance::Source;
use memdir_core::config::SecretPolicy;
use memdir_core::gates::{GATES_DIR, GateFile, POLICY_FILE, gate_file};
use memdir_core::path::MemPath;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Secrets found in writes by this process (redacted or refused), for `/metrics`.
static HITS: AtomicU64 = AtomicU64::new(0);

/// How many secrets writes in this process carried (each redacted or refused).
pub fn secrets_found() -> u64 {
    HITS.load(Ordering::Relaxed)
}

/// Content that passed the guard: the text to store and the kinds of the secrets redacted
/// from it (empty when nothing was).
#[derive(Debug)]
pub(crate) struct Guarded<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) redacted: Vec<&'static str>,
}

/// `text`, bound for `path`, as it may be stored under the memory's policy. `before` is what the
/// file holds now, for an edit: a secret already there is left to `memdir lint --secrets`, so an
/// edit never rewrites (or, under `refuse`, blocks on) a line it did not bring.
pub(crate) fn content<'a>(
    mem: &Ctx,
    path: &str,
    text: &'a str,
    before: Option<&str>,
) -> Result<Guarded<'a>, Error> {
    let policy = mem.config().secrets.policy;
    let unchanged = |text: &'a str| Guarded {
        text: Cow::Borrowed(text),
        redacted: Vec::new(),
    };
    if policy == SecretPolicy::Off {
        return Ok(unchanged(text));
    }
    let keep = |secret: &str| before.is_some_and(|b| b.contains(secret));
    let (redacted, found) = memdir_secrets::redact_fully(text, Some(path), &keep);
    let Some(first) = found.first() else {
        return Ok(unchanged(text));
    };
    HITS.fetch_add(found.len() as u64, Ordering::Relaxed);
    if policy == SecretPolicy::Refuse {
        return Err(Error::Invalid(format!(
            "{path}: line {} of the new content holds a credential ({}): nothing was written; store where the secret is kept, not the secret ([secrets] policy = \"refuse\")",
            first.line, first.rule
        )));
    }
    Ok(Guarded {
        text: Cow::Owned(redacted),
        redacted: found.iter().map(|f| f.rule).collect(),
    })
}

/// Who is writing a path through a change, for [`path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writer {
    /// A feature writing a file's content.
    Content,
    /// A feature moving or deleting files, or an undo, a restore or a forget putting recorded
    /// bytes back: gate files are refused; generated indexes go and come back with the notes
    /// they list.
    Files,
    /// The index code writing `MEMORY.md` or a folder's index.
    Index,
    /// The gate appending to its ledger.
    Gate,
    /// A forget (the user's only): it takes content out of whatever file holds it, as it does
    /// out of history.
    Forget,
}

/// Refuses a write to `p` that `writer` may not make (see the module docs). `current` reads
/// what `p` holds now, asked only for a folder's index.
pub(crate) fn path(
    cx: &Ctx,
    p: &MemPath,
    writer: Writer,
    current: impl FnOnce() -> Option<String>,
) -> Result<(), Error> {
    match gate_file(p) {
        _ if writer == Writer::Forget => return Ok(()),
        Some(GateFile::Ledger) if writer != Writer::Gate => {
            return Err(Error::Invalid(format!(
                "{GATES_DIR}/ holds the gates' append-only ledger: only `memdir gate` writes it; nothing there can be written, moved or deleted"
            )));
        }
        Some(GateFile::Policy) if !cx.has_person_powers() || cx.actor().source != Source::User => {
            return Err(Error::Invalid(format!(
                "{POLICY_FILE} is the action gates' policy: only the user may change it (with an editor, or memdir from a terminal); ask the user"
            )));
        }
        _ => {}
    }
    if writer != Writer::Content {
        return Ok(());
    }
    let layout = cx.layout();
    if !layout.index_generated() {
        return Ok(());
    }
    let (index_file, s) = (layout.index_file, p.as_str());
    if s == index_file {
        return Err(Error::Invalid(format!(
            "{index_file} is generated from the notes' frontmatter: change a note, then run `memdir index`"
        )));
    }
    if s.ends_with(&format!("/{index_file}"))
        && current().is_some_and(|t| memdir_core::layout::is_generated_folder_index(s, &t))
    {
        return Err(Error::Invalid(format!(
            "{s} is a folder's index, generated from its notes' frontmatter: change a note, then run `memdir index`"
        )));
    }
    Ok(())
}

/// A change's reason with any secret in it redacted (a reason is recorded in history and the
/// journal like content; it is never refused, only cleaned, unless the policy is `off`).
pub(crate) fn reason(mem: &Ctx, reason: &str) -> String {
    if mem.config().secrets.policy == SecretPolicy::Off {
        return reason.to_string();
    }
    let (redacted, found) = memdir_secrets::redact_fully(reason, None, &|_| false);
    HITS.fetch_add(found.len() as u64, Ordering::Relaxed);
    redacted
}

/// What a change records about its redactions: `redacted 2 secrets (aws-access-token, jwt)`.
pub(crate) fn note(kinds: &[&str]) -> Option<String> {
    if kinds.is_empty() {
        return None;
    }
    let mut distinct: Vec<&str> = kinds.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let n = kinds.len();
    let noun = if n == 1 { "secret" } else { "secrets" };
    Some(format!("redacted {n} {noun} ({})", distinct.join(", ")))
}

/// One secret already stored, as `memdir lint --secrets` reports it: never its value.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoredSecret {
    /// The file.
    pub path: String,
    /// The line, from 1.
    pub line: usize,
    /// The kind (the gitleaks rule id).
    pub kind: String,
}

/// The secrets in one stored file's text.
pub fn stored_secrets(path: &str, text: &str) -> Vec<StoredSecret> {
    memdir_secrets::scan(text, Some(path))
        .into_iter()
        .map(|f| StoredSecret {
            path: path.to_string(),
            line: f.line,
            kind: f.rule.to_string(),
        })
        .collect()
}

/// The secrets already stored in the memory's files (`memdir lint --secrets`), by file then
/// line: what was written before the guard, by hand, or under `policy = "off"`. Binary files
/// are skipped.
pub(crate) fn secrets_on_disk(mem: &Ctx) -> Result<Vec<StoredSecret>, Error> {
    let mut out = Vec::new();
    for e in mem.store().walk(&memdir_core::path::MemPath::root())? {
        if e.kind != crate::store::EntryKind::File {
            continue;
        }
        let Ok(text) = String::from_utf8(mem.store().read(&e.path)?) else {
            continue;
        };
        out.extend(stored_secrets(e.path.as_str(), &text));
    }
    Ok(out)
}
