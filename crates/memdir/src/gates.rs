//! Gates on irreversible actions, through the store: requests decided by `gates.toml`, single-use
//! tokens, a person's approval, and the hash-chained ledger under `gates/ledger/`.
//!
//! Every operation that reads the ledger to decide and then appends to it does both under the
//! ledger's lock (`gates/ledger`) (after the `git` lock, like every change), so two requests cannot both pass a cap
//! and two checks of one token cannot both use it, whichever processes make them. The caps are
//! computed from the ledger each time, so they hold across restarts.
//!
//! Tokens come from the operating system's CSPRNG; the ledger keeps only their SHA-256. The
//! token of a pending request is kept in `.memdir/gate-<id>.token` (never served to an agent) so
//! `gate status` can hand it over once a person approves.

use crate::change::Change;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::provenance::Source;
use crate::store::{EntryKind, LockName, StoreError};
use jiff::ToSpan;
use memdir_core::context::Section;
use memdir_core::gates::{
    ChainBreak, Decision, Event, GENESIS, Head, HeadCheck, LEDGER_DIR, LedgerEntry, POLICY_FILE,
    Policy, Request, RequestState, check_head, decide, is_id, read_chain, requests, seal,
    sha256_hex, token, token_id,
};
use memdir_core::path::MemPath;
use serde::Serialize;

/// The ledger's last `seq` and hash, kept beside it so a cut end is found.
pub(crate) const HEAD_META: &str = "gates-head";
/// The key's name in the key store ([`Memory::with_gate_keys`], or the backend's).
pub(crate) const KEY_FILE: &str = "key";
/// The remembered head's name in the key store.
pub(crate) const HEAD_FILE: &str = "head";
/// The key's length.
const KEY_BYTES: usize = 32;

/// What the key folder holds.
#[derive(Default)]
struct Keys {
    key: Option<Vec<u8>>,
    head: Option<Head>,
}

/// The gate's answer, shaped as `--json` prints it: `{"decision": "allowed", "token": "..."}`,
/// `{"decision": "denied", "rule": "..."}` or `{"decision": "pending", "id": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Answer {
    /// Go ahead, with this single-use token.
    Allowed {
        /// The request's id.
        #[serde(skip)]
        id: String,
        /// The token to hand to the executor.
        token: String,
        /// Until when the token works, RFC 3339.
        #[serde(skip)]
        expires: String,
    },
    /// Refused.
    Denied {
        /// The request's id (empty when nothing was recorded).
        #[serde(skip)]
        id: String,
        /// `<rule>: what happened and what to do`.
        rule: String,
    },
    /// Waits for a person: `memdir gate approve ID`.
    Pending {
        /// The request's id.
        id: String,
    },
}

impl Answer {
    /// One line for people and models.
    pub fn message(&self) -> String {
        match self {
            Answer::Allowed { id, token, expires } => format!(
                "allowed: request {id}; token {token} (single use, for exactly this kind, target and amount, until {expires}); hand it to the executor, which runs `memdir gate check`. The gate never performs the action."
            ),
            Answer::Denied { rule, .. } => format!("denied by rule {rule}"),
            Answer::Pending { id } => format!(
                "pending: request {id} waits for a person's approval (`memdir gate approve {id}`); ask for its status later with `memdir gate status {id}` to get the token"
            ),
        }
    }
}

/// Whether a person is present: the front end says so (the CLI checks that stdin is a terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// A person typed the command at a terminal.
    Terminal,
    /// A person signed in to memdir's page with a single-use link (`memdir ui`), a credential
    /// no agent token stands in for.
    Page,
    /// No terminal: an agent, a script, a tool call.
    Unattended,
}

/// A person's verdict on a pending request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Approve: its token works until the kind's `approval_ttl` has passed.
    Approve,
    /// Deny.
    Deny,
}

/// What `gate verify` found in an intact ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Entries checked.
    pub entries: usize,
    /// Day files read.
    pub files: usize,
}

/// The ledger as read: its day files, its entries, and the first break when it is not intact.
struct Ledger {
    entries: Vec<LedgerEntry>,
    last_file: Option<String>,
    files: usize,
    broken: Option<String>,
}

