//! The gate ledger (`gates/ledger/YYYY-MM-DD.jsonl`, a hash chain): verifying never panics on
//! any bytes; a chain memdir sealed verifies intact and gives back its entries; and a ledger
//! with any one byte changed is never reported intact (the edited line fails its hash, or a
//! later line's `prev`, or the head memdir recorded).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use memdir_core::gates::{
    Event, GENESIS, Head, HeadCheck, LedgerEntry, check_head, read_chain, seal,
};

#[derive(Arbitrary, Debug)]
struct Line {
    event: u8,
    id: String,
    kind: Option<String>,
    target: Option<String>,
    amount: Option<String>,
    writer: String,
    reason: String,
}

#[derive(Arbitrary, Debug)]
struct Input {
    raw: Vec<u8>,
    lines: Vec<Line>,
    split: u8,
    at: u32,
    byte: u8,
}

fuzz_target!(|input: Input| {
    // Any bytes as one day file and as two: no panic, and a break names a real line.
    if let Ok(text) = std::str::from_utf8(&input.raw) {
        let files = [(
            "gates/ledger/2026-11-30.jsonl".to_string(),
            text.to_string(),
        )];
        match read_chain(&files) {
            Ok(entries) => {
                let head = entries.last().map(|e| Head {
                    seq: e.seq,
                    hash: e.hash.clone(),
                    seal: None,
                });
                let _ = check_head(
                    &entries,
                    HeadCheck {
                        head: head.as_ref(),
                        key: None,
                        remembered: None,
                    },
                );
            }
            Err(b) => assert!(b.line <= text.lines().count().max(1), "{b}"),
        }
        let h = Head {
            seq: u64::MAX,
            hash: "x".into(),
            seal: None,
        };
        let _ = check_head(
            &[],
            HeadCheck {
                head: Some(&h),
                key: None,
                remembered: Some(&h),
            },
        );
    }

    // A chain memdir seals.
    let mut prev = GENESIS.to_string();
    let mut sealed = Vec::new();
    for (i, l) in input.lines.iter().take(8).enumerate() {
        let event = [
            Event::Request,
            Event::Approve,
            Event::Deny,
            Event::Use,
            Event::Refused,
        ][usize::from(l.event) % 5];
        let mut e = LedgerEntry {
            seq: i as u64 + 1,
            time: "2026-11-30T09:00:00Z".into(),
            event,
            id: l.id.clone(),
            kind: l.kind.clone(),
            target: l.target.clone(),
            amount: l.amount.clone(),
            decision: None,
            rule: None,
            token_sha256: None,
            expires: None,
            writer: l.writer.clone(),
            source: "agent".into(),
            reason: l.reason.clone(),
            prev: prev.clone(),
            hash: String::new(),
        };
        let line = e.seal();
        prev = e.hash.clone();
        sealed.push((line, e));
    }
    if sealed.is_empty() {
        return;
    }
    let cut = usize::from(input.split) % (sealed.len() + 1);
    let day = |lines: &[(String, LedgerEntry)]| -> String {
        lines.iter().map(|(l, _)| l.as_str()).collect()
    };
    let files = vec![
        (
            "gates/ledger/2026-11-29.jsonl".to_string(),
            day(&sealed[..cut]),
        ),
        (
            "gates/ledger/2026-11-30.jsonl".to_string(),
            day(&sealed[cut..]),
        ),
    ];
    let entries = read_chain(&files).expect("a sealed chain verifies");
    let want: Vec<&LedgerEntry> = sealed.iter().map(|(_, e)| e).collect();
    assert_eq!(entries.iter().collect::<Vec<_>>(), want);
    let last = entries.last().expect("not empty");
    let key = b"fuzz key";
    let head = Head {
        seq: last.seq,
        hash: last.hash.clone(),
        seal: Some(seal(key, last.seq, &last.hash)),
    };
    let check = HeadCheck {
        head: Some(&head),
        key: Some(key),
        remembered: Some(&head),
    };
    check_head(&entries, check).expect("the head matches");

    // One byte changed anywhere: never intact.
    let total: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mut at = input.at as usize % total;
    let mut edited = files.clone();
    for (_, text) in &mut edited {
        if at < text.len() {
            let mut bytes = text.clone().into_bytes();
            if bytes[at] == input.byte {
                return;
            }
            bytes[at] = input.byte;
            match String::from_utf8(bytes) {
                Ok(t) => *text = t,
                // Not UTF-8: memdir refuses the file before it reads a line.
                Err(_) => return,
            }
            break;
        }
        at -= text.len();
    }
    let intact = read_chain(&edited)
        .ok()
        .is_some_and(|e| check_head(&e, check).is_ok());
    assert!(!intact, "an edited ledger verified intact: {edited:?}");
});
