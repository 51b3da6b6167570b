//! Which notes another note evidently replaces: what `memdir consolidate` proposes to mark
//! `superseded_by` (a person accepts or rejects each proposal).
//!
//! A proposal is raised only where the notes say it themselves, so that each one can be
//! explained by quoting one line:
//!
//! - **the `supersedes` key**: a note whose frontmatter says `supersedes: old-note` (a name, a
//!   `"[[link]]"`, or a list of them) replaces each note it names;
//! - **a statement in a note's text**, with the notes as `[[links]]` on one line:
//!   `[[new]] replaces [[old]]` and `[[old]] is superseded by [[new]]` name both;
//!   `This note replaces [[old]]` (or `supersedes`, `obsoletes`) makes the writing note the
//!   successor; `Superseded by [[new]]` (or `replaced by`) makes the writing note the old one;
//!   `[[old]] is outdated` (or `obsolete`, `superseded`, `replaced`) written in a note makes
//!   that note the successor. A negation just before the verb (`is not superseded by`, `never
//!   replaces`) is no statement, nor is a verb that another link in the same sentence, further
//!   than three words away, could be the subject of.
//!
//! A statement in the text also needs the two notes to share a topic (a word of their names,
//! file names or descriptions), which keeps a sentence about something else (`[[redis]] is
//! outdated` in a note about the office) from becoming a proposal. No pair is proposed when
//! either note is already superseded (accepting would then lengthen or break a chain), when the
//! old note's frontmatter is broken (it cannot take the key), or in both directions.
//!
//! ```
//! use memdir_core::links::Resolver;
//! use memdir_core::note::Note;
//! use memdir_core::replaces::replaced_notes;
//! use memdir_core::tokenize::Tokenizer;
//!
//! let old = Note::parse("---\nname: retry-v1\ndescription: payment retry rule\n---\nRetry twice.\n");
//! let new = Note::parse("---\nname: retry-v2\ndescription: payment retry rule, revised\n---\nThis replaces [[retry-v1]]: retry once.\n");
//! let notes = [("notes/retry-v1.md", &old), ("notes/retry-v2.md", &new)];
//! let r = Resolver::new(notes.iter().map(|(p, n)| (*p, n.meta.name.as_deref())));
//! let found = replaced_notes(&notes, &r, &Tokenizer::new());
//! assert_eq!(found[0].old, "notes/retry-v1.md");
//! assert_eq!(found[0].new, "notes/retry-v2.md");
//! assert_eq!(found[0].evidence.cite, "notes/retry-v2.md:5");
//! ```

use crate::consolidate::Evidence;
use crate::links::Resolver;
use crate::note::Note;
use crate::tokenize::Tokenizer;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};

/// A note that another note evidently replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replaced {
    /// The note to mark superseded.
    pub old: String,
    /// The note that replaces it.
    pub new: String,
    /// The line that says so (`file:line` and the line).
    pub evidence: Evidence,
}

/// The frontmatter key by which a note names the notes it replaces.
pub const SUPERSEDES_KEY: &str = "supersedes";

/// Verbs whose subject replaces their object: `[[new]] replaces [[old]]`.
const ACTIVE: [&str; 3] = ["replaces", "supersedes", "obsoletes"];
/// Verbs followed by `by [[new]]`: `[[old]] is superseded by [[new]]`.
const PASSIVE: [&str; 2] = ["superseded", "replaced"];
/// States a link is said to be in, by the note that says it: `[[old]] is outdated`.
const STATES: [&str; 4] = ["superseded", "replaced", "obsolete", "outdated"];
/// Words that, just before the verb, turn a statement around.
const NEGATIONS: [&str; 6] = ["not", "never", "no", "isn't", "wasn't", "hasn't"];
/// Characters that end a sentence (or a clause a subject does not reach across).
const SENTENCE_END: [char; 5] = ['.', ';', ':', '!', '?'];

