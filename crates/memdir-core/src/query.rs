//! The query language of ranked search: what people type into a search box.
//!
//! - plain words are ranked by BM25 (any of them may match);
//! - `"a quoted phrase"` must appear as those words in that order (after stemming and stop words,
//!   so `"payment retries"` finds "payment retry");
//! - `-word` leaves out every line that has the word;
//! - `type:project`, `tag:billing` and `name:payment-retry-policy` keep only notes whose
//!   frontmatter says so (a value with spaces in quotes: `name:"a b"`); several filters must all
//!   hold. Any other `word:word` (a time such as `13:56`) is plain text.
//!
//! ```
//! use memdir_core::query::{Filter, Query};
//! let q = Query::parse(r#"retry "captured payment" -refund type:project tag:billing"#);
//! assert_eq!(q.text, "retry");
//! assert_eq!(q.phrases, ["captured payment"]);
//! assert_eq!(q.excluded, ["refund"]);
//! assert_eq!(q.filters, [Filter::Type("project".into()), Filter::Tag("billing".into())]);
//! ```

use crate::note::Meta;

/// A frontmatter condition a note must meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// `type:VALUE`: the note's `type`, ignoring case.
    Type(String),
    /// `tag:VALUE`: one of the note's `tags`, ignoring case.
    Tag(String),
    /// `name:VALUE`: the note's `name`, or its file name without `.md`, ignoring case.
    Name(String),
}

impl Filter {
    /// True when the note at `path` with this frontmatter meets the condition.
    pub fn keeps(&self, path: &str, meta: &Meta) -> bool {
        match self {
            Filter::Type(t) => meta
                .kind
                .as_deref()
                .is_some_and(|k| k.eq_ignore_ascii_case(t)),
            Filter::Tag(t) => meta.tags.iter().any(|x| x.eq_ignore_ascii_case(t)),
            Filter::Name(n) => {
                let n = n
                    .strip_prefix("[[")
                    .and_then(|s| s.strip_suffix("]]"))
                    .unwrap_or(n);
                let n = n.strip_suffix(".md").unwrap_or(n);
                let stem = path.rsplit('/').next().unwrap_or(path);
                let stem = stem.strip_suffix(".md").unwrap_or(stem);
                meta.name
                    .as_deref()
                    .is_some_and(|m| m.eq_ignore_ascii_case(n))
                    || stem.eq_ignore_ascii_case(n)
                    || path
                        .strip_suffix(".md")
                        .is_some_and(|p| p.eq_ignore_ascii_case(n))
            }
        }
    }
}

/// A parsed ranked query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// The free words, joined by spaces (ranked by BM25).
    pub text: String,
    /// Quoted phrases, each as typed (without the quotes).
    pub phrases: Vec<String>,
    /// Words after `-`, each as typed.
    pub excluded: Vec<String>,
    /// Frontmatter conditions.
    pub filters: Vec<Filter>,
}

impl Query {
    /// Parses a query; never fails (an unclosed quote runs to the end).
    pub fn parse(input: &str) -> Query {
        let mut q = Query::default();
        let mut words: Vec<&str> = Vec::new();
        let mut rest = input.trim_start();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('"') {
                let (phrase, tail) = until_quote(after);
                if !phrase.trim().is_empty() {
                    q.phrases.push(phrase.trim().to_string());
                }
                rest = tail.trim_start();
                continue;
            }
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let token = &rest[..end];
            if let Some(word) = token.strip_prefix('-')
                && !word.is_empty()
                && !word.starts_with('-')
            {
                q.excluded.push(word.to_string());
                rest = rest[end..].trim_start();
                continue;
            }
            if let Some((field, value)) = token.split_once(':') {
                let make: Option<fn(String) -> Filter> = match field.to_ascii_lowercase().as_str() {
                    "type" => Some(Filter::Type),
                    "tag" | "tags" => Some(Filter::Tag),
                    "name" => Some(Filter::Name),
                    _ => None,
                };
                if let Some(make) = make {
                    let start = field.len() + 1;
                    let (value, tail) = match rest[start..].strip_prefix('"') {
                        Some(after) => until_quote(after),
                        None => (value, &rest[end..]),
                    };
                    if !value.trim().is_empty() {
                        q.filters.push(make(value.trim().to_string()));
                    }
                    rest = tail.trim_start();
                    continue;
                }
            }
            words.push(token);
            rest = rest[end..].trim_start();
        }
        q.text = words.join(" ");
        q
    }

    /// True when the query has something besides plain words.
    pub fn has_operators(&self) -> bool {
        !self.phrases.is_empty() || !self.excluded.is_empty() || !self.filters.is_empty()
    }
}

/// The text up to the next `"` and what follows it (all of it when the quote never closes).
fn until_quote(s: &str) -> (&str, &str) {
    match s.find('"') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    }
}

/// True when `needle` (terms) appears as a contiguous run in `hay` (terms).
pub fn contains_run(hay: &[String], needle: &[String]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, text: &str, phrases: &[&str], excluded: &[&str], filters: &[Filter]) {
        let q = Query::parse(input);
        assert_eq!(q.text, text, "{input:?}");
        assert_eq!(q.phrases, phrases, "{input:?}");
        assert_eq!(q.excluded, excluded, "{input:?}");
        assert_eq!(q.filters, filters, "{input:?}");
    }

    #[test]
    fn parses() {
        check("why postgres", "why postgres", &[], &[], &[]);
        check(
            r#""retry queue" worker"#,
            "worker",
            &["retry queue"],
            &[],
            &[],
        );
        check(r#"a "unclosed phrase"#, "a", &["unclosed phrase"], &[], &[]);
        check("deploy -staging -", "deploy -", &[], &["staging"], &[]);
        check("x --flag", "x --flag", &[], &[], &[]);
        check(
            r#"Type:Project tag:billing name:"payment retry" at 13:56"#,
            "at 13:56",
            &[],
            &[],
            &[
                Filter::Type("Project".into()),
                Filter::Tag("billing".into()),
                Filter::Name("payment retry".into()),
            ],
        );
        check("type: alone", "alone", &[], &[], &[]);
        check(r#""""#, "", &[], &[], &[]);
    }

    #[test]
    fn filters_read_the_frontmatter() {
        let meta = Meta {
            name: Some("payment-retry-policy".into()),
            kind: Some("project".into()),
            tags: vec!["billing".into(), "Payments".into()],
            ..Meta::default()
        };
        let path = "notes/retry.md";
        assert!(Filter::Type("PROJECT".into()).keeps(path, &meta));
        assert!(!Filter::Type("user".into()).keeps(path, &meta));
        assert!(Filter::Tag("payments".into()).keeps(path, &meta));
        assert!(!Filter::Tag("pay".into()).keeps(path, &meta));
        assert!(Filter::Name("[[payment-retry-policy]]".into()).keeps(path, &meta));
        assert!(Filter::Name("retry".into()).keeps(path, &meta));
        assert!(Filter::Name("notes/retry".into()).keeps(path, &meta));
        assert!(!Filter::Name("payment".into()).keeps(path, &meta));
    }

    #[test]
    fn runs() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(contains_run(&s(&["a", "b", "c"]), &s(&["b", "c"])));
        assert!(!contains_run(&s(&["a", "b", "c"]), &s(&["c", "b"])));
        assert!(!contains_run(&s(&["a"]), &s(&["a", "b"])));
    }
}
