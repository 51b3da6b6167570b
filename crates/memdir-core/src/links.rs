//! `[[wiki links]]` between notes: finding them in text and resolving them to files.
//!
//! A link is `[[target]]` or `[[target|alias]]`; `[[target#heading]]` points into a note and
//! resolves like `[[target]]`. Links inside fenced code blocks and inline code are not links.
//! Resolution follows Obsidian: a target matches a note's frontmatter `name` first, then a file
//! stem (`refund-flow` for `notes/refund-flow.md`), then a path (`people/priya` matches
//! `notes/people/priya.md`). Matching ignores case and a trailing `.md`.

use serde::Serialize;
use std::collections::HashMap;

/// One link found in a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    /// What the link points at, as written (without alias and heading).
    pub target: String,
    /// The text shown instead of the target, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// The 1-based line it is on.
    pub line: usize,
    /// The link exactly as written, e.g. `[[refund-flow|refunds]]`.
    pub raw: String,
}

/// Finds every `[[link]]` in a text, in order, skipping code.
pub fn extract(text: &str) -> Vec<Link> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if trimmed.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        extract_line(line, i + 1, &mut out);
    }
    out
}

/// Linear in the line's length: each search starts where the last one ended, and a failed
/// `[[` skips every opening that would enclose the same bracket (so `[[[[...` is not quadratic).
fn extract_line(line: &str, line_no: usize, out: &mut Vec<Link>) {
    let mut at = 0;
    // The next backtick at or after `at` (`None`: there is none left), found once per step forward.
    let mut tick: Option<Option<usize>> = None;
    loop {
        let Some(open) = line[at..].find("[[").map(|o| at + o) else {
            return;
        };
        let t = match tick {
            Some(Some(t)) if t >= at => Some(t),
            Some(None) => None,
            _ => {
                let t = line[at..].find('`').map(|t| at + t);
                tick = Some(t);
                t
            }
        };
        if let Some(t) = t
            && t < open
        {
            // Skip the inline code span; an unclosed backtick is just a character.
            match line[t + 1..].find('`') {
                Some(end) => at = t + 1 + end + 1,
                None => at = t + 1,
            }
            tick = None;
            continue;
        }
        let inner_start = open + 2;
        let Some(len) = line[inner_start..].find("]]") else {
            return;
        };
        let inner = &line[inner_start..inner_start + len];
        if let Some(link) = parse_inner(inner, line_no) {
            out.push(link);
            at = inner_start + len + 2;
            continue;
        }
        // Every `[[` before the last bracket inside this one ends at the same `]]` and holds
        // that bracket too, so none of them is a link: go on from that bracket.
        at = match inner.rfind(['[', ']']) {
            Some(k) => (inner_start + k).saturating_sub(1).max(open + 1),
            None => open + 1,
        };
    }
}

fn parse_inner(inner: &str, line: usize) -> Option<Link> {
    if inner.contains('[') || inner.contains(']') {
        return None;
    }
    let (target, alias) = match inner.split_once('|') {
        Some((t, a)) => (t, Some(a.trim().to_string()).filter(|a| !a.is_empty())),
        None => (inner, None),
    };
    let target = target.split('#').next().unwrap_or("").trim();
    if target.is_empty() {
        return None;
    }
    Some(Link {
        target: target.to_string(),
        alias,
        line,
        raw: format!("[[{inner}]]"),
    })
}

/// The form targets are compared in: lowercase, trimmed, without a trailing `.md`.
pub fn normalize(target: &str) -> String {
    let t = target.trim().to_lowercase();
    match t.strip_suffix(".md") {
        Some(s) => s.to_string(),
        None => t,
    }
}

/// Looks link targets up among a set of files.
#[derive(Debug, Default)]
pub struct Resolver {
    paths: Vec<String>,
    by_name: HashMap<String, Vec<usize>>,
    by_stem: HashMap<String, Vec<usize>>,
    by_path: HashMap<String, usize>,
}

