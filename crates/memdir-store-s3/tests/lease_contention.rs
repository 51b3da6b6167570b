//! Writers contending for one lease on a real S3-compatible server take it in about the order
//! they asked (issue 37, item 8). Before, a waiter looked again after a growing sleep while a
//! writer that had just arrived looked often, so the newcomer won each release: on a loaded
//! machine one append waited 61 s while later ones went ahead.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use memdir_core::path::MemPath;
use memdir_store::Store;
use memdir_store::store::{LockName, Locks};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WRITERS: usize = 6;
const ROUNDS: usize = 6;

/// One take of the lock: when it was asked for and in which order it was granted.
struct Take {
    asked: u64,
    granted: u64,
    waited: Duration,
}

#[test]
fn contending_writers_take_the_lease_in_turn() {
    let Some(bucket) = common::TestBucket::new() else {
        return;
    };
    drop(bucket.store("shared"));
    let stores: Vec<_> = (0..WRITERS).map(|_| bucket.store("shared")).collect();
    let asked = Arc::new(AtomicU64::new(0));
    let granted = Arc::new(AtomicU64::new(0));
    let takes = Arc::new(Mutex::new(Vec::new()));
    let log = MemPath::parse("log/2026-12-01.md").unwrap();
    let threads: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(w, s)| {
            let (asked, granted, takes, log) =
                (asked.clone(), granted.clone(), takes.clone(), log.clone());
            std::thread::spawn(move || {
                for round in 0..ROUNDS {
                    let start = Instant::now();
                    let ticket = asked.fetch_add(1, Ordering::SeqCst);
                    let guard = s.lock(LockName::Git).unwrap();
                    let order = granted.fetch_add(1, Ordering::SeqCst);
                    let waited = start.elapsed();
                    // A change's work under the lock.
                    s.append(
                        &log,
                        format!("- 09:00 writer {w} round {round}\n").as_bytes(),
                    )
                    .unwrap();
                    std::thread::sleep(Duration::from_millis(20));
                    drop(guard);
                    takes.lock().unwrap().push(Take {
                        asked: ticket,
                        granted: order,
                        waited,
                    });
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let takes = takes.lock().unwrap();
    assert_eq!(takes.len(), WRITERS * ROUNDS);
    // How many takes asked for later went ahead of each take.
    let overtaken: Vec<usize> = takes
        .iter()
        .map(|t| {
            takes
                .iter()
                .filter(|o| o.asked > t.asked && o.granted < t.granted)
                .count()
        })
        .collect();
    let most = overtaken.iter().copied().max().unwrap_or(0);
    let longest = takes.iter().map(|t| t.waited).max().unwrap_or_default();
    let total: Duration = takes.iter().map(|t| t.waited).sum();
    eprintln!(
        "{} takes by {WRITERS} writers: overtaken at most {most} times, {} times in all; longest wait {longest:?}, mean {:?}",
        takes.len(),
        overtaken.iter().sum::<usize>(),
        total / u32::try_from(takes.len()).unwrap()
    );
    // In turn, a take is overtaken only in the moment before its waiter claims the next turn
    // (measured: at most 2 to 7 times, 17 to 37 in all). Before, a waiter looking seldom lost
    // each release to the writers that had just arrived: 26 times, 79 to 84 in all.
    assert!(
        most < 2 * WRITERS,
        "a take was overtaken {most} times by takes asked for later"
    );
    let text = String::from_utf8(bucket.store("shared").read(&log).unwrap()).unwrap();
    assert_eq!(text.lines().count(), WRITERS * ROUNDS);
}
