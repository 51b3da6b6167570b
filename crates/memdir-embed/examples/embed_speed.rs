//! Measures a local model's throughput (a BERT encoder or a Model2Vec static model, by the
//! folder's config.json): `cargo run --release -p memdir-embed --example
//! embed_speed -- <model-dir> <text-file> [max-lines]` embeds the file's non-empty lines (as the
//! index would embed log lines) and prints chunks per second and single-query latency.
#![allow(clippy::print_stdout)]

use std::time::Instant;

use memdir_embed::{EmbedConfig, open};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(file)) = (args.get(1), args.get(2)) else {
        return Err("usage: embed_speed <model-dir> <text-file> [max-lines]".into());
    };
    let max: usize = args
        .get(3)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(usize::MAX);
    let text = std::fs::read_to_string(file)?;
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(max)
        .collect();
    let t = Instant::now();
    let model = open(&EmbedConfig::Local {
        model_dir: dir.into(),
    })?
    .ok_or("no model")?;
    println!(
        "load: {:.0} ms ({})",
        t.elapsed().as_secs_f64() * 1e3,
        model.model_id()
    );
    let t = Instant::now();
    let vectors = model.embed(&lines)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} chunks in {secs:.2} s: {:.0} chunks/s",
        vectors.len(),
        vectors.len() as f64 / secs
    );
    let mut times: Vec<f64> = lines
        .iter()
        .take(200)
        .map(|l| {
            let t = Instant::now();
            let _ = model.embed(&[&l[..l.len().min(80)]]);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    if !times.is_empty() {
        let p = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
        println!(
            "query (one text, <= 80 bytes): p50 {:.1} ms, p95 {:.1} ms",
            p(0.5),
            p(0.95)
        );
    }
    Ok(())
}