/// Every note that another evidently replaces, as the module documentation says, in the order
/// of the notes that say so. `notes` are `(path, parsed note)`; `resolver` resolves links
/// among every file (as lint and the index do).
pub fn replaced_notes(
    notes: &[(&str, &Note)],
    resolver: &Resolver,
    tok: &Tokenizer,
) -> Vec<Replaced> {
    let by_path: HashMap<&str, &Note> = notes.iter().map(|(p, n)| (*p, *n)).collect();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut out = Vec::new();
    let mut push = |old: &str, new: &str, evidence: Evidence, topical: bool| {
        let (Some(o), Some(n)) = (by_path.get(old), by_path.get(new)) else {
            return;
        };
        if old == new
            || o.meta.superseded_by.is_some()
            || n.meta.superseded_by.is_some()
            || !o.errors.is_empty()
            || (topical && !same_topic(old, o, new, n, tok))
            || seen.contains(&(new.to_string(), old.to_string()))
        {
            return;
        }
        if seen.insert((old.to_string(), new.to_string())) {
            out.push(Replaced {
                old: old.to_string(),
                new: new.to_string(),
                evidence,
            });
        }
    };
    for (path, note) in notes {
        let line = note
            .frontmatter
            .as_ref()
            .and_then(|f| f.line_of(SUPERSEDES_KEY))
            .unwrap_or(1);
        for named in &note.meta.supersedes {
            if let Some(old) = resolver.resolve(link_target(named)) {
                let evidence = Evidence {
                    cite: format!("{path}:{line}"),
                    text: format!("{SUPERSEDES_KEY}: {named}"),
                };
                push(old, path, evidence, false);
            }
        }
        let lines: Vec<&str> = note.body.lines().collect();
        let mut on_line: Vec<(usize, Vec<String>)> = Vec::new();
        for l in crate::links::extract(&note.body) {
            match on_line.last_mut() {
                Some((n, raws)) if *n == l.line => raws.push(l.raw),
                _ => on_line.push((l.line, vec![l.raw])),
            }
        }
        for (n, raws) in on_line {
            let Some(text) = lines.get(n - 1) else {
                continue;
            };
            for (old, new) in statements(text, &raws, resolver, path) {
                let evidence = Evidence {
                    cite: format!("{path}:{}", note.body_line + n - 1),
                    text: text.trim().to_string(),
                };
                push(&old, &new, evidence, true);
            }
        }
    }
    out
}

/// A link's target as written in a frontmatter value: without `[[ ]]`, alias or heading.
fn link_target(s: &str) -> &str {
    let s = s.trim();
    let s = s
        .strip_prefix("![[")
        .or_else(|| s.strip_prefix("[["))
        .unwrap_or(s);
    let s = s.strip_suffix("]]").unwrap_or(s);
    s.split(['|', '#']).next().unwrap_or(s).trim()
}

/// The words of a note's topic: its name (or file name) and its description.
fn topic(path: &str, note: &Note, tok: &Tokenizer) -> BTreeSet<String> {
    let stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".md");
    let mut text = String::from(stem);
    for t in [&note.meta.name, &note.meta.description]
        .into_iter()
        .flatten()
    {
        text.push(' ');
        text.push_str(t);
    }
    tok.terms(&text).into_iter().collect()
}

fn same_topic(a: &str, an: &Note, b: &str, bn: &Note, tok: &Tokenizer) -> bool {
    !topic(a, an, tok).is_disjoint(&topic(b, bn, tok))
}

/// The words of a stretch of text, lowercase.
fn words(s: &str) -> Vec<&str> {
    s.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect()
}

/// What a stretch between a subject and its verb says about the subject: `Some(true)` when the
/// link before it is the subject (three words or fewer, in one clause), `Some(false)` when the
/// writing note is (no link before the verb in its sentence, and a short lead such as `This
/// note`), `None` when it is unclear.
fn subject_is_link(head: &str, link_before: bool) -> Option<bool> {
    let clause = head.rsplit(SENTENCE_END).next().unwrap_or(head);
    let in_sentence = link_before && !head.contains(SENTENCE_END);
    if words(clause).last().is_some_and(|w| NEGATIONS.contains(w)) {
        return None;
    }
    if in_sentence {
        return (words(head).len() <= 3 && !head.contains(',')).then_some(true);
    }
    (words(clause).len() <= 4).then_some(false)
}

