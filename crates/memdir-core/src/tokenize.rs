//! Words for keyword search: lowercase, stop words dropped, English (Porter 2) stems, and the
//! parts of a memory line that say nothing about its topic (list marker, time, `[id]`,
//! `Speaker:` prefix) split off, so they cannot crowd out the words that do.
//!
//! ```
//! use memdir_core::tokenize::{Tokenizer, split_line};
//! let t = Tokenizer::new();
//! assert_eq!(t.terms("Caroline's painting classes"), ["carolin", "paint", "class"]);
//! let f = split_line("- 13:56 [D1:3] Caroline: I went to a support group");
//! assert_eq!((f.speaker, f.body), ("Caroline", "I went to a support group"));
//! ```

use rust_stemmers::{Algorithm, Stemmer};

/// Changes whenever the terms made from a text change, so stored indexes know to rebuild.
pub const VERSION: u32 = 1;

/// Words too common to tell lines apart, including question words and contraction parts.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "m",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "o",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shall",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "won",
    "would",
    "wouldn",
    "y",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// True for a lowercase word that search ignores.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Turns text into search terms.
pub struct Tokenizer {
    stemmer: Stemmer,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer::new()
    }
}

/// The words of a text, lowercased: the runs of letters and digits, as the terms are cut
/// before stop words and stemming.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Tokenizer {
    /// An English tokenizer.
    pub fn new() -> Tokenizer {
        Tokenizer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }

    /// The terms of `text`, in order, stop words left out.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.push_terms(text, &mut out);
        out
    }

    /// Appends the terms of `text` to `out`.
    pub fn push_terms(&self, text: &str, out: &mut Vec<String>) {
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            let lower = word.to_lowercase();
            if is_stop_word(&lower) {
                continue;
            }
            if lower.chars().any(|c| c.is_ascii_digit()) {
                out.push(lower);
            } else {
                out.push(self.stemmer.stem(&lower).into_owned());
            }
        }
    }

    /// The distinct terms of a query; if every word is a stop word, those words instead, so a
    /// query such as "to be or not to be" still finds something.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        let mut terms = self.terms(query);
        if terms.is_empty() {
            terms = words(query).collect();
        }
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        terms
    }
}

/// A memory line split into the part about its topic and the parts that are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineFields<'a> {
    /// Who said it (`Caroline` in `Caroline: ...`), or empty.
    pub speaker: &'a str,
    /// The rest of the line, without list marker, time and `[id]`.
    pub body: &'a str,
}

/// Splits a line such as `- 13:56 [D1:3] Caroline: text` into speaker and body. Lines without
/// those parts come back whole as the body.
pub fn split_line(line: &str) -> LineFields<'_> {
    let mut s = line.trim();
    if let Some(rest) = s.strip_prefix("- ").or_else(|| s.strip_prefix("* ")) {
        s = rest.trim_start();
    }
    // A clock time `HH:MM`.
    let b = s.as_bytes();
    if b.len() >= 6
        && b[0].is_ascii_digit()
        && b[1].is_ascii_digit()
        && b[2] == b':'
        && b[3].is_ascii_digit()
        && b[4].is_ascii_digit()
        && b[5] == b' '
    {
        s = s[6..].trim_start();
    }
    // A short bracketed id without spaces, `[D1:3]`.
    if s.starts_with('[')
        && let Some(end) = s.find(']')
        && end <= 24
        && !s[..end].contains(' ')
    {
        s = s[end + 1..].trim_start();
    }
    // A speaker: one to three capitalised words, then `: `.
    if let Some(colon) = s.find(": ")
        && colon <= 40
    {
        let name = &s[..colon];
        let words: Vec<&str> = name.split(' ').collect();
        let named = words.len() <= 3
            && words.iter().all(|w| {
                w.chars().next().is_some_and(char::is_uppercase)
                    && w.chars()
                        .all(|c| c.is_alphanumeric() || c == '.' || c == '\'')
            });
        if named {
            return LineFields {
                speaker: name,
                body: s[colon + 2..].trim_start(),
            };
        }
    }
    LineFields {
        speaker: "",
        body: s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn terms() {
        let t = Tokenizer::new();
        assert_eq!(
            t.terms("The C++ rewrite, in 2026!"),
            ["c", "rewrit", "2026"]
        );
        assert_eq!(t.terms("Running runs"), ["run", "run"]);
        assert_eq!(t.terms("didn't"), Vec::<String>::new());
        assert_eq!(
            t.query_terms("to be or not to be"),
            ["to", "be", "or", "not"]
        );
        assert_eq!(t.query_terms("run running"), ["run"]);
    }

    #[test]
    fn lines() {
        let f = split_line("- 09:15 decided to use PostgreSQL");
        assert_eq!((f.speaker, f.body), ("", "decided to use PostgreSQL"));
        let f = split_line("- 13:56 [D1:3] Mary Ann: hi: there");
        assert_eq!((f.speaker, f.body), ("Mary Ann", "hi: there"));
        let f = split_line("note: lowercase is not a speaker");
        assert_eq!(f.speaker, "");
        let f = split_line("[link text](x.md) and more");
        assert_eq!(f.body, "[link text](x.md) and more");
    }
}
