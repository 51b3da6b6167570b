//! Current truth in ranked results: a note whose frontmatter says another note supersedes it
//! (`superseded_by: [[new]]`) ranks below that note, and is never removed.
//!
//! Every score of a superseded note is scaled down by [`DEMOTION`] (towards minus infinity,
//! whatever its sign: a fused score can be negative), and when its successor has a line among
//! the results too, each is also capped just below the successor's best line, so that line
//! always comes first however much better the old note matched the words. A superseded note
//! still answers a question only it answers, lower down. A chain (`a` superseded by `b`,
//! superseded by `c`) is settled from its end, so `a` ends below `b`'s demoted best, which is
//! below `c`'s. A successor link that leads nowhere (or back round a cycle a hand edit made)
//! only scales.
//!
//! Only the notes among the results are read for their frontmatter; every note's name is read
//! only when one of them is superseded, to resolve its link as the engine does.

use crate::Why;
use crate::walk::FileRef;
use memdir_core::links::Resolver;
use memdir_core::note::{Note, SUPERSEDED_BY_KEY, frontmatter_bytes, is_note_path};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::HashMap;

/// What a superseded note's scores are multiplied by (divided by, when negative).
pub(crate) const DEMOTION: f64 = 0.5;

/// A note's parsed frontmatter, or `None` for a file that is not a note or cannot be read.
pub(crate) fn note_of(f: &FileRef) -> Option<Note> {
    let bytes = note_bytes(f)?;
    Some(Note::parse(&String::from_utf8_lossy(&bytes)))
}

/// A note's bytes, or `None` for a file that is not a note or cannot be read.
fn note_bytes(f: &FileRef) -> Option<std::borrow::Cow<'_, [u8]>> {
    if !is_note_path(&f.rel) {
        return None;
    }
    Some(match &f.held {
        Some(h) => std::borrow::Cow::Borrowed(h.bytes.as_slice()),
        None => std::borrow::Cow::Owned(std::fs::read(&f.abs).ok()?),
    })
}

/// The link a note's `superseded_by` gives, if it has one. Only a note whose bytes name the
/// key is parsed: most results' notes are current, and parsing each one's frontmatter on
/// every ranked search cost more than the rest of the ranking.
fn superseded_by(f: &FileRef) -> Option<String> {
    let bytes = note_bytes(f)?;
    // The key counts only in the frontmatter: the body (most of a note) is not searched.
    memchr::memmem::find(frontmatter_bytes(&bytes), SUPERSEDED_BY_KEY.as_bytes())?;
    Note::parse(&String::from_utf8_lossy(&bytes))
        .meta
        .superseded_by
}

fn scaled(score: f64) -> f64 {
    if score >= 0.0 {
        score * DEMOTION
    } else {
        score / DEMOTION
    }
}

/// Lowers the scores of results in superseded notes as the module docs say. `part` gives a
/// result's file, its score and the parts of its score (the change is recorded in
/// [`Why::superseded`], so the parts still add up). The caller sorts afterwards.
pub(crate) fn demote<T>(
    items: &mut [T],
    all: &[FileRef],
    part: impl Fn(&mut T) -> (&FileRef, &mut f64, Option<&mut Why>),
) {
    // The notes among the results that say they are superseded, with the link they give. The
    // results of one file share its `FileRef`, so each file is looked at once, found by the
    // reference's address rather than by hashing its path for each of up to 1,000 results.
    let mut seen: FxHashSet<*const FileRef> = FxHashSet::default();
    let mut superseded: FxHashMap<String, String> = FxHashMap::default();
    for item in items.iter_mut() {
        let (f, ..) = part(item);
        if seen.insert(std::ptr::from_ref(f))
            && let Some(target) = superseded_by(f)
        {
            superseded.insert(f.rel.clone(), target);
        }
    }
    if superseded.is_empty() {
        return;
    }
    let names: Vec<(&str, Option<String>)> = all
        .iter()
        .filter(|f| is_note_path(&f.rel))
        .map(|f| (f.rel.as_str(), note_of(f).and_then(|n| n.meta.name)))
        .collect();
    let r = Resolver::new(names.iter().map(|(p, n)| (*p, n.as_deref())));
    let successor: HashMap<&str, Option<&str>> = superseded
        .iter()
        .map(|(p, t)| (p.as_str(), r.resolve(t).filter(|s| s != p)))
        .collect();
    // Settled from the end of each chain: a note whose successor is also superseded waits for it.
    let depth = |p: &str| {
        let mut d = 0;
        let mut at = p;
        while let Some(Some(next)) = successor.get(at) {
            if !successor.contains_key(next) || d > successor.len() {
                break;
            }
            d += 1;
            at = next;
        }
        d
    };
    let mut order: Vec<&str> = successor.keys().copied().collect();
    order.sort_by_key(|p| (depth(p), *p));
    for p in order {
        let best = successor[p].and_then(|s| {
            items
                .iter_mut()
                .map(&part)
                .filter(|(f, ..)| f.rel == s)
                .map(|(_, score, _)| *score)
                .reduce(f64::max)
        });
        for item in items.iter_mut() {
            let (f, score, why) = part(item);
            if f.rel != p {
                continue;
            }
            let mut new = scaled(*score);
            if let Some(b) = best {
                new = new.min(b.next_down());
            }
            if let Some(w) = why {
                w.superseded += new - *score;
            }
            *score = new;
        }
    }
}