/// The ending of `s` after the last whole word `w` in it, if `w` is there.
fn after_word<'s>(s: &'s str, w: &str) -> Option<(usize, &'s str)> {
    s.match_indices(w)
        .filter(|(i, _)| {
            let before = s[..*i].chars().next_back();
            let after = s[i + w.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
        .last()
        .map(|(i, _)| (i, &s[i + w.len()..]))
}

/// The `(old, new)` pairs one line states, its links given as written in order.
fn statements(text: &str, raws: &[String], r: &Resolver, this: &str) -> Vec<(String, String)> {
    // Lowercase ASCII keeps byte offsets, so spans found in it cut the line too.
    let lower = text.to_ascii_lowercase();
    let mut spans: Vec<(usize, usize, Option<&str>)> = Vec::new();
    let mut at = 0;
    for raw in raws {
        let Some(i) = text[at..].find(raw.as_str()).map(|i| at + i) else {
            continue;
        };
        let target = crate::links::extract(raw)
            .first()
            .and_then(|l| r.resolve(&l.target));
        spans.push((i, i + raw.len(), target));
        at = i + raw.len();
    }
    let mut out = Vec::new();
    for (k, &(start, end, target)) in spans.iter().enumerate() {
        let Some(target) = target else { continue };
        let prev = k.checked_sub(1).map(|j| spans[j]);
        let before = &lower[prev.map_or(0, |p| p.1)..start];
        // The note a verb's subject is, when it is clear and resolves.
        let subject = |head: &str| -> Option<String> {
            match subject_is_link(head, prev.is_some())? {
                true => prev.and_then(|p| p.2).map(str::to_string),
                false => Some(this.to_string()),
            }
        };
        // `... superseded by [[new]]`
        for verb in PASSIVE {
            if let Some((i, rest)) = after_word(before, verb)
                && words(rest) == ["by"]
                && let Some(old) = subject(strip_aux(&before[..i]))
            {
                out.push((old, target.to_string()));
            }
        }
        // `... replaces (the old) [[old]]`
        for verb in ACTIVE {
            if let Some((i, rest)) = after_word(before, verb)
                && words(rest).len() <= 3
                && !rest.contains(SENTENCE_END)
                && let Some(new) = subject(&before[..i])
            {
                out.push((target.to_string(), new));
            }
        }
        // `[[old]] is outdated`, not followed by `by`: the writing note replaces it.
        let next = spans.get(k + 1).map_or(lower.len(), |s| s.0);
        let after = words(&lower[end..next]);
        let (aux, state) = match after.as_slice() {
            [a, b, s, ..] if [*a, *b] == ["is", "now"] || [*a, *b] == ["has", "been"] => (3, *s),
            [a, s, ..] if ["is", "was", "are"].contains(a) => (2, *s),
            _ => continue,
        };
        let state = state.trim_end_matches(SENTENCE_END);
        let by_follows =
            after.get(aux).is_some_and(|w| *w == "by") && !after[aux - 1].ends_with(SENTENCE_END);
        if STATES.contains(&state) && !by_follows {
            out.push((target.to_string(), this.to_string()));
        }
    }
    out
}

/// A subject's stretch without the auxiliary before a passive verb (`is`, `was now`, `has
/// been`), so what is left is the subject's own words.
fn strip_aux(head: &str) -> &str {
    let mut h = head.trim_end();
    while let Some(rest) = ["been", "has", "have", "now", "is", "was", "are", "were"]
        .iter()
        .find_map(|aux| h.strip_suffix(aux))
        .filter(|rest| rest.is_empty() || rest.ends_with(char::is_whitespace))
    {
        h = rest.trim_end();
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The proposals for a set of notes, one `old -> new (cite)` line each.
    fn check(files: &[(&str, &str)], expect: &[&str]) {
        let parsed: Vec<(&str, Note)> = files.iter().map(|(p, t)| (*p, Note::parse(t))).collect();
        let notes: Vec<(&str, &Note)> = parsed.iter().map(|(p, n)| (*p, n)).collect();
        let r = Resolver::new(notes.iter().map(|(p, n)| (*p, n.meta.name.as_deref())));
        let got: Vec<String> = replaced_notes(&notes, &r, &Tokenizer::new())
            .into_iter()
            .map(|x| format!("{} -> {} ({})", x.old, x.new, x.evidence.cite))
            .collect();
        assert_eq!(got, expect, "{files:?}");
    }

    fn note(name: &str, description: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    }

    #[test]
    fn statements_that_name_a_successor() {
        let v1 = note("retry-v1", "payment retry rule", "Retry twice.");
        let cases: [(&str, &[&str]); 12] = [
            (
                "This note replaces [[retry-v1]].",
                &["a/v1.md -> a/v2.md (a/v2.md:5)"],
            ),
            (
                "Supersedes the old [[retry-v1]]",
                &["a/v1.md -> a/v2.md (a/v2.md:5)"],
            ),
            (
                "[[retry-v1]] is outdated.",
                &["a/v1.md -> a/v2.md (a/v2.md:5)"],
            ),
            (
                "[[retry-v1]] has been superseded.",
                &["a/v1.md -> a/v2.md (a/v2.md:5)"],
            ),
            ("See [[retry-v1]]. It is replaced by [[retry-v2]]", &[]),
            ("[[retry-v1]] is not superseded by [[retry-v2]]", &[]),
            ("This never replaces [[retry-v1]]", &[]),
            ("We kept [[retry-v1]] because it works.", &[]),
            ("It does not replace [[retry-v1]]", &[]),
            (
                "[[retry-v2]] and its author, as we said, replaces [[retry-v1]]",
                &[],
            ),
            (
                "[[retry-v1]] is replaced by [[retry-v2]]",
                &["a/v1.md -> a/v2.md (a/v2.md:5)"],
            ),
            ("```\nreplaces [[retry-v1]]\n```", &[]),
        ];
        for (body, expect) in cases {
            let v2 = note("retry-v2", "payment retry rule, revised", body);
            check(&[("a/v1.md", &v1), ("a/v2.md", &v2)], expect);
        }
    }

    #[test]
    fn the_old_note_can_name_its_successor_and_a_third_note_can_name_both() {
        let v2 = note("retry-v2", "payment retry rule, revised", "Retry once.");
        let v1 = note(
            "retry-v1",
            "payment retry rule",
            "Superseded by [[retry-v2]].",
        );
        check(
            &[("a/v1.md", &v1), ("a/v2.md", &v2)],
            &["a/v1.md -> a/v2.md (a/v1.md:5)"],
        );
        let plain = note("retry-v1", "payment retry rule", "Retry twice.");
        let log = note(
            "changes",
            "what changed",
            "- [[retry-v2]] replaces [[retry-v1]]",
        );
        check(
            &[("a/v1.md", &plain), ("a/v2.md", &v2), ("a/log.md", &log)],
            &["a/v1.md -> a/v2.md (a/log.md:5)"],
        );
    }

    #[test]
    fn a_statement_needs_a_shared_topic_and_the_key_does_not() {
        let redis = note("redis", "the cache server", "Runs on port 6379.");
        let office = note("office", "where we sit", "[[redis]] is outdated, ask ops.");
        check(&[("n/redis.md", &redis), ("n/office.md", &office)], &[]);
        let by_key = "---\nname: office\ndescription: where we sit\nsupersedes:\n- \"[[redis]]\"\n---\nbody\n";
        check(
            &[("n/redis.md", &redis), ("n/office.md", by_key)],
            &["n/redis.md -> n/office.md (n/office.md:4)"],
        );
        let one = "---\nname: office\nsupersedes: redis\n---\n";
        check(
            &[("n/redis.md", &redis), ("n/office.md", one)],
            &["n/redis.md -> n/office.md (n/office.md:3)"],
        );
    }

    #[test]
    fn nothing_for_superseded_notes_broken_frontmatter_self_or_both_ways() {
        let v2 = note(
            "retry-v2",
            "payment retry rule",
            "This replaces [[retry-v1]].",
        );
        let gone = "---\nname: retry-v1\ndescription: payment retry rule\nsuperseded_by: \"[[retry-v3]]\"\n---\nx\n";
        check(&[("a/v1.md", gone), ("a/v2.md", &v2)], &[]);
        let broken = "---\nname: retry-v1\nexpires: soon\n---\nx\n";
        check(&[("a/v1.md", broken), ("a/v2.md", &v2)], &[]);
        let selfish = note(
            "retry-v2",
            "payment retry rule",
            "This replaces [[retry-v2]].",
        );
        check(&[("a/v2.md", &selfish)], &[]);
        let v1 = note(
            "retry-v1",
            "payment retry rule",
            "This replaces [[retry-v2]].",
        );
        check(
            &[("a/v1.md", &v1), ("a/v2.md", &v2)],
            &["a/v2.md -> a/v1.md (a/v1.md:5)"],
        );
        let missing = note(
            "retry-v2",
            "payment retry rule",
            "This replaces [[retry-v0]].",
        );
        check(&[("a/v2.md", &missing)], &[]);
    }
}
