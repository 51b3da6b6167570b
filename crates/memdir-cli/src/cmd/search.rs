//! `memdir search`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit};
use jiff::civil::Date;
use memdir::search::{HitRef, Mode, SearchOutcome, SearchRequest};
use memdir_core::text::escape_for_terminal;
use serde::Serialize;
use std::io::IsTerminal as _;
use std::io::{self, Write};

const AFTER_HELP: &str = "\
Examples:
  memdir search 'price ($5)'                 literal, case-insensitive
  memdir search -- --help                    a pattern that starts with '-' (after --)
  memdir search --regex 'deploy(ed)? to (prod|staging)'
  memdir search -C 2 --since 2026-11-01 --path log postgres
  memdir search --mode ranked --since 'last week' 'what did we deploy'
  memdir search --mode ranked 'why did we pick postgres'
  MEMDIR_MODEL_DIR=~/models/all-MiniLM-L6-v2 memdir search --mode hybrid 'where do I live'
  memdir search --json --limit 5 postgres | jq .path
  memdir search --mode ranked '\"retry queue\" -refund type:project tag:billing'
  memdir search --mode ranked --files 'payment retries'   one line per file, and the total

Grep output is path:line:text (context lines path-line-text, groups split by --), files in path
order, so daily logs come in date order. Ranked output is best first, with the score and date.
Semantic (meaning, by embedding) and hybrid (words and meaning) need an embedder: [embed] in
.memdir/config.toml or MEMDIR_MODEL_DIR; their vector index lives in .memdir/vectors.sqlite and
is brought up to date before each search (`memdir reindex` after changing the model).
In ranked mode (and the keyword half of hybrid) \"a quoted phrase\" must appear in that order,
-word leaves out lines with the word, and type:VALUE, tag:VALUE and name:VALUE keep only notes
whose frontmatter says so (a filter alone lists those notes). --files shows each file once, by
its best line, and ends with how many files matched.
--since/--until filter dated files (log/, archive/) by the date in their name; other files stay.
A date is YYYY-MM-DD or relative to today: today, yesterday, 7d, 2w, last week, last month.
A pattern that starts with '-' works when it is not one of the options above; after -- always.
Exit codes: 0 found, 1 nothing found (no output), 2 bad input (bad regex, glob or date).";

/// Search memory: exact lines (grep, the default) or the best lines for a question (ranked).
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// What to look for: literal text (grep), a regex (--regex) or words (--mode ranked).
    #[arg(allow_hyphen_values = true)]
    pub pattern: String,

    /// grep: lines containing the pattern, in path order; ranked: best lines by BM25;
    /// semantic: closest in meaning (embeddings); hybrid: ranked and semantic merged.
    #[arg(long, default_value = "grep", value_parser = parse_mode)]
    pub mode: Mode,

    /// Treat the pattern as a regular expression (grep mode).
    #[arg(long)]
    pub regex: bool,

    /// Match case exactly (grep mode).
    #[arg(short = 's', long = "case-sensitive")]
    pub case_sensitive: bool,

    /// Show N lines of context around each match (grep mode).
    #[arg(short = 'C', long = "context", value_name = "N", default_value_t = 0)]
    pub context: usize,

    /// Print at most N result lines (context lines count) [default: unlimited; ranked 10].
    #[arg(long, value_name = "N", value_parser = crate::cmd::positive)]
    pub limit: Option<usize>,

    /// Leave out dated files before this day: YYYY-MM-DD, today, yesterday, 7d, 2w, last week,
    /// last month.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    /// Leave out dated files after this day (the same forms as --since).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,

    /// Only files whose path matches this glob, e.g. 'notes/**', '*.md' or a folder name.
    #[arg(long = "path", value_name = "GLOB")]
    pub path_glob: Option<String>,

    /// Stop once the output would pass N bytes and say how many matches were left out.
    #[arg(long, value_name = "N", value_parser = crate::cmd::positive)]
    pub max_bytes: Option<usize>,

    /// Print one JSON object per result line: {"path","line","text"} plus "score", "date".
    #[arg(long)]
    pub json: bool,

    /// Ranked modes: one result per file (its best line), --limit counting files, then the
    /// number of files that matched.
    #[arg(long)]
    pub files: bool,

    /// Rebuild the index this mode searches from the files first: the keyword index (ranked,
    /// hybrid) and the vector index (semantic, hybrid). Never needed for correctness; it repairs
    /// an index damaged in a way its checks cannot see.
    #[arg(long)]
    pub reindex: bool,
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse::<Mode>().map_err(|e| e.to_string())
}

#[derive(Serialize)]
struct JsonHit<'a> {
    path: &'a str,
    line: u64,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    context: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    external: bool,
}

/// Writes the external lines gathered in `run` inside one untrusted block, as the context
/// fences them (defused, so a line cannot close the block), and empties it.
fn write_fenced(o: &mut impl Write, run: &mut Vec<u8>) -> io::Result<()> {
    if run.is_empty() {
        return Ok(());
    }
    let fenced = memdir_core::context::fence_untrusted(&String::from_utf8_lossy(run));
    run.clear();
    o.write_all(fenced.as_bytes())
}

