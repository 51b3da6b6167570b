//! `memdir index`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir::Memory;
use std::io::IsTerminal as _;

/// Regenerate the note index, MEMORY.md, from every note's frontmatter. Writes through memdir
/// keep it current; run this after editing notes by hand. (The search indexes in .memdir/ are
/// rebuilt by `memdir reindex`.)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memdir index\n  memdir index --json | jq .unlisted\n  memdir reindex    # the search indexes, not MEMORY.md"
)]
pub struct Args {
    /// Print JSON: listed, unlisted, size, cap, changed.
    #[arg(long)]
    pub json: bool,

    /// The old spelling of `memdir reindex`, kept working.
    #[command(subcommand)]
    pub action: Option<Action>,
}

/// The old form `memdir index rebuild`, now `memdir reindex`.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// The old spelling of `memdir reindex`: rebuild the search indexes, not MEMORY.md
    #[command(hide = true)]
    Rebuild,
}

/// A progress bar on stderr for embedding `total` chunks, hidden when stderr is not a terminal
/// or the job is small.
pub fn progress_bar() -> impl Fn(u64, u64) {
    let bar = std::cell::OnceCell::new();
    move |done: u64, total: u64| {
        if total < 64 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = bar.get_or_init(|| {
            let b = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "embedding {bar:30} {pos}/{len} chunks, {per_sec}, eta {eta}",
            ) {
                b.set_style(style);
            }
            b
        });
        bar.set_position(done);
        if done >= total {
            bar.finish_and_clear();
        }
    }
}

/// Builds a new vector index from every file and swaps it in, with a progress bar.
pub fn rebuild_vectors(mem: &Memory) -> Result<memdir::search::VectorStats, CliError> {
    Ok(mem.rebuild_vector_index(&progress_bar())?)
}

/// Rebuilds the keyword index and, when an embedder is configured, the vector index, from the
/// files: what `memdir reindex` (and the old `memdir index rebuild`) does.
pub fn rebuild_search_indexes(json: bool, env: &Env) -> CliResult {
    let mem = env.open()?;
    let files = mem.rebuild_search_index()?;
    let vectors = if mem.has_embedder() {
        env.embed_config(&mem)?;
        Some(rebuild_vectors(&mem)?)
    } else {
        None
    };
    if json {
        return out_json(&serde_json::json!({ "keyword_files": files, "vectors": vectors }));
    }
    let mut text = format!("rebuilt the keyword index: {files} files\n");
    match vectors {
        Some(v) => text.push_str(&format!(
            "rebuilt the vector index: {} chunks from {} files\n",
            v.chunks_total, v.files_embedded
        )),
        None => text.push_str(
            "no vector index: no embedder configured ([embed] in .memdir/config.toml or MEMDIR_MODEL_DIR)\n",
        ),
    }
    out(&text)
}

/// Runs `index`.
pub fn run(a: Args, env: &Env) -> CliResult {
    if let Some(Action::Rebuild) = a.action {
        eprintln!(
            "memdir: note: `memdir index rebuild` is now `memdir reindex` (`memdir index` regenerates MEMORY.md)"
        );
        return rebuild_search_indexes(a.json, env);
    }
    let report = env.open()?.regenerate_index()?;
    if a.json {
        return out_json(&report);
    }
    let mut text = String::new();
    for p in &report.unlisted {
        text.push_str(&format!(
            "not listed: {p} (no valid frontmatter with a name and a description)\n"
        ));
    }
    text.push_str(&format!(
        "{} {}: {} notes, {} lines, {} bytes (cap {} lines, {} bytes)\n",
        if report.changed { "wrote" } else { "unchanged" },
        report.path,
        report.listed,
        report.size.lines,
        report.size.bytes,
        report.cap.max_lines,
        report.cap.max_bytes
    ));
    if report.size.lines > report.cap.max_lines || report.size.bytes > report.cap.max_bytes {
        text.push_str(&format!(
            "{} is over its cap: context loads only what fits; merge or archive notes (see `memdir lint`)\n",
            report.path
        ));
    }
    out(&text)
}
