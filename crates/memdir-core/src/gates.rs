//! Gates on irreversible actions: the policy (`gates.toml`), the ledger's lines and their hash
//! chain, and the decision with its caps, all from `&str` and values.
//!
//! The engine reads the files and the clock and appends to the ledger; everything that decides
//! lives here, so it can be tested without a folder.
//!
//! ```
//! use memdir_core::gates::{Amount, Decision, Policy, Request, decide};
//! let policy = Policy::parse("[payment]\ntargets = [\"acme-*\"]\nmax_amount = 100\n").unwrap();
//! let req = Request { kind: "payment".into(), target: "acme-rent".into(), amount: Some("40".parse::<Amount>().unwrap()) };
//! let now = "2026-12-01T09:00:00Z".parse().unwrap();
//! assert_eq!(decide(&policy, &req, &[], now, &jiff::tz::TimeZone::UTC), Decision::Allowed);
//! ```

use crate::path::MemPath;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use toml::Spanned;

/// The policy file at the memory root.
pub const POLICY_FILE: &str = "gates.toml";
/// The gates' folder at the memory root.
pub const GATES_DIR: &str = "gates";
/// Where the ledger's day files live: `gates/ledger/YYYY-MM-DD.jsonl`.
pub const LEDGER_DIR: &str = "gates/ledger";
/// How long an approval (or a token given at once) can be used when the policy does not say.
pub const DEFAULT_APPROVAL_TTL: &str = "24h";
/// The token prefix, so a token is recognisable in logs and scripts.
pub const TOKEN_PREFIX: &str = "gt_";

/// Which of the gates' files a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateFile {
    /// `gates.toml`, the policy.
    Policy,
    /// `gates/` or anything under it: the ledger.
    Ledger,
}

/// Which gate file `p` names, however it is spelt: case is folded (`GATES.TOML`, `Gateſ.toml`
/// name the same file on a case-insensitive file system) and trailing dots and spaces are
/// dropped (as Windows does), so no spelling reaches the policy or the ledger past this check.
pub fn gate_file(p: &MemPath) -> Option<GateFile> {
    let first = p.components().next()?;
    let folded = first.to_uppercase().to_lowercase();
    match folded.trim_end_matches(['.', ' ']) {
        POLICY_FILE => Some(GateFile::Policy),
        GATES_DIR => Some(GateFile::Ledger),
        _ => None,
    }
}

/// True for `gates.toml`, `gates/` and anything under it, in any spelling ([`gate_file`]).
pub fn is_gate_path(p: &MemPath) -> bool {
    gate_file(p).is_some()
}

/// A non-negative amount with up to six decimals, kept exact (in millionths).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(i64);

const AMOUNT_SCALE: i64 = 1_000_000;

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount(0);

    /// The sum, or `None` on overflow.
    pub fn checked_add(self, other: Amount) -> Option<Amount> {
        self.0.checked_add(other.0).map(Amount)
    }

    /// An amount of whole units.
    pub fn units(n: u32) -> Amount {
        Amount(i64::from(n) * AMOUNT_SCALE)
    }
}

impl FromStr for Amount {
    type Err = String;

    fn from_str(s: &str) -> Result<Amount, String> {
        let bad = || {
            format!(
                "amount {s:?} is not a number: use digits with an optional decimal point, e.g. 40 or 12.50"
            )
        };
        let (int, frac) = s.trim().split_once('.').unwrap_or((s.trim(), ""));
        if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 6 {
            return Err(if frac.len() > 6 {
                format!("amount {s:?} has more than 6 decimals")
            } else {
                bad()
            });
        }
        let whole: i64 = int
            .parse()
            .map_err(|_| format!("amount {s:?} is too large"))?;
        let mut micro = 0i64;
        for (i, d) in frac.bytes().enumerate() {
            micro += i64::from(d - b'0') * 10i64.pow(5 - i as u32);
        }
        whole
            .checked_mul(AMOUNT_SCALE)
            .and_then(|w| w.checked_add(micro))
            .filter(|v| *v < i64::MAX / 1024)
            .map(Amount)
            .ok_or_else(|| format!("amount {s:?} is too large"))
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, micro) = (self.0 / AMOUNT_SCALE, self.0 % AMOUNT_SCALE);
        if micro == 0 {
            return write!(f, "{whole}");
        }
        let frac = format!("{micro:06}");
        write!(f, "{whole}.{}", frac.trim_end_matches('0'))
    }
}

