//! Trust labels in the files: content from an external source is marked where it lands, so
//! every reader can fence it, and only the user ever removes a mark.
//!
//! A note gets `source: external` in its frontmatter, a scratch note starts with
//! [`EXTERNAL_SCRATCH_MARK`], a log entry carries [`memdir_core::log::EXTERNAL_MARK`]. Files that
//! load on every turn unfenced (`core.md`, `state.md`, `MEMORY.md`), logs (append only, entry by
//! entry) and `proposals/` (which the user accepts into core) never take external content.

use crate::ctx::Ctx;
use crate::error::Error;
use crate::proposals::PROPOSALS_DIR;
use crate::provenance::Source;
use memdir_core::host::FolderLayout;
use memdir_core::log::EXTERNAL_SCRATCH_MARK;
use memdir_core::note::{Note, mark_external};
use memdir_core::path::MemPath;
use std::borrow::Cow;

/// Where a path sits, as far as trust is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Loaded on every turn without a fence, or turned into core: never external.
    Closed,
    /// A scratch note: marked by its first line.
    Scratch,
    /// A note: marked in its frontmatter.
    Note,
    /// Anything else (the archive, offloads, other files): never loaded into the context.
    Other,
}

fn place(layout: &FolderLayout, p: &MemPath) -> Place {
    let s = p.as_str();
    let top = s.split('/').next().unwrap_or("");
    if layout.is_trusted_only(s) || top == PROPOSALS_DIR {
        Place::Closed
    } else if top == layout.scratch {
        Place::Scratch
    } else if layout.is_note_path(s) {
        Place::Note
    } else {
        Place::Other
    }
}

/// The body of a scratch note from an external source (after its mark line), or `None` when
/// the note is not marked. A note moved into `scratch/` keeps its `source: external`, which
/// counts too.
pub(crate) fn external_scratch_body(text: &str) -> Option<&str> {
    if let Some(rest) = text.strip_prefix(EXTERNAL_SCRATCH_MARK) {
        return Some(rest.trim_start_matches(['\r', '\n']));
    }
    Note::parse(text).is_external().then_some(text)
}

fn is_marked(place: Place, text: &str) -> bool {
    match place {
        Place::Scratch => external_scratch_body(text).is_some(),
        Place::Note | Place::Other => Note::parse(text).is_external(),
        Place::Closed => false,
    }
}

fn refuse(p: &MemPath) -> Error {
    Error::Invalid(format!(
        "{p} never takes external content (it loads on every turn, or is a log or a proposal): \
         save it as a note instead, e.g. `memdir --source external note new NAME -d DESCRIPTION TEXT` \
         (it is labelled source: external and shown fenced)"
    ))
}

/// True when a write to `p` needs the file's current text for [`label`].
pub(crate) fn needs_current(mem: &Ctx, p: &MemPath) -> bool {
    mem.actor().source == Source::Agent
        && matches!(place(&mem.layout(), p), Place::Scratch | Place::Note)
}

/// The text to write at `p` instead of `new`: marked as external when the writer's source is
/// external, or when an agent changes a file that was marked (`current`); refused where
/// external content may never go. The user's writes are taken as they are.
pub(crate) fn label<'a>(
    mem: &Ctx,
    p: &MemPath,
    current: Option<&str>,
    new: &'a str,
) -> Result<Cow<'a, str>, Error> {
    let source = mem.actor().source;
    let place = place(&mem.layout(), p);
    let external = match source {
        Source::User => false,
        Source::External => true,
        Source::Agent => current.is_some_and(|c| is_marked(place, c)),
    };
    if !external {
        return Ok(Cow::Borrowed(new));
    }
    if place == Place::Closed {
        return Err(refuse(p));
    }
    Ok(mark(&mem.layout(), p, new))
}

/// `text` marked as external for where `p` sits (unchanged when it already is, or when `p` is
/// never loaded).
pub(crate) fn mark<'a>(layout: &FolderLayout, p: &MemPath, text: &'a str) -> Cow<'a, str> {
    match place(layout, p) {
        Place::Scratch if external_scratch_body(text).is_none() => {
            Cow::Owned(format!("{EXTERNAL_SCRATCH_MARK}\n{text}"))
        }
        Place::Note if !Note::parse(text).is_external() => Cow::Owned(mark_external(text)),
        _ => Cow::Borrowed(text),
    }
}

/// Checks a move before it happens: a writer other than the user may not move a folder when
/// its source is external, nor move external content into a place that never takes it.
/// Returns true when the moved file must be [`mark`]ed once it has arrived.
pub(crate) fn check_move(
    mem: &Ctx,
    from: &MemPath,
    to: &MemPath,
    text: Option<&str>,
) -> Result<bool, Error> {
    let source = mem.actor().source;
    if source == Source::User {
        return Ok(false);
    }
    let Some(text) = text else {
        if source == Source::External {
            return Err(Error::Invalid(format!(
                "an external source may move files, not folders: move the files in {from} one by one"
            )));
        }
        return Ok(false);
    };
    let layout = mem.layout();
    let marked = is_marked(place(&layout, from), text);
    let target = place(&layout, to);
    if (source == Source::External || marked) && target == Place::Closed {
        return Err(refuse(to));
    }
    Ok(source == Source::External || marked)
}
