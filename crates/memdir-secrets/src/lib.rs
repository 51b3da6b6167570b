//! Credentials in text: gitleaks' published rule set, compiled with Rust's `regex`.
//!
//! memdir runs every piece of content an agent writes through [`scan`] before it is stored, and
//! [`redact`] replaces what it finds with `[redacted:<kind>:<first-4>…]`. This crate does no
//! I/O: it takes text (and the path it is bound for) and returns byte ranges.
//!
//! The rules are gitleaks' `config/gitleaks.toml`, vendored unchanged in `rules/` (MIT, its
//! licence and source commit beside it), read once per process on first use (`build.rs` turns it into JSON, which reads faster). They are applied
//! the way gitleaks applies them:
//! - a rule runs only when one of its keywords occurs in the text (found in one pass with an
//!   `aho-corasick` automaton, ignoring ASCII case), or when it has none; its regex is compiled
//!   the first time it runs, so a write that names no keyword compiles nothing;
//! - the secret is the rule's `secretGroup`, else the first non-empty capture group, else the
//!   whole match;
//! - a rule's `entropy` is a floor: a secret whose Shannon entropy is at or below it is not one;
//! - the global and per-rule allowlists (`regexes` against the secret, the match or the line,
//!   `stopwords`, `condition = "AND"`) let a finding go;
//! - a rule with a `path` applies only to files whose path matches it.
//!
//! Two of gitleaks' escapes are deliberately not honoured, because the writer chooses them: the
//! allowlists' `paths` that skip a whole file (an agent could write its key to
//! `node_modules/x.md`), and a `gitleaks:allow` comment on the line.
//!
//! ```
//! let text = "deploy with API_TOKEN=Zq8vR3kT9wLp2XyB7nQe4Hs6 today";
//! let found = memdir_secrets::scan(text, Some("log/2026-01-01.md"));
//! assert_eq!(found.len(), 1);
//! let redacted = memdir_secrets::redact(text, &found);
//! assert!(redacted.contains("[redacted:generic-api-key:Zq8v…]"));
//! assert!(!redacted.contains("R3kT9wLp"));
//! ```
#![deny(missing_docs)]

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use std::sync::{LazyLock, OnceLock};

/// gitleaks' default configuration, as published (see `rules/README.md`), turned into JSON by
/// `build.rs`.
const GITLEAKS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/gitleaks.json"));

/// The gitleaks commit the vendored rules come from.
pub const RULES_COMMIT: &str = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b";

/// The most a compiled rule may take. gitleaks' patterns are written for Go's ASCII `\w`;
/// Rust's Unicode classes inside bounded repeats (`[\w.-]{0,50}`) need more room than the
/// default allows.
const REGEX_SIZE_LIMIT: usize = 64 << 20;

/// One credential found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule that found it (gitleaks' rule id, e.g. `aws-access-token`): the secret's kind.
    pub rule: &'static str,
    /// Where the secret starts in the text (bytes).
    pub start: usize,
    /// Where it ends (bytes, exclusive).
    pub end: usize,
    /// The line it starts on, from 1.
    pub line: usize,
}

impl Finding {
    /// What replaces the secret: `[redacted:<kind>:<first-4>…]`, the kind and the first four
    /// characters of the secret, enough to tell which key it was and never enough to use it.
    pub fn replacement(&self, text: &str) -> String {
        let secret = text.get(self.start..self.end).unwrap_or_default();
        let head: String = secret.chars().take(4).collect();
        format!("[redacted:{}:{head}…]", self.rule)
    }
}

/// The credentials in `text`, in order, never overlapping, with the rules of [`rules`]. `path`
/// is where the text goes (for the few rules that apply to one kind of file only).
pub fn scan(text: &str, path: Option<&str>) -> Vec<Finding> {
    rules().scan(text, path)
}

/// `text` with every finding replaced by its [`Finding::replacement`]. The findings must come
/// from [`scan`] of this very text (in order, not overlapping).
pub fn redact(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        let (Some(before), true) = (text.get(at..f.start), f.end <= text.len()) else {
            continue;
        };
        out.push_str(before);
        out.push_str(&f.replacement(text));
        at = f.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

/// `text` redacted until a scan finds nothing more that `keep` does not keep, with every
/// finding of every round: replacing one secret can let a rule match across the gap it leaves
/// (a leftmost match that hid a longer one behind it), so one round is not always enough. At
/// most 8 rounds; each replaces what it found with a shorter marker.
pub fn redact_fully(
    text: &str,
    path: Option<&str>,
    keep: &dyn Fn(&str) -> bool,
) -> (String, Vec<Finding>) {
    let mut out = text.to_string();
    let mut all = Vec::new();
    for _ in 0..8 {
        let found: Vec<Finding> = scan(&out, path)
            .into_iter()
            .filter(|f| !keep(out.get(f.start..f.end).unwrap_or_default()))
            .collect();
        if found.is_empty() {
            break;
        }
        out = redact(&out, &found);
        all.extend(found);
    }
    (out, all)
}

/// The rule set, read from the vendored file on first use.
pub fn rules() -> &'static RuleSet {
    static RULES: LazyLock<RuleSet> = LazyLock::new(|| RuleSet::parse(GITLEAKS_JSON));
    &RULES
}