/// When a person must approve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Never: the caps decide alone.
    Never,
    /// For requests whose amount is above this.
    Above(Amount),
    /// For every request, with or without an amount (`approval_above = "always"`).
    Always,
}

/// One action kind's table in `gates.toml`.
#[derive(Debug, Clone)]
pub struct KindPolicy {
    /// The whitelist: exact names or globs (`acme-*`). Empty: every target is denied.
    pub targets: Vec<String>,
    matcher: globset::GlobSet,
    /// The most one request may carry.
    pub max_amount: Option<Amount>,
    /// The most all allowed requests may carry per local day.
    pub daily_amount: Option<Amount>,
    /// The most all allowed requests may carry per week (Monday to Sunday, local).
    pub weekly_amount: Option<Amount>,
    /// The most requests allowed per local day.
    pub daily_count: Option<u64>,
    /// The most requests allowed per week.
    pub weekly_count: Option<u64>,
    /// When a person must approve.
    pub approval: Approval,
    /// How long an approval, or a token given at once, can be used, in milliseconds.
    pub approval_ttl_ms: i64,
}

impl KindPolicy {
    /// True when `target` is on the whitelist.
    pub fn allows_target(&self, target: &str) -> bool {
        self.matcher.is_match(target)
    }

    /// True when some rule of this kind is about amounts, so requests must carry one.
    fn needs_amount(&self) -> bool {
        self.max_amount.is_some()
            || self.daily_amount.is_some()
            || self.weekly_amount.is_some()
            || matches!(self.approval, Approval::Above(_))
    }
}

/// `gates.toml`: one table per action kind. Kinds it does not name are denied.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The kinds, by name.
    pub kinds: BTreeMap<String, KindPolicy>,
}

/// A policy that cannot be used, with the line that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{POLICY_FILE} line {line}: {message}")]
pub struct PolicyError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKind {
    targets: Option<Spanned<toml::Value>>,
    max_amount: Option<Spanned<toml::Value>>,
    daily_amount: Option<Spanned<toml::Value>>,
    weekly_amount: Option<Spanned<toml::Value>>,
    daily_count: Option<Spanned<toml::Value>>,
    weekly_count: Option<Spanned<toml::Value>>,
    approval_above: Option<Spanned<toml::Value>>,
    approval_ttl: Option<Spanned<toml::Value>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

impl Policy {
    /// Parses `gates.toml`. Any mistake (bad TOML, an unknown key, a value of the wrong kind) is
    /// an error naming its line, and the engine then denies everything.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let raw: BTreeMap<String, Spanned<RawKind>> = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            PolicyError {
                line: e.span().map_or(1, |s| line_of(text, s.start)),
                message: if message.contains("invalid type: ") && message.contains("RawKind") {
                    "every top-level entry must be a [kind] table".into()
                } else {
                    message.replace("RawKind", "kind table")
                },
            }
        })?;
        let mut kinds = BTreeMap::new();
        for (name, table) in raw {
            let line = line_of(text, table.span().start);
            kinds.insert(
                name.clone(),
                kind_policy(text, &name, line, table.into_inner())?,
            );
        }
        Ok(Policy { kinds })
    }
}