fn random<const N: usize>() -> Result<[u8; N], Error> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| {
        StoreError::Unavailable(format!("no randomness from the operating system: {e}"))
    })?;
    Ok(b)
}

fn one_line(field: &str, s: &str) -> Result<String, Error> {
    let s = s.trim();
    if s.is_empty() || s.contains(['\n', '\r']) || s.len() > 1000 {
        return Err(Error::Invalid(format!(
            "{field} must be one non-empty line of at most 1000 bytes"
        )));
    }
    Ok(s.to_string())
}

fn load_ledger(cx: &Ctx) -> Result<Ledger, Error> {
    let dir = MemPath::parse(LEDGER_DIR)?;
    let listed = match cx.store().list(&dir) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let mut files = Vec::new();
    for e in listed {
        if e.kind != EntryKind::File || !e.path.file_name().is_some_and(|n| n.ends_with(".jsonl")) {
            continue;
        }
        let text = String::from_utf8_lossy(&cx.store().read(&e.path)?).into_owned();
        files.push((e.path.to_string(), text));
    }
    let head = cx
        .store()
        .read_meta(HEAD_META)?
        .and_then(|b| Head::parse(&String::from_utf8_lossy(&b)));
    let keys = gate_keys(cx)?;
    let last_file = files.last().map(|f| f.0.clone());
    let n = files.len();
    let (entries, broken) = match read_chain(&files) {
        Ok(entries) => {
            let check = HeadCheck {
                head: head.as_ref(),
                key: keys.key.as_deref(),
                remembered: keys.head.as_ref(),
            };
            let broken = check_head(&entries, check).err();
            (entries, broken)
        }
        Err(ChainBreak {
            file,
            line,
            message,
        }) => (Vec::new(), Some(format!("{file} line {line}: {message}"))),
    };
    Ok(Ledger {
        entries,
        last_file,
        files: n,
        broken,
    })
}

/// Appends one entry, sealed onto the chain, to today's day file (or the newest one, should
/// the clock have gone back), then records the new head.
fn append_entry(tx: &Change<'_>, ledger: &mut Ledger, mut e: LedgerEntry) -> Result<(), Error> {
    let cx = tx.cx();
    let now = cx.clock().now();
    let (seq, prev) = ledger
        .entries
        .last()
        .map_or((1, GENESIS.to_string()), |p| (p.seq + 1, p.hash.clone()));
    e.seq = seq;
    e.prev = prev;
    e.time = now.timestamp().to_string();
    e.writer = cx.actor().writer.clone();
    e.source = cx.actor().source.as_str().to_string();
    let line = e.seal();
    let today = format!("{LEDGER_DIR}/{}.jsonl", now.date());
    let file = match &ledger.last_file {
        Some(last) if *last > today => last.clone(),
        _ => today,
    };
    let key = gate_key_or_new(cx)?;
    let sealed = cx
        .store()
        .read_meta(HEAD_META)?
        .and_then(|b| Head::parse(&String::from_utf8_lossy(&b)))
        .is_some_and(|h| h.seal.is_some());
    if key.is_none() && sealed {
        // Appending without the key would leave an unsealed head, which reads as forged.
        return Err(Error::Invalid(
            "the gate ledger is sealed with a key in the user's state folder, which this process cannot see: run memdir with HOME (or XDG_STATE_HOME) set".into(),
        ));
    }
    tx.append_ledger(&MemPath::parse(&file)?, line.as_bytes())?;
    let head = Head {
        seq: e.seq,
        seal: key.as_deref().map(|k| seal(k, e.seq, &e.hash)),
        hash: e.hash.clone(),
    };
    tx.write_meta(HEAD_META, head.render().as_bytes())?;
    remember_head(cx, &head)?;
    ledger.last_file = Some(file);
    ledger.entries.push(e);
    Ok(())
}

/// Where the gates' key and remembered head live: the key folder a front end gave
/// ([`Memory::with_gate_keys`]), else the backend's own place outside the memory's files
/// (PostgreSQL's table), else nowhere (an unsealed head).
fn key_store(cx: &Ctx) -> Option<std::sync::Arc<dyn crate::keys::KeyStore>> {
    match &cx.gate_keys {
        Some(dir) => Some(std::sync::Arc::new(memdir_folder::keys::Dir(
            dir.to_path_buf(),
        ))),
        None => cx.store().keys(),
    }
}