/// gitleaks' rules, ready to scan: the keyword automaton is built, each rule's regex is compiled
/// the first time its keywords occur.
pub struct RuleSet {
    rules: Vec<Rule>,
    /// All rules' keywords, lowercase; `keyword_rules[i]` are the rules keyword `i` wakes.
    keywords: Option<AhoCorasick>,
    keyword_rules: Vec<Vec<usize>>,
    /// Rules that run on every text (they name no keyword).
    always: Vec<usize>,
    /// The global allowlists, compiled when the first candidate finding needs them.
    global_specs: Vec<AllowSpec>,
    global: OnceLock<Vec<Allowlist>>,
    /// Why the vendored file could not be read (then there are no rules).
    error: Option<String>,
}

struct Rule {
    id: &'static str,
    regex: String,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    path: Option<String>,
    allowlists: Vec<AllowSpec>,
    compiled: OnceLock<Result<Compiled, String>>,
}

struct Compiled {
    regex: Regex,
    path: Option<Regex>,
    allowlists: Vec<Allowlist>,
}

/// Where an allowlist's regexes look.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allowlist {
    all: bool,
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    paths: Vec<Regex>,
}

#[derive(Deserialize)]
struct FileSpec {
    #[serde(default)]
    allowlist: Option<AllowSpec>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    secret_group: Option<usize>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    allowlists: Vec<AllowSpec>,
}

#[derive(Deserialize, Clone, Default)]
#[serde(rename_all = "camelCase")]
struct AllowSpec {
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

fn compile(src: &str) -> Result<Regex, String> {
    RegexBuilder::new(&from_go(src))
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| e.to_string())
}

/// A Go (RE2) pattern in the syntax and meaning of Rust's `regex`:
/// - Go reads a `{` that does not start a repetition (`{n}`, `{n,}`, `{n,m}`) as a literal
///   brace, where Rust refuses it; such a brace is escaped;
/// - Go's `\w`, `\d`, `\s` and `\b` are ASCII, Rust's Unicode: they are written as their ASCII
///   classes, which is what the rules mean and compiles in a fraction of the time (a process
///   that writes compiles the rules its text wakes, on the write's clock).
fn from_go(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 8);
    let mut chars = src.char_indices().peekable();
    let mut class = false;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                match chars.next().map(|(_, n)| n) {
                    Some(n) => match ascii_class(n, class) {
                        Some(ascii) => out.push_str(ascii),
                        None => {
                            out.push(c);
                            out.push(n);
                        }
                    },
                    None => out.push(c),
                }
                continue;
            }
            '[' if !class => {
                class = true;
                out.push(c);
                // A `]` first in a class (after an optional `^`) is a literal.
                if let Some(&(_, '^')) = chars.peek() {
                    out.push('^');
                    chars.next();
                }
                if let Some(&(_, ']')) = chars.peek() {
                    out.push_str("\\]");
                    chars.next();
                }
                continue;
            }
            ']' if class => class = false,
            '{' if !class && !is_repetition(src.get(i + 1..).unwrap_or_default()) => {
                out.push_str("\\{");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// The ASCII form of Go's `\<n>` (Perl classes and the word boundary), inside a bracketed
/// class or outside one; `None` for every other escape.
fn ascii_class(n: char, class: bool) -> Option<&'static str> {
    Some(match (n, class) {
        ('w', false) => "[0-9A-Za-z_]",
        ('w', true) => "0-9A-Za-z_",
        ('d', false) => "[0-9]",
        ('d', true) => "0-9",
        ('s', false) => "[\\t\\n\\f\\r ]",
        ('s', true) => "\\t\\n\\f\\r ",
        ('W', false) => "[^0-9A-Za-z_]",
        ('W', true) => "[^0-9A-Za-z_]",
        ('D', false) => "[^0-9]",
        ('D', true) => "[^0-9]",
        ('S', false) => "[^\\t\\n\\f\\r ]",
        ('S', true) => "[^\\t\\n\\f\\r ]",
        ('b', false) => "(?-u:\\b)",
        ('B', false) => "(?-u:\\B)",
        _ => return None,
    })
}