fn kind_policy(
    text: &str,
    kind: &str,
    line: usize,
    raw: RawKind,
) -> Result<KindPolicy, PolicyError> {
    let err = |v: &Spanned<toml::Value>, message: String| PolicyError {
        line: line_of(text, v.span().start),
        message,
    };
    let amount = |key: &str,
                  v: &Option<Spanned<toml::Value>>|
     -> Result<Option<Amount>, PolicyError> {
        let Some(v) = v else { return Ok(None) };
        let s = match v.get_ref() {
            toml::Value::Integer(i) if *i >= 0 => i.to_string(),
            toml::Value::Float(f) if *f >= 0.0 && f.is_finite() => f.to_string(),
            _ => {
                return Err(err(
                    v,
                    format!("[{kind}] {key} must be a number of zero or more, e.g. {key} = 100"),
                ));
            }
        };
        s.parse::<Amount>()
            .map(Some)
            .map_err(|m| err(v, format!("[{kind}] {key}: {m}")))
    };
    let count = |key: &str, v: &Option<Spanned<toml::Value>>| -> Result<Option<u64>, PolicyError> {
        let Some(v) = v else { return Ok(None) };
        match v.get_ref() {
            toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
            _ => Err(err(
                v,
                format!("[{kind}] {key} must be a whole number of zero or more, e.g. {key} = 20"),
            )),
        }
    };
    let mut targets = Vec::new();
    let mut builder = globset::GlobSetBuilder::new();
    if let Some(v) = &raw.targets {
        let list = match v.get_ref() {
            toml::Value::Array(a) => a,
            _ => {
                return Err(err(
                    v,
                    format!(
                        "[{kind}] targets must be a list of names or globs, e.g. targets = [\"acme-*\"]"
                    ),
                ));
            }
        };
        for t in list {
            let Some(t) = t.as_str() else {
                return Err(err(v, format!("[{kind}] targets must hold only strings")));
            };
            let glob = globset::GlobBuilder::new(t)
                .literal_separator(false)
                .build()
                .map_err(|e| err(v, format!("[{kind}] target {t:?} is not a valid glob: {e}")))?;
            builder.add(glob);
            targets.push(t.to_string());
        }
    }
    let matcher = builder.build().map_err(|e| PolicyError {
        line,
        message: format!("[{kind}] targets: {e}"),
    })?;
    let approval = match &raw.approval_above {
        None => Approval::Never,
        Some(v) if v.get_ref().as_str() == Some("always") => Approval::Always,
        Some(v) if v.get_ref().is_str() => {
            return Err(err(
                v,
                format!("[{kind}] approval_above must be a number or \"always\""),
            ));
        }
        Some(_) => match amount("approval_above", &raw.approval_above)? {
            Some(a) => Approval::Above(a),
            None => Approval::Never,
        },
    };
    let approval_ttl_ms = match &raw.approval_ttl {
        None => crate::duration::parse_ttl(DEFAULT_APPROVAL_TTL).unwrap_or(86_400_000),
        Some(v) => {
            let s = v.get_ref().as_str().ok_or_else(|| {
                err(v, format!("[{kind}] approval_ttl must be a duration string, e.g. approval_ttl = \"24h\""))
            })?;
            crate::duration::parse_ttl(s)
                .map_err(|m| err(v, format!("[{kind}] approval_ttl: {m}")))?
        }
    };
    Ok(KindPolicy {
        targets,
        matcher,
        max_amount: amount("max_amount", &raw.max_amount)?,
        daily_amount: amount("daily_amount", &raw.daily_amount)?,
        weekly_amount: amount("weekly_amount", &raw.weekly_amount)?,
        daily_count: count("daily_count", &raw.daily_count)?,
        weekly_count: count("weekly_count", &raw.weekly_count)?,
        approval,
        approval_ttl_ms,
    })
}

/// What an agent asks to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The action kind, a table of `gates.toml`.
    pub kind: String,
    /// Who or what the action is aimed at.
    pub target: String,
    /// How much, when the action has an amount.
    pub amount: Option<Amount>,
}

/// Shown as `KIND to TARGET` with ` (AMOUNT)` when there is one, the way every listing of
/// requests names them.
impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} to {}", self.kind, self.target)?;
        match &self.amount {
            Some(a) => write!(f, " ({a})"),
            None => Ok(()),
        }
    }
}

/// The gate's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead: a single-use token is issued.
    Allowed,
    /// Refused, by the rule named in words a model can act on.
    Denied {
        /// `<key>: what happened and what to do`.
        rule: String,
    },
    /// A person must approve first.
    Pending,
}

impl Decision {
    /// `allowed`, `denied` or `pending`, as the ledger and `--json` write it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied { .. } => "denied",
            Decision::Pending => "pending",
        }
    }
}

/// The kinds of ledger entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// A request and its decision.
    Request,
    /// A person approved a pending request.
    Approve,
    /// A person denied a pending request.
    Deny,
    /// An executor used a token (the check passed).
    Use,
    /// An attempt that was refused: a bad check, or an approval by someone other than a person.
    Refused,
}

