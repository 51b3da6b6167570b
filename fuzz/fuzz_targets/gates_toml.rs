//! `gates.toml`: any mistake is an error naming a line of the file, never a panic or a policy
//! that silently allows; a policy that loads has exactly the file's kinds and decides any
//! request without panicking, never allowing an amount over a kind's `max_amount`. Amounts read
//! back from how they are shown.
#![no_main]

//!
//! Input: `gates.toml`'s text; after NULs, a request's kind, target and amount.
use libfuzzer_sys::fuzz_target;
use memdir_core::gates::{Amount, Decision, Policy, Request, decide};

struct Input<'a> {
    policy: &'a str,
    kind: &'a str,
    target: &'a str,
    amount: &'a str,
    now_s: u32,
}

fuzz_target!(|data: &[u8]| {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    let mut f = all.split('\0');
    let mut next = || f.next().unwrap_or_default();
    let input = Input {
        policy: next(),
        kind: next(),
        target: next(),
        amount: next(),
        now_s: data.len() as u32 * 86_400,
    };
    if let Ok(a) = input.amount.parse::<Amount>() {
        assert_eq!(
            a.to_string().parse::<Amount>(),
            Ok(a),
            "{:?} -> {a}",
            input.amount
        );
    }
    let text = input.policy;
    let policy = match Policy::parse(text) {
        Err(e) => {
            let lines = text.lines().count().max(1) + 1;
            assert!(
                e.line >= 1 && e.line <= lines,
                "line {} of {lines}: {e}",
                e.line
            );
            assert!(!e.message.trim().is_empty(), "{e:?}");
            return;
        }
        Ok(p) => p,
    };
    let table: toml::Table = toml::from_str(text).expect("it loaded, so it is TOML");
    let names: Vec<&String> = table.keys().collect();
    let kinds: Vec<&String> = policy.kinds.keys().collect();
    assert_eq!(names, kinds, "exactly the file's kinds");

    let req = Request {
        kind: input.kind.to_string(),
        target: input.target.to_string(),
        amount: input.amount.parse().ok(),
    };
    let now = jiff::Timestamp::from_second(i64::from(input.now_s)).expect("in range");
    let d = decide(&policy, &req, &[], now, &jiff::tz::TimeZone::UTC);
    match (&d, policy.kinds.get(&req.kind)) {
        (Decision::Allowed | Decision::Pending, None) => panic!("unknown kind allowed: {req}"),
        (Decision::Allowed | Decision::Pending, Some(k)) => {
            if let (Some(max), Some(a)) = (k.max_amount, req.amount) {
                assert!(a <= max, "{req} over max {max}");
            }
            for cap in [k.daily_amount, k.weekly_amount].into_iter().flatten() {
                assert!(
                    req.amount.unwrap_or_default() <= cap,
                    "{req} over a cap of {cap}"
                );
            }
            assert!(k.allows_target(&req.target));
        }
        (Decision::Denied { rule }, _) => assert!(!rule.is_empty()),
    }
});
