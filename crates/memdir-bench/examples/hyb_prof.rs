#![allow(missing_docs, clippy::unwrap_used)]
use memdir::search::{Mode, SearchRequest};
use memdir::{Clock, Memory};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mem = Memory::open(
        std::path::Path::new(&args[1]),
        Clock::system(jiff::tz::TimeZone::UTC),
    )
    .unwrap()
    .with_embed_config(memdir::embed::EmbedConfig::Local {
        model_dir: std::env::var("MEMDIR_MODEL_DIR").unwrap().into(),
    });
    let mode = match args[2].as_str() {
        "h" => Mode::Hybrid,
        "s" => Mode::Semantic,
        _ => Mode::Ranked,
    };
    let qs = [
        "What did Caroline research?",
        "When did Melanie paint a sunrise?",
        "What fields would Caroline be likely to pursue in her educaton?",
        "How long has Caroline had her current group of friends for?",
    ];
    let mut t = Vec::new();
    for i in 0..200 {
        let mut r = SearchRequest::new(qs[i % 4]);
        r.mode = mode;
        r.limit = Some(10);
        let t0 = Instant::now();
        mem.search(&r).unwrap();
        t.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("p50 {:.2} ms p10 {:.2} p90 {:.2}", t[100], t[20], t[180]);
}