/// One ledger line. Field order is the line's byte order, which the hash covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// 1, 2, 3… across all day files.
    pub seq: u64,
    /// When, RFC 3339 in UTC.
    pub time: String,
    /// What happened.
    pub event: Event,
    /// The request it is about (empty when unknown, e.g. a foreign token).
    pub id: String,
    /// The action kind (requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The target (requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The amount, exact, as a string (requests with an amount).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// `allowed`, `denied` or `pending` (requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// The rule that denied or refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The SHA-256 of the token (never the token itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_sha256: Option<String>,
    /// Until when the token can be used (allowed requests, approvals), RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Who acted (the writer name).
    pub writer: String,
    /// `user`, `agent` or `external`.
    pub source: String,
    /// Why, as given.
    pub reason: String,
    /// The previous line's hash (64 zeros for the first line).
    pub prev: String,
    /// This line's hash: SHA-256 of the line up to `,"hash"` plus the closing `}`.
    #[serde(default, skip_serializing)]
    pub hash: String,
}

/// The `prev` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Lowercase hex SHA-256.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const HASH_KEY: &str = ",\"hash\":\"";

impl LedgerEntry {
    /// The line to append (with its newline), sealing it with its hash: the entry must already
    /// carry `seq` and `prev`.
    pub fn seal(&mut self) -> String {
        let body = serde_json::to_string(self).unwrap_or_default();
        self.hash = sha256_hex(body.as_bytes());
        format!(
            "{}{HASH_KEY}{}\"}}\n",
            body.strip_suffix('}').unwrap_or(&body),
            self.hash
        )
    }

    /// Parses one line and checks that its hash matches its bytes.
    pub fn open(line: &str) -> Result<LedgerEntry, String> {
        let (head, tail) = line
            .rsplit_once(HASH_KEY)
            .ok_or("the line has no hash field")?;
        let hash = tail
            .strip_suffix("\"}")
            .ok_or("the line does not end with its hash")?;
        let mut e: LedgerEntry = serde_json::from_str(line)
            .map_err(|e| format!("the line is not a ledger entry: {e}"))?;
        if sha256_hex(format!("{head}}}").as_bytes()) != hash {
            return Err("the line was edited: its hash does not match its content".into());
        }
        e.hash = hash.to_string();
        Ok(e)
    }
}

/// Where a ledger breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainBreak {
    /// The day file.
    pub file: String,
    /// The 1-based line in it.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}: {}", self.file, self.line, self.message)
    }
}

/// Reads the ledger's day files (given in name order as `(path, text)`) and checks the chain:
/// every line's own hash, every `prev`, consecutive `seq`. Returns the entries, or where the
/// first break is: an edited line fails its hash; a removed or moved line breaks the next
/// line's `prev` and `seq`.
pub fn read_chain(files: &[(String, String)]) -> Result<Vec<LedgerEntry>, ChainBreak> {
    let mut out: Vec<LedgerEntry> = Vec::new();
    for (file, text) in files {
        for (i, line) in text.lines().enumerate() {
            let at = |message: String| ChainBreak {
                file: file.clone(),
                line: i + 1,
                message,
            };
            if line.trim().is_empty() {
                return Err(at("a blank line in the ledger: lines were edited".into()));
            }
            let e = LedgerEntry::open(line).map_err(at)?;
            let (want_seq, want_prev) = out
                .last()
                .map_or((1, GENESIS), |p| (p.seq + 1, p.hash.as_str()));
            if e.seq != want_seq || e.prev != want_prev {
                return Err(at(format!(
                    "entry {} follows entry {}: entries were removed or reordered before this line",
                    e.seq,
                    want_seq - 1
                )));
            }
            out.push(e);
        }
        if !text.is_empty() && !text.ends_with('\n') {
            return Err(ChainBreak {
                file: file.clone(),
                line: text.lines().count(),
                message: "the last line is cut short".into(),
            });
        }
    }
    Ok(out)
}

/// The ledger's head as memdir records it after each append: the last entry's number and
/// hash, and their seal when the memory has a key (see [`seal`]). On disk, one line:
/// `SEQ HASH` or `SEQ HASH SEAL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The last entry's number.
    pub seq: u64,
    /// The last entry's hash.
    pub hash: String,
    /// HMAC-SHA256 of `SEQ HASH` under the memory's key, as hex.
    pub seal: Option<String>,
}

impl Head {
    /// Reads a head line; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Head> {
        let mut words = text.split_whitespace();
        let seq = words.next()?.parse().ok()?;
        let hash = words.next()?.to_string();
        let seal = words.next().map(str::to_string);
        words.next().is_none().then_some(Head { seq, hash, seal })
    }

    /// The head line, newline-terminated.
    pub fn render(&self) -> String {
        match &self.seal {
            Some(s) => format!("{} {} {s}\n", self.seq, self.hash),
            None => format!("{} {}\n", self.seq, self.hash),
        }
    }
}