impl Resolver {
    /// Builds a resolver over `(path, frontmatter name)` pairs; earlier files win ties.
    pub fn new<'a>(files: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> Resolver {
        let mut r = Resolver::default();
        for (i, (path, name)) in files.into_iter().enumerate() {
            r.paths.push(path.to_string());
            if let Some(n) = name {
                r.by_name.entry(normalize(n)).or_default().push(i);
            }
            let no_ext = normalize(path);
            let stem = no_ext.rsplit('/').next().unwrap_or(&no_ext).to_string();
            r.by_stem.entry(stem).or_default().push(i);
            r.by_path.entry(no_ext).or_insert(i);
        }
        r
    }

    /// The path a target resolves to: by name, then stem, then path (exact, or a path that ends
    /// with `/<target>`).
    pub fn resolve(&self, target: &str) -> Option<&str> {
        let t = normalize(target);
        let hit = self
            .by_name
            .get(&t)
            .and_then(|v| v.first().copied())
            .or_else(|| self.by_stem.get(&t).and_then(|v| v.first().copied()))
            .or_else(|| self.by_path.get(&t).copied())
            .or_else(|| {
                if !t.contains('/') {
                    return None;
                }
                let suffix = format!("/{t}");
                self.paths
                    .iter()
                    .position(|p| normalize(p).ends_with(&suffix))
            })?;
        self.paths.get(hit).map(String::as_str)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn targets(text: &str) -> Vec<(String, Option<String>, usize)> {
        extract(text)
            .into_iter()
            .map(|l| (l.target, l.alias, l.line))
            .collect()
    }

    #[test]
    fn nested_brackets_find_the_inner_link_in_linear_time() {
        assert_eq!(
            targets("[[[[x]] and [[a]b]] then [[c]]"),
            [("x".to_string(), None, 1), ("c".to_string(), None, 1)]
        );
        // 200,000 opening brackets and one close: quadratic scanning would take minutes.
        let line = format!("{}x]]", "[".repeat(200_000));
        let t = std::time::Instant::now();
        assert_eq!(targets(&line).len(), 1);
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn finds_links_and_aliases() {
        let t = |s: &str| s.to_string();
        assert_eq!(
            targets("see [[a]] and [[b|the b]]\n\n[[c#Heading|x]] ![[d]]"),
            vec![
                (t("a"), None, 1),
                (t("b"), Some(t("the b")), 1),
                (t("c"), Some(t("x")), 3),
                (t("d"), None, 3)
            ]
        );
        assert_eq!(targets("`[[code]]` [[real]]"), vec![(t("real"), None, 1)]);
        assert_eq!(
            targets("```\n[[in fence]]\n```\n[[after]]"),
            vec![(t("after"), None, 4)]
        );
        assert_eq!(
            targets("[[]] [[ ]] [[a [[b]] [[unclosed"),
            vec![(t("b"), None, 1)]
        );
        assert_eq!(targets("a lone ` then [[x]]"), vec![(t("x"), None, 1)]);
        let l = &extract("x [[people/priya|Priya]]")[0];
        assert_eq!(l.raw, "[[people/priya|Priya]]");
    }

    #[test]
    fn resolves_name_then_stem_then_path() {
        let r = Resolver::new([
            ("notes/refund-flow.md", Some("refunds")),
            ("notes/people/priya.md", None),
            ("notes/other.md", Some("refund-flow")),
            ("core.md", None),
        ]);
        assert_eq!(r.resolve("refunds"), Some("notes/refund-flow.md"));
        // A name beats a stem.
        assert_eq!(r.resolve("refund-flow"), Some("notes/other.md"));
        assert_eq!(r.resolve("Priya"), Some("notes/people/priya.md"));
        assert_eq!(r.resolve("people/priya"), Some("notes/people/priya.md"));
        assert_eq!(
            r.resolve("notes/people/priya.md"),
            Some("notes/people/priya.md")
        );
        assert_eq!(r.resolve("core"), Some("core.md"));
        assert_eq!(r.resolve("missing"), None);
        assert_eq!(r.resolve("ople/priya"), None);
    }
}