/// Writes one result line: `path:line:text` (context lines `path-line-text`, groups split by
/// `--`), with the score and date for ranked modes; or one JSON object.
/// Writes one hit; on a terminal (`tty`), control characters in it are shown escaped.
fn write_hit(
    o: &mut impl Write,
    h: &HitRef<'_>,
    json: bool,
    gap: bool,
    tty: bool,
) -> io::Result<()> {
    if json {
        serde_json::to_writer(
            &mut *o,
            &JsonHit {
                path: h.path,
                line: h.line,
                text: h.text,
                score: h.score.map(|s| (s * 1000.0).round() / 1000.0),
                date: h.date,
                context: h.is_context,
                external: h.external,
            },
        )?;
        return o.write_all(b"\n");
    }
    if gap {
        o.write_all(b"--\n")?;
    }
    let sep = if h.is_context { '-' } else { ':' };
    let (path, text) = if tty {
        (escape_for_terminal(h.path), escape_for_terminal(h.text))
    } else {
        (h.path.into(), h.text.into())
    };
    write!(o, "{path}{sep}{}{sep}{text}", h.line)?;
    if let Some(score) = h.score {
        write!(o, "  [score {score:.2}")?;
        if let Some(d) = h.date {
            write!(o, ", {d}")?;
        }
        o.write_all(b"]")?;
    }
    o.write_all(b"\n")
}

/// A `--since`/`--until` value as a day, relative forms counted from today on the clock.
fn day(flag: &str, value: Option<&str>, env: &Env) -> Result<Option<Date>, CliError> {
    value
        .map(|v| {
            memdir_core::day::parse_day(v, env.clock.now().date())
                .map_err(|e| CliError::invalid(format!("{flag}: {e}")))
        })
        .transpose()
}

/// Runs `search`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let since = day("--since", a.since.as_deref(), env)?;
    let until = day("--until", a.until.as_deref(), env)?;
    let req = SearchRequest {
        pattern: a.pattern,
        mode: a.mode,
        regex: a.regex,
        case_sensitive: a.case_sensitive,
        context: a.context,
        limit: a.limit,
        since,
        until,
        path_glob: a.path_glob,
        max_bytes: a.max_bytes,
        files: a.files,
    };
    if req.mode != Mode::Grep {
        let grep_only = [
            (a.regex, "--regex"),
            (a.case_sensitive, "-s"),
            (a.context > 0, "-C"),
        ];
        if let Some((_, flag)) = grep_only.iter().find(|(set, _)| *set) {
            return Err(CliError::invalid(format!(
                "{flag} works in grep mode only; --mode {} ranks whole lines by their words: drop {flag}, or use --mode grep",
                a.mode
            )));
        }
    }
    if a.files && req.mode == Mode::Grep {
        return Err(CliError::invalid(
            "--files groups ranked results by file: add --mode ranked (or semantic, hybrid)",
        ));
    }
    if a.reindex && req.mode == Mode::Grep {
        return Err(CliError::invalid(
            "--reindex rebuilds the index of --mode ranked, semantic or hybrid; grep reads the files and has none",
        ));
    }
    let mem = env.open()?;
    if a.reindex && matches!(req.mode, Mode::Ranked | Mode::Hybrid) {
        mem.rebuild_search_index()?;
    }
    if matches!(req.mode, Mode::Semantic | Mode::Hybrid) {
        // Surface a bad [embed] section. What changed is embedded by the search itself, with a
        // progress bar: a hybrid search's keyword half runs while the model loads.
        env.embed_config(&mem)?;
        if a.reindex {
            crate::cmd::index::rebuild_vectors(&mem)?;
        }
    }
    let progress = crate::cmd::index::progress_bar();
    // Lines are printed as grep finds them, not gathered first: a pattern with thousands of
    // matches starts printing at once and never holds them all.
    let tty = io::stdout().is_terminal();
    let mut o = io::BufWriter::with_capacity(64 << 10, io::stdout().lock());
    let mut io_err: Option<io::Error> = None;
    let mut prev: Option<(String, u64)> = None;
    let mut shown = 0usize;
    // Consecutive lines from external sources, printed together inside one untrusted block.
    let mut run: Vec<u8> = Vec::new();
    let found = mem.search_each_with_progress(&req, &progress, &mut |h: HitRef<'_>| {
        let gap = req.context > 0
            && prev
                .as_ref()
                .is_some_and(|(p, l)| p != h.path || l + 1 != h.line);
        let written = if h.external && !a.json {
            write_hit(&mut run, &h, false, gap, tty)
        } else {
            write_fenced(&mut o, &mut run).and_then(|()| write_hit(&mut o, &h, a.json, gap, tty))
        };
        if let Err(e) = written {
            io_err = Some(e);
            return Err(memdir::Error::Conflict("output closed".to_string()));
        }
        shown += 1;
        if req.context > 0 {
            prev = Some((h.path.to_string(), h.line));
        }
        Ok(())
    });
    if let Some(e) = io_err {
        return Err(e.into());
    }
    let omitted = found?;
    write_fenced(&mut o, &mut run)?;
    let outcome = SearchOutcome {
        hits: Vec::new(),
        omitted,
    };
    if shown == 0 && omitted == 0 {
        return Err(CliError::silent(exit::NOT_FOUND));
    }
    if req.files {
        let total = shown + omitted;
        let t = format!(
            "{total} {} matched{}",
            if total == 1 { "file" } else { "files" },
            if omitted > 0 {
                format!(", {shown} shown: raise --limit or narrow with --path/--since")
            } else {
                String::new()
            }
        );
        if a.json {
            eprintln!("memdir: {t}");
        } else {
            writeln!(o, "{t}")?;
        }
    } else if let Some(t) = outcome.trailer() {
        if a.json {
            eprintln!("memdir: {t}");
        } else {
            writeln!(o, "{t}")?;
        }
    }
    o.flush()?;
    // The process ends after this: freeing the embedding model (its vocabulary is tens of
    // thousands of strings) would cost more than a query. Everything the memory wrote is
    // already on disk; the system closes its files.
    std::mem::forget(mem);
    Ok(())
}