/// The seal of a head: HMAC-SHA256 of `SEQ HASH` under `key`, as hex. Each entry's hash covers
/// the one before it, so sealing the last hash seals the whole chain: without the key, a chain
/// rewritten whole (every hash recomputed) cannot be given a valid seal.
pub fn seal(key: &[u8], seq: u64, hash: &str) -> String {
    use hmac::{KeyInit, Mac};
    // HMAC takes a key of any length, so this never fails.
    let Ok(mut mac) = hmac::Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(format!("{seq} {hash}").as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the ledger's end is checked against: the head in the memory folder, and, from outside
/// it (the user's state folder), the memory's key and the last head memdir wrote there.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadCheck<'a> {
    /// The head recorded beside the ledger (`.memdir/gates-head`).
    pub head: Option<&'a Head>,
    /// The memory's key, when it has one: the head must carry its seal.
    pub key: Option<&'a [u8]>,
    /// The head memdir last recorded outside the folder: the ledger must still hold that entry.
    pub remembered: Option<&'a Head>,
}

/// Checks the chain's end: against the head memdir recorded after its last append (so entries
/// cut off the end are found), its seal under the key, and the head remembered outside the
/// folder (so deleting the ledger and its head together is found too). A ledger with entries
/// but no head is not intact: the head was deleted.
pub fn check_head(entries: &[LedgerEntry], check: HeadCheck<'_>) -> Result<(), String> {
    let at = |seq: u64| entries.get((seq as usize).wrapping_sub(1));
    let holds = |h: &Head, whose: &str| match at(h.seq) {
        Some(e) if e.seq == h.seq && e.hash == h.hash => Ok(()),
        Some(_) => Err(format!(
            "entry {} is not the one memdir wrote{whose}: the ledger was rewritten",
            h.seq
        )),
        None => Err(format!(
            "the ledger ends at entry {} but memdir wrote {}{whose}: entries were removed from the end",
            entries.len(),
            h.seq
        )),
    };
    let remembered = " (as remembered outside the memory folder)";
    let Some(head) = check.head else {
        if let Some(r) = check.remembered {
            holds(r, remembered)?;
        }
        if entries.is_empty() {
            return Ok(());
        }
        return Err(format!(
            "the ledger has {} entries but its head (.memdir/gates-head) is missing: it was deleted",
            entries.len()
        ));
    };
    holds(head, "")?;
    if let Some(key) = check.key
        && head.seal.as_deref() != Some(seal(key, head.seq, &head.hash).as_str())
    {
        return Err(
            "the head's seal does not match this memory's key: the ledger or its head was rewritten"
                .to_string(),
        );
    }
    match check.remembered {
        Some(r) => holds(r, remembered),
        None => Ok(()),
    }
}

/// A request as the ledger tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestState {
    /// Its id.
    pub id: String,
    /// When it was made.
    pub time: Timestamp,
    /// What was asked.
    pub request: Request,
    /// Who asked, and why.
    pub writer: String,
    /// Why, as given.
    pub reason: String,
    /// The decision when it was made.
    pub decision: String,
    /// The rule, when denied.
    pub rule: Option<String>,
    /// The token's SHA-256.
    pub token_sha256: Option<String>,
    /// When its token stops working (set on allow and on approval).
    pub expires: Option<Timestamp>,
    /// A person approved it.
    pub approved: bool,
    /// A person denied it.
    pub denied: Option<String>,
    /// Its token was used, at this time.
    pub used: Option<String>,
}

impl RequestState {
    /// True while it waits for a person.
    pub fn is_pending(&self) -> bool {
        self.decision == "pending" && !self.approved && self.denied.is_none()
    }

    /// True when it counts toward the caps: allowed, or pending (its amount is reserved until a
    /// person denies it).
    pub fn counts(&self) -> bool {
        self.decision == "allowed" || (self.decision == "pending" && self.denied.is_none())
    }
}

