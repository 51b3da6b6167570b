//! What the guard adds to one write, in one process as the CLI runs it: the first scan (the
//! rules read and the woken rules compiled) and later scans, on realistic texts.
//! `cargo run --release -p memdir-secrets --example cost` (BENCHMARKS.md quotes it).
#![allow(clippy::unwrap_used)]

use std::time::Instant;

fn time(label: &str, text: &str, runs: u32) {
    let t = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(memdir_secrets::scan(text, Some("notes/x.md")));
    }
    let per = t.elapsed().as_secs_f64() * 1e6 / f64::from(runs);
    println!("{label:<48} {:>6} bytes {per:>10.1} µs", text.len());
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let entry = "chose PostgreSQL over SQLite: we need concurrent writers and the team knows it";
    let keyed = "rotated the deploy token for the staging api; the new one is in the vault";
    let note = format!(
        "---\nname: payment-retry-policy\ndescription: how payments are retried\ntype: decision\n---\n\n{}",
        "Retries back off exponentially from 2 s to 5 min; after 6 attempts the payment is \
         parked and the on-call gets a page. The api key for the processor lives in the vault \
         (path secret/payments), never in code. See [[incident-2026-11-03]].\n"
            .repeat(16)
    );
    // One cold measurement per process: the first scan pays for reading the rules and
    // compiling whichever rules its keywords wake.
    match which.as_str() {
        "load" => {
            let t = Instant::now();
            std::hint::black_box(memdir_secrets::rules());
            println!(
                "{:<48} {:>10.1} µs",
                "reading the rules",
                t.elapsed().as_secs_f64() * 1e6
            );
        }
        "cold-plain" => time("first scan, a log entry with no keyword", entry, 1),
        "cold-keyed" => time("first scan, a log entry naming token/api", keyed, 1),
        "cold-note" => time("first scan, a 4 KB note naming key/secret", &note, 1),
        _ => {
            time("first scan, a 4 KB note naming key/secret", &note, 1);
            time("later scans, a log entry with no keyword", entry, 2000);
            time("later scans, a log entry naming token/api", keyed, 2000);
            time("later scans, a 4 KB note naming key/secret", &note, 500);
        }
    }
}