/// The key and the remembered head, when there is a key store and they exist.
fn gate_keys(cx: &Ctx) -> Result<Keys, Error> {
    let Some(keys) = key_store(cx) else {
        return Ok(Keys::default());
    };
    let key = keys.read(KEY_FILE)?;
    if key.as_ref().is_some_and(|k| k.len() != KEY_BYTES) {
        return Err(StoreError::Unavailable(format!(
            "the gates' key in {} is not {KEY_BYTES} bytes: restore it from a backup",
            keys.shown()
        ))
        .into());
    }
    let head = keys
        .read(HEAD_FILE)?
        .and_then(|b| Head::parse(&String::from_utf8_lossy(&b)));
    Ok(Keys { key, head })
}

/// The key, made (readable by the user alone, in a folder) when there is a key store and
/// none yet.
fn gate_key_or_new(cx: &Ctx) -> Result<Option<Vec<u8>>, Error> {
    let Some(keys) = key_store(cx) else {
        return Ok(None);
    };
    if let Some(k) = gate_keys(cx)?.key {
        return Ok(Some(k));
    }
    let key: [u8; KEY_BYTES] = random()?;
    if keys.create(KEY_FILE, &key)? {
        Ok(Some(key.to_vec()))
    } else {
        // Another process made it first: use theirs.
        Ok(gate_keys(cx)?.key)
    }
}

/// Records `head` in the key store too, when there is one.
fn remember_head(cx: &Ctx, head: &Head) -> Result<(), Error> {
    match key_store(cx) {
        Some(keys) => Ok(keys.replace(HEAD_FILE, head.render().as_bytes())?),
        None => Ok(()),
    }
}

fn entry(cx: &Ctx, event: Event, id: &str) -> LedgerEntry {
    LedgerEntry {
        seq: 0,
        time: String::new(),
        event,
        id: id.to_string(),
        kind: None,
        target: None,
        amount: None,
        decision: None,
        rule: None,
        token_sha256: None,
        expires: None,
        writer: String::new(),
        source: String::new(),
        reason: cx.reason().unwrap_or_default().to_string(),
        prev: String::new(),
        hash: String::new(),
    }
}

/// The policy, or the rule that denies everything while it is missing or broken.
fn gate_policy(cx: &Ctx) -> Result<Result<Policy, String>, Error> {
    match cx.store().read(&MemPath::parse(POLICY_FILE)?) {
        Ok(b) => Ok(Policy::parse(&String::from_utf8_lossy(&b)).map_err(|e| {
            format!("policy: {e}; every action is denied until the user fixes {POLICY_FILE}")
        })),
        Err(StoreError::NotFound(_)) => Ok(Err(format!(
            "policy: there is no {POLICY_FILE} at the memory root, so every action is denied; ask the user to write one"
        ))),
        Err(e) => Err(e.into()),
    }
}

fn new_id(cx: &Ctx, ledger: &Ledger) -> Result<String, Error> {
    loop {
        let r: [u8; 4] = random()?;
        let id = format!(
            "{}-{:08x}",
            cx.clock().now().strftime("%Y%m%d"),
            u32::from_be_bytes(r)
        );
        if !ledger.entries.iter().any(|e| e.id == id) {
            return Ok(id);
        }
    }
}