/// True when `rest` (what follows a `{`) is `n}`, `n,}` or `n,m}`.
fn is_repetition(rest: &str) -> bool {
    let Some(end) = rest.find('}') else {
        return false;
    };
    let body = rest.get(..end).unwrap_or_default();
    let (min, max) = body.split_once(',').unwrap_or((body, "0"));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    !min.is_empty() && digits(min) && digits(max)
}

impl AllowSpec {
    fn compile(&self) -> Result<Allowlist, String> {
        let all = |v: &[String]| v.iter().map(|r| compile(r)).collect::<Result<Vec<_>, _>>();
        Ok(Allowlist {
            all: self
                .condition
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case("and")),
            target: match self.regex_target.as_deref() {
                Some("match") => Target::Match,
                Some("line") => Target::Line,
                _ => Target::Secret,
            },
            regexes: all(&self.regexes)?,
            stopwords: self.stopwords.iter().map(|w| w.to_lowercase()).collect(),
            paths: all(&self.paths)?,
        })
    }
}

impl Allowlist {
    /// True when this allowlist lets the finding go. A list's `paths` count only as one of the
    /// conditions of an `AND` list (they narrow it); alone they would let the writer choose.
    fn allows(&self, secret: &str, matched: &str, line: &str, path: Option<&str>) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let regex = self.regexes.iter().any(|r| r.is_match(target));
        let lower = secret.to_lowercase();
        let stopword = self.stopwords.iter().any(|w| lower.contains(w.as_str()));
        if !self.all {
            return regex || stopword;
        }
        let mut checks = Vec::new();
        if !self.paths.is_empty() {
            checks.push(path.is_some_and(|p| self.paths.iter().any(|r| r.is_match(p))));
        }
        if !self.regexes.is_empty() {
            checks.push(regex);
        }
        if !self.stopwords.is_empty() {
            checks.push(stopword);
        }
        !checks.is_empty() && checks.iter().all(|c| *c)
    }
}

impl Rule {
    fn compiled(&self) -> Option<&Compiled> {
        self.compiled
            .get_or_init(|| {
                Ok(Compiled {
                    regex: compile(&self.regex)?,
                    path: self.path.as_deref().map(compile).transpose()?,
                    allowlists: self
                        .allowlists
                        .iter()
                        .map(AllowSpec::compile)
                        .collect::<Result<_, _>>()?,
                })
            })
            .as_ref()
            .ok()
    }
}

/// Shannon entropy of `s` in bits per character, as gitleaks computes it.
pub fn entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let len = s.len() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / len;
            -p * p.log2()
        })
        .sum()
}

/// The whole lines of `text` that `start..end` touches.
fn lines_around(text: &str, start: usize, end: usize) -> &str {
    let from = text
        .get(..start)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let to = text
        .get(end..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| end + i);
    text.get(from..to).unwrap_or_default()
}

