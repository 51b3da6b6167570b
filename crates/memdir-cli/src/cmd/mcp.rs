//! `memdir mcp`

use crate::env::Env;
use crate::ui::{CliError, CliResult};
use memdir::Memory;
use memdir_mcp::Tools;
use std::sync::Arc;

/// Serve the memory folder to an MCP client over stdin/stdout (the client starts this command).
/// The folder is created if it does not exist. Logs go to stderr; set MEMDIR_LOG (e.g. `info`,
/// `rmcp=debug`) for more.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  claude mcp add memdir -- memdir mcp
  claude mcp add --env MEMDIR_ROOT=$HOME/notes/memory --transport stdio memdir -- memdir mcp
  npx @modelcontextprotocol/inspector --cli memdir mcp --method tools/list")]
pub struct Args {}

/// Opens the memory folder, creating it with its layout when it does not exist: an agent's
/// first session should not fail for want of `memdir init`. A folder that exists is used as it
/// is.
pub fn open_or_init(env: &Env) -> Result<Memory, CliError> {
    env.check_root()?;
    let mem = match env.location.open(false) {
        Err(e) if e.code == crate::ui::exit::NOT_FOUND => Memory::init_layout(
            env.location.open(true)?,
            env.clock.clone(),
            true,
            env.layout,
        )?,
        other => Memory::open_backend(other?, env.clock.clone())?,
    };
    let mem = env.with_layout(env.with_cache(mem));
    // Agents write through this surface: their changes are labelled `agent` (so core changes
    // become proposals) unless --source / MEMDIR_SOURCE says otherwise.
    let mut actor = env.actor_for(&mem);
    if !env.source_given {
        actor.source = memdir::Source::Agent;
    }
    let mem = mem.with_actor(actor).with_reason(env.reason.as_deref());
    // The embedder of semantic/hybrid search (loaded only when such a search runs); a bad
    // [embed] section surfaces there, not here.
    Ok(match env.embed_config(&mem) {
        Ok(c) => mem.with_embed_config(c),
        Err(_) => mem,
    })
}

/// Runs `mcp`.
pub fn run(_a: Args, env: &Env) -> CliResult {
    memdir_mcp::server::init_logging(std::env::var("MEMDIR_LOG").ok().as_deref());
    let tools = Tools::new(Arc::new(
        open_or_init(env)?.with_warm_search().with_history_feed(),
    ));
    memdir_mcp::server::serve_stdio(tools).map_err(|e| CliError {
        message: e,
        code: crate::ui::exit::FAILURE,
    })
}
