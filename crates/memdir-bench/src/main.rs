//! `memdir-bench`: benchmarks that are too heavy for `cargo test`.
//!
//! ```text
//! cargo run -p memdir-bench --release -- locomo [--data PATH]
//! cargo build --release -p memdir-cli -p memdir-bench && target/release/memdir-bench speed
//! cargo build --release -p memdir-cli -p memdir-bench && target/release/memdir-bench crash --trials 1000
//! cargo run -p memdir-bench --release -- stores --s3 http://127.0.0.1:5055 [--pg URL]
//! cargo build --release -p memdir-cli -p memdir-bench && target/release/memdir-bench service --seconds 60
//! cargo build --release -p memdir-cli -p memdir-bench && target/release/memdir-bench tenants --tenants 10000
//! cargo run -p memdir-bench --release -- git [--files 2400,100000] [--changes 30]
//! MEMDIR_MODEL_DIR=... cargo run -p memdir-bench --release -- recall [--data PATH] [--diff]
//! ```

mod crash;
mod forget_crash;
mod git;
mod locomo;
mod page;
mod recall;
mod service;
mod speed;
mod stores;
mod tenants;

use clap::{Parser, Subcommand};

/// memdir's benchmarks.
#[derive(Debug, Parser)]
#[command(name = "memdir-bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Retrieval quality on LoCoMo: hit@5, hit@10, all-evidence@10 and MRR per category.
    Locomo(locomo::Args),
    /// Search speed on a generated year of memory, side by side with grep and rg.
    Speed(speed::Args),
    /// SIGKILL memdir at random points of every kind of write; check nothing tears or is lost.
    Crash(crash::Args),
    /// SIGKILL `memdir forget` at random points; history is the old or the new, never broken.
    ForgetCrash(forget_crash::Args),
    /// Per-operation latency on a folder, S3 (and PostgreSQL), and the S3 search cache.
    Stores(stores::Args),
    /// Load on the multi-tenant service: two instances on one PostgreSQL, many clients.
    Service(service::Args),
    /// Scale: N tenants made through the store API, two instances, a bounded client over A
    /// active ones; bytes, statements and CPU per request, p50/p99 per operation (issue 35).
    Tenants(tenants::Args),
    /// Git commit overhead per change at 2,400 and 100,000 files: whole tree against touched paths.
    Git(git::Args),
    /// Recall per prompt (the user-prompt hook) against search --limit 5 on LoCoMo, and on 50
    /// unrelated prompts.
    Recall(recall::Args),
    /// The person's page on a year of memory: each view's time (p50, p95) and HTML size.
    Page(page::Args),
}

/// The memdir binary a bench runs: `given`, else the one beside this program.
pub(crate) fn memdir_bin(given: Option<std::path::PathBuf>) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context as _;
    let memdir = match given {
        Some(p) => p,
        None => std::env::current_exe()?
            .parent()
            .context("no folder for this program")?
            .join("memdir"),
    };
    anyhow::ensure!(
        memdir.exists(),
        "{} is missing: build it with cargo build --release -p memdir-cli, or pass --memdir",
        memdir.display()
    );
    Ok(memdir)
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Locomo(a) => locomo::run(a),
        Command::Speed(a) => speed::run(a),
        Command::Crash(a) => crash::run(a),
        Command::ForgetCrash(a) => forget_crash::run(a),
        Command::Stores(a) => stores::run(a),
        Command::Service(a) => service::run(a),
        Command::Tenants(a) => tenants::run(a),
        Command::Git(a) => git::run(a),
        Command::Page(a) => page::run(a),
        Command::Recall(a) => recall::run(a),
    }
}