impl RuleSet {
    fn parse(json: &str) -> RuleSet {
        let mut set = RuleSet {
            rules: Vec::new(),
            keywords: None,
            keyword_rules: Vec::new(),
            always: Vec::new(),
            global_specs: Vec::new(),
            global: OnceLock::new(),
            error: None,
        };
        let spec: FileSpec = match serde_json::from_str(json) {
            Ok(s) => s,
            Err(e) => {
                set.error = Some(format!("the secret rules do not parse: {e}"));
                return set;
            }
        };
        set.global_specs = spec.allowlist.into_iter().chain(spec.allowlists).collect();
        let mut words: Vec<String> = Vec::new();
        for r in spec.rules {
            // Rules without a regex match file names only (a `.p12` file): memdir's writes are
            // text.
            let Some(regex) = r.regex else { continue };
            let index = set.rules.len();
            if r.keywords.is_empty() {
                set.always.push(index);
            }
            for k in &r.keywords {
                let k = k.to_lowercase();
                let at = match words.iter().position(|w| *w == k) {
                    Some(at) => at,
                    None => {
                        words.push(k);
                        set.keyword_rules.push(Vec::new());
                        words.len() - 1
                    }
                };
                if let Some(rules) = set.keyword_rules.get_mut(at) {
                    rules.push(index);
                }
            }
            set.rules.push(Rule {
                // The set lives for the whole process (see [`rules`]); its ids are named by
                // every finding.
                id: Box::leak(r.id.into_boxed_str()),
                regex,
                entropy: r.entropy.filter(|e| *e > 0.0),
                secret_group: r.secret_group.filter(|g| *g > 0),
                path: r.path,
                allowlists: r.allowlists,
                compiled: OnceLock::new(),
            });
        }
        match AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&words)
        {
            Ok(ac) => set.keywords = Some(ac),
            Err(e) => set.error = Some(format!("the secret keywords do not build: {e}")),
        }
        set
    }

    /// Why the vendored rules could not be read, if they could not (then nothing is found).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// How many rules scan text.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True when there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The global allowlists that compile (one that does not lets nothing go).
    fn global(&self) -> &[Allowlist] {
        self.global.get_or_init(|| {
            self.global_specs
                .iter()
                .filter_map(|a| a.compile().ok())
                .collect()
        })
    }

    /// The rules whose patterns Rust's `regex` cannot compile, with why; they are skipped (a
    /// global allowlist that does not compile is named `allowlist`). Compiles every rule (a
    /// test and a diagnostic, not the write path).
    pub fn uncompilable(&self) -> Vec<(&'static str, String)> {
        let globals = self
            .global_specs
            .iter()
            .filter_map(|a| a.compile().err())
            .map(|e| ("allowlist", e));
        self.rules
            .iter()
            .filter_map(|r| {
                r.compiled();
                match r.compiled.get() {
                    Some(Err(e)) => Some((r.id, e.clone())),
                    _ => None,
                }
            })
            .chain(globals)
            .collect()
    }

    /// The rules the keywords in `text` wake, in rule order.
    fn woken(&self, text: &str) -> Vec<usize> {
        let mut on = vec![false; self.rules.len()];
        for &i in &self.always {
            if let Some(o) = on.get_mut(i) {
                *o = true;
            }
        }
        if let Some(ac) = &self.keywords {
            for m in ac.find_overlapping_iter(text) {
                for &i in self
                    .keyword_rules
                    .get(m.pattern().as_usize())
                    .into_iter()
                    .flatten()
                {
                    if let Some(o) = on.get_mut(i) {
                        *o = true;
                    }
                }
            }
        }
        (0..on.len()).filter(|&i| on[i]).collect()
    }

    /// The credentials in `text` (see [`scan`]).
    pub fn scan(&'static self, text: &str, path: Option<&str>) -> Vec<Finding> {
        let mut found = Vec::new();
        for i in self.woken(text) {
            let Some(rule) = self.rules.get(i) else {
                continue;
            };
            let Some(c) = rule.compiled() else { continue };
            if let Some(p) = &c.path
                && !path.is_some_and(|path| p.is_match(path))
            {
                continue;
            }
            for caps in c.regex.captures_iter(text) {
                let Some(whole) = caps.get(0) else { continue };
                let secret = match rule.secret_group {
                    Some(g) => caps.get(g),
                    None => caps.iter().skip(1).flatten().find(|m| !m.is_empty()),
                }
                .unwrap_or(whole);
                // gitleaks trims newlines off the match.
                let s = secret.as_str();
                let start = secret.start() + (s.len() - s.trim_start_matches('\n').len());
                let end = secret.end() - (s.len() - s.trim_end_matches('\n').len());
                let Some(secret) = text.get(start..end).filter(|s| !s.is_empty()) else {
                    continue;
                };
                if rule.entropy.is_some_and(|floor| entropy(secret) <= floor) {
                    continue;
                }
                let line = lines_around(text, whole.start(), whole.end());
                let allowed = |a: &Allowlist| a.allows(secret, whole.as_str(), line, path);
                if self.global().iter().any(allowed) || c.allowlists.iter().any(allowed) {
                    continue;
                }
                found.push(Finding {
                    rule: rule.id,
                    start,
                    end,
                    line: text.get(..start).map_or(0, |t| t.matches('\n').count()) + 1,
                });
            }
        }
        disjoint(found)
    }
}

/// Findings that do not overlap, in text order: where two rules found the same secret, the
/// specific rule's finding (`aws-access-token`) is kept over gitleaks' catch-all
/// (`generic-api-key`), then the earlier and longer one.
fn disjoint(mut found: Vec<Finding>) -> Vec<Finding> {
    found.sort_by_key(|f| {
        (
            f.rule.starts_with("generic"),
            f.start,
            std::cmp::Reverse(f.end),
        )
    });
    let mut kept: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        if kept.iter().all(|k| f.end <= k.start || k.end <= f.start) {
            kept.push(f);
        }
    }
    kept.sort_by_key(|f| f.start);
    kept
}

#[cfg(test)]
mod fuzz_regressions {
    /// Found by the `secrets` fuzz target: after the Slack token in the middle is redacted, the
    /// generic rule matches the assignment the token's match had hidden. One round of
    /// redaction left it; redacting until clean leaves nothing.
    #[test]
    fn crash_a_match_hidden_behind_a_redacted_one() {
        let text = "_keyrd=rKd=KxAggggggggggggpasseyJwordb_passwordM=KR8dxoxa-6-1vL7ptW4z1Rp_keyrd=rKdtial1vL2vl7i";
        let (clean, found) = super::redact_fully(text, Some("notes/x.md"), &|_| false);
        assert!(found.len() >= 2, "{found:?}");
        assert!(
            super::scan(&clean, Some("notes/x.md")).is_empty(),
            "{clean}"
        );
    }
}