/// Asks the gate for `req` (the reason is this memory's reason, required). Records the
/// request and its decision in the ledger; never performs the action.
pub(crate) fn gate_request(cx: &Ctx, req: &Request) -> Result<Answer, Error> {
    let kind = one_line("the kind", &req.kind)?;
    let target = one_line("the target", &req.target)?;
    one_line("the reason (--reason)", cx.reason().unwrap_or_default())?;
    let req = Request {
        kind,
        target,
        amount: req.amount,
    };
    let tx = crate::change::begin_gate(cx, "gate request", LEDGER_DIR)?;
    let _lock = tx.lock(LockName::File(&MemPath::parse(LEDGER_DIR)?))?;
    let mut ledger = load_ledger(cx)?;
    if let Some(b) = &ledger.broken {
        return Ok(Answer::Denied {
            id: String::new(),
            rule: format!(
                "ledger: the ledger is not intact ({b}), so every action is denied; the user must run `memdir gate verify` and restore it"
            ),
        });
    }
    let now = cx.clock().now();
    let (decision, ttl_ms) = match gate_policy(cx)? {
        Err(rule) => (Decision::Denied { rule }, 0),
        Ok(policy) => {
            let past = requests(&ledger.entries);
            let d = decide(&policy, &req, &past, now.timestamp(), now.time_zone());
            let ttl = policy.kinds.get(&req.kind).map_or(0, |k| k.approval_ttl_ms);
            (d, ttl)
        }
    };
    let id = new_id(cx, &ledger)?;
    let tok = match decision {
        Decision::Denied { .. } => None,
        _ => Some(token(&id, &random()?)),
    };
    let expires = (decision == Decision::Allowed)
        .then(|| now.timestamp().checked_add(ttl_ms.milliseconds()).ok())
        .flatten()
        .map(|t| t.to_string());
    let mut e = entry(cx, Event::Request, &id);
    e.kind = Some(req.kind.clone());
    e.target = Some(req.target.clone());
    e.amount = req.amount.map(|a| a.to_string());
    e.decision = Some(decision.as_str().to_string());
    e.token_sha256 = tok.as_deref().map(|t| sha256_hex(t.as_bytes()));
    e.expires = expires.clone();
    if let Decision::Denied { rule } = &decision {
        e.rule = Some(rule.clone());
    }
    if decision == Decision::Pending
        && let Some(t) = &tok
    {
        tx.write_meta(&format!("gate-{id}.token"), t.as_bytes())?;
    }
    append_entry(&tx, &mut ledger, e)?;
    drop(_lock);
    tx.commit()?;
    Ok(match decision {
        Decision::Allowed => Answer::Allowed {
            id,
            token: tok.unwrap_or_default(),
            expires: expires.unwrap_or_default(),
        },
        Decision::Denied { rule } => Answer::Denied { id, rule },
        Decision::Pending => Answer::Pending { id },
    })
}

fn find(ledger: &Ledger, id: &str) -> Result<RequestState, Error> {
    requests(&ledger.entries)
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| {
            Error::NotFound(format!(
                "no gate request {id:?}: list the waiting ones with `memdir gate pending`"
            ))
        })
}

/// Where a request stands, in the shape of its first answer: pending while it waits,
/// allowed with its token once a person approved it, denied once denied, used or expired.
pub(crate) fn gate_status(cx: &Ctx, id: &str) -> Result<Answer, Error> {
    let ledger = load_ledger(cx)?;
    let r = find(&ledger, id)?;
    let now = cx.clock().now().timestamp();
    let denied = |rule: String| Answer::Denied {
        id: id.to_string(),
        rule,
    };
    if r.decision == "denied" {
        return Ok(denied(r.rule.clone().unwrap_or_default()));
    }
    if let Some(why) = &r.denied {
        return Ok(denied(format!(
            "denied: a person denied request {id}: {why}"
        )));
    }
    if let Some(at) = &r.used {
        return Ok(denied(format!(
            "used: the token of request {id} was used at {at}; make a new request for another action"
        )));
    }
    if r.is_pending() {
        return Ok(Answer::Pending { id: id.to_string() });
    }
    if r.expires.is_none_or(|e| e <= now) {
        return Ok(denied(format!(
            "approval_ttl: the token of request {id} expired; make a new request"
        )));
    }
    if r.decision == "allowed" {
        return Err(Error::Invalid(format!(
            "request {id} was allowed at once: its token was in that answer and is not kept; make a new request if it is lost"
        )));
    }
    let token = cx
        .store()
        .read_meta(&format!("gate-{id}.token"))?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .ok_or_else(|| {
            Error::NotFound(format!(
                "the token of approved request {id} is missing from .memdir/: make a new request"
            ))
        })?;
    Ok(Answer::Allowed {
        id: id.to_string(),
        token,
        expires: r.expires.map(|e| e.to_string()).unwrap_or_default(),
    })
}