/// Every request in the ledger, in order, with what happened to it since.
pub fn requests(entries: &[LedgerEntry]) -> Vec<RequestState> {
    let mut out: Vec<RequestState> = Vec::new();
    let mut at: BTreeMap<String, usize> = BTreeMap::new();
    for e in entries {
        let ts = |s: &Option<String>| s.as_deref().and_then(|t| t.parse::<Timestamp>().ok());
        match e.event {
            Event::Request => {
                let Ok(time) = e.time.parse::<Timestamp>() else {
                    continue;
                };
                at.insert(e.id.clone(), out.len());
                out.push(RequestState {
                    id: e.id.clone(),
                    time,
                    request: Request {
                        kind: e.kind.clone().unwrap_or_default(),
                        target: e.target.clone().unwrap_or_default(),
                        amount: e.amount.as_deref().and_then(|a| a.parse().ok()),
                    },
                    writer: e.writer.clone(),
                    reason: e.reason.clone(),
                    decision: e.decision.clone().unwrap_or_default(),
                    rule: e.rule.clone(),
                    token_sha256: e.token_sha256.clone(),
                    expires: ts(&e.expires),
                    approved: false,
                    denied: None,
                    used: None,
                });
            }
            Event::Approve | Event::Deny | Event::Use => {
                let Some(r) = at.get(&e.id).and_then(|i| out.get_mut(*i)) else {
                    continue;
                };
                match e.event {
                    Event::Approve => {
                        r.approved = true;
                        r.expires = ts(&e.expires);
                    }
                    Event::Deny => r.denied = Some(e.reason.clone()),
                    _ => r.used = Some(e.time.clone()),
                }
            }
            Event::Refused => {}
        }
    }
    out
}

/// The ISO week (Monday first) and the day a time falls on, in `tz`.
fn day_and_week(t: Timestamp, tz: &TimeZone) -> (jiff::civil::Date, (i16, i8)) {
    let d = t.to_zoned_datetime(tz.clone()).date();
    let w = d.iso_week_date();
    (d, (w.year(), w.week()))
}

/// Decides a request from the policy and the requests already in the ledger, at `now` in `tz`
/// (days and weeks are local). Caps count every request that was allowed, or is pending and
/// not denied, made the same local day (week) as `now`.
pub fn decide(
    policy: &Policy,
    req: &Request,
    past: &[RequestState],
    now: Timestamp,
    tz: &TimeZone,
) -> Decision {
    let deny = |rule: String| Decision::Denied { rule };
    let Some(k) = policy.kinds.get(&req.kind) else {
        let known: Vec<&str> = policy.kinds.keys().map(String::as_str).collect();
        return deny(format!(
            "unknown kind: {POLICY_FILE} has no [{}] table, so this action is denied; the kinds are: {}",
            req.kind,
            if known.is_empty() {
                "(none)".to_string()
            } else {
                known.join(", ")
            }
        ));
    };
    if !k.allows_target(&req.target) {
        return deny(format!(
            "targets: {:?} is not on the {} whitelist; do not retry with it: ask the user to add it to {POLICY_FILE}",
            req.target, req.kind
        ));
    }
    let amount = match req.amount {
        Some(a) => a,
        None if k.needs_amount() => {
            return deny(format!(
                "amount: {} requests need an amount (--amount N)",
                req.kind
            ));
        }
        None => Amount::ZERO,
    };
    if let Some(max) = k.max_amount
        && amount > max
    {
        return deny(format!(
            "max_amount: {amount} is over the {} limit of {max} per request; ask the user",
            req.kind
        ));
    }
    let (today, week) = day_and_week(now, tz);
    let (mut day_sum, mut day_n, mut week_sum, mut week_n) =
        (Amount::ZERO, 0u64, Amount::ZERO, 0u64);
    for r in past
        .iter()
        .filter(|r| r.request.kind == req.kind && r.counts())
    {
        let (d, w) = day_and_week(r.time, tz);
        let a = r.request.amount.unwrap_or_default();
        if w == week {
            week_sum = week_sum.checked_add(a).unwrap_or(Amount(i64::MAX));
            week_n += 1;
            if d == today {
                day_sum = day_sum.checked_add(a).unwrap_or(Amount(i64::MAX));
                day_n += 1;
            }
        }
    }
    let over = |sum: Amount, cap: Option<Amount>| {
        cap.filter(|c| sum.checked_add(amount).is_none_or(|t| t > *c))
    };
    if let Some(cap) = k.daily_count
        && day_n >= cap
    {
        return deny(format!(
            "daily_count: the {} limit of {cap} requests per day is reached for {today}; wait until tomorrow or ask the user",
            req.kind
        ));
    }
    if let Some(cap) = k.weekly_count
        && week_n >= cap
    {
        return deny(format!(
            "weekly_count: the {} limit of {cap} requests per week is reached; wait until next week or ask the user",
            req.kind
        ));
    }
    if let Some(cap) = over(day_sum, k.daily_amount) {
        return deny(format!(
            "daily_amount: {day_sum} of the {} limit of {cap} per day is already used on {today}, so {amount} more would go over; wait until tomorrow or ask the user",
            req.kind
        ));
    }
    if let Some(cap) = over(week_sum, k.weekly_amount) {
        return deny(format!(
            "weekly_amount: {week_sum} of the {} limit of {cap} per week is already used, so {amount} more would go over; wait until next week or ask the user",
            req.kind
        ));
    }
    match k.approval {
        Approval::Always => Decision::Pending,
        Approval::Above(limit) if amount > limit => Decision::Pending,
        _ => Decision::Allowed,
    }
}

