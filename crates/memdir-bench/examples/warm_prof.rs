#![allow(missing_docs, clippy::unwrap_used)]
use memdir::search::SearchRequest;
use memdir::{Clock, Memory};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mem = Memory::open(
        std::path::Path::new(&args[1]),
        Clock::system(jiff::tz::TimeZone::UTC),
    )
    .unwrap()
    .with_warm_search();
    let n: usize = args[3].parse().unwrap();
    let mut req = SearchRequest::new(args[2].clone());
    req.max_bytes = Some(4000);
    mem.search(&req).unwrap();
    let mut t = Vec::new();
    for _ in 0..n {
        let t0 = Instant::now();
        mem.search(&req).unwrap();
        t.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "p50 {:.2} ms p10 {:.2} p90 {:.2}",
        t[n / 2],
        t[n / 10],
        t[n * 9 / 10]
    );
}