/// The executor's check: `Ok` exactly once for a token issued for this kind, target and
/// amount, while it is valid; the use is recorded. Every refusal is recorded too.
pub(crate) fn gate_check(cx: &Ctx, presented: &str, req: &Request) -> Result<RequestState, Error> {
    let tx = crate::change::begin_gate(cx, "gate check", LEDGER_DIR)?;
    let lock = tx.lock(LockName::File(&MemPath::parse(LEDGER_DIR)?))?;
    let mut ledger = load_ledger(cx)?;
    if let Some(b) = &ledger.broken {
        return Err(Error::Invalid(format!(
            "ledger: the ledger is not intact ({b}): no token is honoured until the user runs `memdir gate verify` and restores it"
        )));
    }
    let now = cx.clock().now().timestamp();
    let found = token_id(presented)
        .and_then(|id| requests(&ledger.entries).into_iter().find(|r| r.id == id));
    let verdict = match &found {
        None => Err((
            String::new(),
            "token: this is not a token memdir issued (foreign or altered): refused".to_string(),
        )),
        Some(r) => {
            let id = r.id.clone();
            let shown = |q: &Request| {
                format!(
                    "{} to {}{}",
                    q.kind,
                    q.target,
                    q.amount.map(|a| format!(" of {a}")).unwrap_or_default()
                )
            };
            if r.token_sha256.as_deref() != Some(sha256_hex(presented.trim().as_bytes()).as_str()) {
                Err((
                    id,
                    "token: this token does not match its request (altered or foreign): refused"
                        .to_string(),
                ))
            } else if let Some(at) = &r.used {
                Err((
                    id,
                    format!(
                        "used: this token was already used at {at}: tokens are single-use; make a new request"
                    ),
                ))
            } else if r.decision == "denied" || r.denied.is_some() {
                Err((id, format!("denied: request {} was denied: refused", r.id)))
            } else if r.is_pending() {
                Err((
                    id,
                    format!(
                        "pending: request {} still waits for a person's approval: refused",
                        r.id
                    ),
                ))
            } else if r.expires.is_none_or(|e| e <= now) {
                Err((
                    id,
                    format!(
                        "approval_ttl: this token expired at {}: make a new request",
                        r.expires.map(|e| e.to_string()).unwrap_or_default()
                    ),
                ))
            } else if r.request.kind != req.kind
                || r.request.target != req.target
                || r.request.amount != req.amount
            {
                Err((
                    id,
                    format!(
                        "mismatch: this token is for {}, not {}: refused",
                        shown(&r.request),
                        shown(req)
                    ),
                ))
            } else {
                Ok(r.clone())
            }
        }
    };
    let result = match verdict {
        Ok(r) => {
            let e = entry(cx, Event::Use, &r.id);
            append_entry(&tx, &mut ledger, e)?;
            Ok(r)
        }
        Err((id, rule)) => {
            let mut e = entry(cx, Event::Refused, &id);
            e.rule = Some(format!("check {rule}"));
            append_entry(&tx, &mut ledger, e)?;
            Err(Error::Invalid(rule))
        }
    };
    drop(lock);
    tx.commit()?;
    result
}

/// How long the token an approval of a `kind` request hands out stays valid, in milliseconds
/// (the kind's `approval_ttl`); `None` when the policy is missing, does not parse or has no
/// table for the kind (then an approval is refused).
pub(crate) fn gate_approval_ttl(cx: &Ctx, kind: &str) -> Result<Option<i64>, Error> {
    Ok(gate_policy(cx)?
        .ok()
        .and_then(|p| p.kinds.get(kind).map(|k| k.approval_ttl_ms)))
}

/// Requests that wait for a person, oldest first.
pub(crate) fn gate_pending(cx: &Ctx) -> Result<Vec<RequestState>, Error> {
    let ledger = load_ledger(cx)?;
    Ok(requests(&ledger.entries)
        .into_iter()
        .filter(RequestState::is_pending)
        .collect())
}