/// A token: `gt_<request id>_<64 hex of randomness>`. The randomness comes from the caller
/// (the engine uses the operating system's CSPRNG).
pub fn token(id: &str, random: &[u8; 32]) -> String {
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("{TOKEN_PREFIX}{id}_{hex}")
}

/// The request id a token names, if it has a token's shape.
pub fn token_id(token: &str) -> Option<&str> {
    let rest = token.trim().strip_prefix(TOKEN_PREFIX)?;
    let (id, secret) = rest.rsplit_once('_')?;
    (secret.len() == 64 && secret.bytes().all(|b| b.is_ascii_hexdigit()) && is_id(id)).then_some(id)
}

/// True for a request id: `YYYYMMDD-` and 8 lowercase hex digits.
pub fn is_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 17
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn amt(s: &str) -> Amount {
        s.parse().unwrap()
    }

    #[test]
    fn amounts_are_exact() {
        assert_eq!(amt("12.50").to_string(), "12.5");
        assert_eq!(amt("0.000001").to_string(), "0.000001");
        assert_eq!(amt("100").to_string(), "100");
        assert_eq!(amt("0.1").checked_add(amt("0.2")), Some(amt("0.3")));
        for bad in [
            "",
            "-1",
            "1e3",
            "1.2.3",
            "abc",
            "1.0000001",
            ".5",
            "99999999999999999999",
        ] {
            assert!(bad.parse::<Amount>().is_err(), "{bad}");
        }
    }

    #[test]
    fn policy_errors_name_their_line() {
        let check = |text: &str, line: usize, has: &str| {
            let e = Policy::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.to_string().contains(has), "{e}");
        };
        check(
            "[payment]\ntargets = [\"a\"]\nmax_amount = \"lots\"\n",
            3,
            "max_amount must be a number",
        );
        check("[payment]\n\nmax_amont = 5\n", 3, "max_amont");
        check("[payment]\ntargets = [\"a\"\n", 2, "");
        check("[payment]\napproval_ttl = \"soon\"\n", 2, "approval_ttl");
        check("[payment]\napproval_above = \"later\"\n", 2, "\"always\"");
        check("[payment]\ndaily_count = -1\n", 2, "daily_count");
        check("[payment]\ntargets = [\"[\"]\n", 2, "not a valid glob");
        check("x = 1\n", 1, "table");
    }

    #[test]
    fn the_issue_example_parses() {
        let p = Policy::parse(
            "[payment]\ntargets = [\"acme-*\", \"landlord\"]\nmax_amount = 100\ndaily_amount = 150\ndaily_count = 20\napproval_above = 50\napproval_ttl = \"24h\"\n\n[deploy]\ntargets = [\"staging\"]\napproval_above = \"always\"\n",
        )
        .unwrap();
        let k = &p.kinds["payment"];
        assert!(k.allows_target("acme-rent") && k.allows_target("landlord"));
        assert!(!k.allows_target("landlord2") && !k.allows_target("evil"));
        assert_eq!(k.approval, Approval::Above(Amount::units(50)));
        assert_eq!(p.kinds["deploy"].approval, Approval::Always);
    }

    #[test]
    fn gate_paths_in_every_spelling() {
        for p in [
            "gates.toml",
            "/memories/gates.toml",
            "./gates.toml",
            "GATES.TOML",
            "Gates.Toml",
            "gateſ.toml",
            "gates.toml.",
            "gates",
            "gates/ledger/2026-12-01.jsonl",
            "GATES/x",
            "gates /x",
        ] {
            assert!(is_gate_path(&MemPath::parse(p).unwrap()), "{p}");
        }
        for p in ["notes/gates.toml", "gates.md", "gatesx", "my-gates/x"] {
            assert!(!is_gate_path(&MemPath::parse(p).unwrap()), "{p}");
        }
    }

    #[test]
    fn chain_detects_edit_removal_and_reorder() {
        let mut lines = Vec::new();
        let mut prev = GENESIS.to_string();
        for seq in 1..=4 {
            let mut e = LedgerEntry {
                seq,
                time: "2026-12-01T09:00:00Z".into(),
                event: Event::Request,
                id: format!("20261201-0000000{seq}"),
                kind: Some("payment".into()),
                target: Some("landlord".into()),
                amount: Some("10".into()),
                decision: Some("allowed".into()),
                rule: None,
                token_sha256: None,
                expires: None,
                writer: "main".into(),
                source: "agent".into(),
                reason: "rent".into(),
                prev: prev.clone(),
                hash: String::new(),
            };
            lines.push(e.seal());
            prev = e.hash;
        }
        let file = |ls: &[String]| vec![("gates/ledger/2026-12-01.jsonl".to_string(), ls.concat())];
        let entries = read_chain(&file(&lines)).unwrap();
        assert_eq!(entries.len(), 4);
        let head = |seq: u64, hash: &str, seal: Option<String>| Head {
            seq,
            hash: hash.to_string(),
            seal,
        };
        fn at(h: &Head) -> HeadCheck<'_> {
            HeadCheck {
                head: Some(h),
                ..HeadCheck::default()
            }
        }
        assert!(check_head(&entries, at(&head(4, &prev, None))).is_ok());
        // No head beside entries: deleted.
        assert!(
            check_head(&entries, HeadCheck::default())
                .unwrap_err()
                .contains("missing")
        );
        assert!(check_head(&[], HeadCheck::default()).is_ok());
        // Keyed: the seal must match; a head rewritten without the key does not.
        let key = [9u8; 32];
        let sealed = head(4, &prev, Some(seal(&key, 4, &prev)));
        let unsealed = head(4, &prev, None);
        let forged = head(
            3,
            &entries[2].hash,
            Some(seal(&[1u8; 32], 3, &entries[2].hash)),
        );
        let keyed = |h| HeadCheck {
            head: Some(h),
            key: Some(&key),
            remembered: None,
        };
        assert!(check_head(&entries, keyed(&sealed)).is_ok());
        assert!(check_head(&entries, keyed(&unsealed)).is_err());
        assert!(check_head(&entries[..3], keyed(&forged)).is_err());
        // Remembered outside: the ledger and its head deleted together.
        let remembered = HeadCheck {
            remembered: Some(&sealed),
            ..HeadCheck::default()
        };
        assert!(check_head(&[], remembered).unwrap_err().contains("removed"));
        assert_eq!(Head::parse(&sealed.render()), Some(sealed.clone()));
        let edited: Vec<String> = lines
            .iter()
            .map(|l| l.replacen("\"10\"", "\"1\"", 1))
            .collect();
        let mut one = lines.clone();
        one[1] = edited[1].clone();
        assert_eq!(read_chain(&file(&one)).unwrap_err().line, 2);
        let mut removed = lines.clone();
        removed.remove(1);
        assert_eq!(read_chain(&file(&removed)).unwrap_err().line, 2);
        let mut swapped = lines.clone();
        swapped.swap(1, 2);
        assert_eq!(read_chain(&file(&swapped)).unwrap_err().line, 2);
        let cut = read_chain(&file(&lines[..3])).unwrap();
        assert!(
            check_head(&cut, at(&head(4, &prev, None)))
                .unwrap_err()
                .contains("removed from the end")
        );
    }

    #[test]
    fn tokens_name_their_request() {
        let t = token("20261201-0a1b2c3d", &[7; 32]);
        assert_eq!(token_id(&t), Some("20261201-0a1b2c3d"));
        assert_eq!(token_id("gt_20261201-0a1b2c3d_abc"), None);
        assert_eq!(token_id(&t.replacen("gt_", "xx_", 1)), None);
    }
}
