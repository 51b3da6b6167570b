//! The gates' caps as a property: for any sequence of requests, approvals, denials, checks and
//! clock moves, what was allowed (at once or by approval) in any local day or week never sums
//! past the cap, and no token is used twice. The oracle is the test's own record of the
//! answers, not the ledger the engine reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use jiff::Timestamp;
use jiff::tz::TimeZone;
use memdir::gates::{Answer, Presence, Verdict};
use memdir::{Clock, Memory};
use memdir_core::gates::{Amount, Request};
use proptest::prelude::*;
use std::collections::HashMap;

const POLICY: &str = "[payment]\ntargets = [\"acme-*\", \"landlord\"]\nmax_amount = 100\ndaily_amount = 150\nweekly_amount = 400\ndaily_count = 5\napproval_above = 50\napproval_ttl = \"2h\"\n";

#[derive(Debug, Clone)]
enum Op {
    Request { amount: u32, target: usize },
    Approve(usize),
    Deny(usize),
    Check(usize),
    Wait(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u32..=120, 0usize..3).prop_map(|(amount, target)| Op::Request { amount, target }),
        2 => any::<usize>().prop_map(Op::Approve),
        1 => any::<usize>().prop_map(Op::Deny),
        2 => any::<usize>().prop_map(Op::Check),
        2 => (1i64..=900).prop_map(Op::Wait),
    ]
}

struct Made {
    time: Timestamp,
    amount: u32,
    req: Request,
    id: String,
    token: Option<String>,
    allowed: bool,
    pending: bool,
    used: bool,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn allowed_amounts_never_pass_the_caps(ops in prop::collection::vec(op(), 1..60)) {
        let dir = tempfile::tempdir().unwrap();
        // Five hours west of UTC, so local days and UTC days differ.
        let tz = TimeZone::fixed(jiff::tz::offset(-5));
        let mut now: Timestamp = "2026-11-29T20:00:00Z".parse().unwrap();
        let open = |now: Timestamp| Memory::open(dir.path(), Clock::fixed(now, tz.clone())).unwrap().with_reason(Some("prop"));
        Memory::init_with(dir.path(), Clock::fixed(now, tz.clone()), false).unwrap();
        std::fs::write(dir.path().join("gates.toml"), POLICY).unwrap();
        let targets = ["landlord", "acme-x", "mallory"];
        let mut made: Vec<Made> = Vec::new();
        for op in ops {
            let mem = open(now);
            match op {
                Op::Request { amount, target } => {
                    let req = Request {
                        kind: "payment".into(),
                        target: targets[target].into(),
                        amount: Some(Amount::units(amount)),
                    };
                    let a = mem.gate_request(&req).unwrap();
                    let (id, token, allowed, pending) = match a {
                        Answer::Allowed { id, token, .. } => (id, Some(token), true, false),
                        Answer::Pending { id } => (id, None, false, true),
                        Answer::Denied { id, .. } => (id, None, false, false),
                    };
                    made.push(Made { time: now, amount, req, id, token, allowed, pending, used: false });
                }
                Op::Approve(k) | Op::Deny(k) => {
                    let waiting: Vec<usize> = (0..made.len()).filter(|i| made[*i].pending).collect();
                    if waiting.is_empty() {
                        continue;
                    }
                    let i = waiting[k % waiting.len()];
                    let verdict = if matches!(op, Op::Approve(_)) { Verdict::Approve } else { Verdict::Deny };
                    mem.gate_decide(&made[i].id, verdict, Presence::Terminal).unwrap();
                    made[i].pending = false;
                    if verdict == Verdict::Approve {
                        made[i].allowed = true;
                        match mem.gate_status(&made[i].id).unwrap() {
                            Answer::Allowed { token, .. } => made[i].token = Some(token),
                            other => prop_assert!(false, "approved but {other:?}"),
                        }
                    }
                }
                Op::Check(k) => {
                    let with_token: Vec<usize> = (0..made.len()).filter(|i| made[*i].token.is_some()).collect();
                    if with_token.is_empty() {
                        continue;
                    }
                    let i = with_token[k % with_token.len()];
                    let ok = mem.gate_check(made[i].token.as_deref().unwrap(), &made[i].req).is_ok();
                    prop_assert!(!(ok && made[i].used), "token of {} used twice", made[i].id);
                    made[i].used |= ok;
                }
                Op::Wait(minutes) => now = now.checked_add(jiff::SignedDuration::from_mins(minutes)).unwrap(),
            }
        }
        let mut day: HashMap<jiff::civil::Date, (u32, u32)> = HashMap::new();
        let mut week: HashMap<(i16, i8), u32> = HashMap::new();
        for m in made.iter().filter(|m| m.allowed) {
            prop_assert!(m.req.target != "mallory");
            prop_assert!(m.amount <= 100);
            let d = m.time.to_zoned_datetime(tz.clone()).date();
            let w = d.iso_week_date();
            let e = day.entry(d).or_default();
            e.0 += m.amount;
            e.1 += 1;
            *week.entry((w.year(), w.week())).or_default() += m.amount;
        }
        for (d, (sum, n)) in &day {
            prop_assert!(*sum <= 150, "{d}: {sum} allowed");
            prop_assert!(*n <= 5, "{d}: {n} requests allowed");
        }
        for (w, sum) in &week {
            prop_assert!(*sum <= 400, "{w:?}: {sum} allowed");
        }
        open(now).gate_verify().unwrap();
    }
}