/// A person approves or denies a pending request. Only the user, at a terminal or signed in
/// to the page, may: any other attempt is refused and recorded in the ledger.
pub(crate) fn gate_decide(
    cx: &Ctx,
    id: &str,
    verdict: Verdict,
    presence: Presence,
) -> Result<RequestState, Error> {
    if !is_id(id) {
        return Err(Error::Invalid(format!(
            "{id:?} is not a gate request id (like 20261201-0a1b2c3d): list them with `memdir gate pending`"
        )));
    }
    let tx = crate::change::begin_gate(cx, "gate decide", LEDGER_DIR)?;
    let lock = tx.lock(LockName::File(&MemPath::parse(LEDGER_DIR)?))?;
    let mut ledger = load_ledger(cx)?;
    if let Some(b) = &ledger.broken {
        return Err(Error::Invalid(format!(
            "ledger: the ledger is not intact ({b}): run `memdir gate verify` and restore it first"
        )));
    }
    let word = match verdict {
        Verdict::Approve => "approve",
        Verdict::Deny => "deny",
    };
    let source = cx.actor().source;
    if source != Source::User || presence == Presence::Unattended {
        let rule = format!(
            "{word}: only a person at a terminal may {word} a gate request (this came from source {}{}): refused and recorded",
            source.as_str(),
            if presence == Presence::Unattended {
                " without a terminal"
            } else {
                ""
            }
        );
        let mut e = entry(cx, Event::Refused, id);
        e.rule = Some(rule.clone());
        append_entry(&tx, &mut ledger, e)?;
        drop(lock);
        tx.commit()?;
        return Err(Error::Invalid(rule));
    }
    let r = find(&ledger, id)?;
    if !r.is_pending() {
        return Err(Error::Invalid(format!(
            "request {id} is not waiting for approval (it was {}{})",
            r.decision,
            if r.approved {
                ", then approved"
            } else if r.denied.is_some() {
                ", then denied"
            } else {
                ""
            }
        )));
    }
    let mut e = entry(
        cx,
        match verdict {
            Verdict::Approve => Event::Approve,
            Verdict::Deny => Event::Deny,
        },
        id,
    );
    if verdict == Verdict::Approve {
        let ttl = match gate_policy(cx)? {
            Ok(p) => p
                .kinds
                .get(&r.request.kind)
                .map(|k| k.approval_ttl_ms)
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "{POLICY_FILE} no longer has a [{}] table: deny this request instead",
                        r.request.kind
                    ))
                })?,
            Err(rule) => return Err(Error::Invalid(rule)),
        };
        e.expires = cx
            .clock()
            .now()
            .timestamp()
            .checked_add(ttl.milliseconds())
            .ok()
            .map(|t| t.to_string());
    }
    append_entry(&tx, &mut ledger, e)?;
    drop(lock);
    tx.commit()?;
    find(&ledger, id)
}

/// Checks the whole ledger: every line's hash, the chain of `prev` hashes, consecutive
/// numbers, and the end against the head memdir recorded. The error says where it breaks.
pub(crate) fn gate_verify(cx: &Ctx) -> Result<VerifyReport, Error> {
    let ledger = load_ledger(cx)?;
    if let Some(b) = ledger.broken {
        return Err(Error::Invalid(format!("ledger not intact: {b}")));
    }
    Ok(VerifyReport {
        entries: ledger.entries.len(),
        files: ledger.files,
    })
}

/// One context line listing the requests that wait for a person, if any.
pub(crate) fn gate_context(cx: &Ctx) -> Result<Option<Section>, Error> {
    let ledger = load_ledger(cx)?;
    let line = if let Some(b) = &ledger.broken {
        format!(
            "Gates: the ledger is not intact ({b}); every action is denied until the user runs `memdir gate verify` and restores it."
        )
    } else {
        let waiting: Vec<String> = requests(&ledger.entries)
            .into_iter()
            .filter(RequestState::is_pending)
            .map(|r| format!("{} {}", r.id, r.request))
            .collect();
        if waiting.is_empty() {
            return Ok(None);
        }
        format!(
            "Gates: {} request(s) wait for a person's approval (`memdir gate pending`): {}.",
            waiting.len(),
            waiting.join("; ")
        )
    };
    Ok(Some(Section::new("gates", "", None, line)))
}
