//! `memdir ui`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out};
use std::time::Duration;

/// Print a single-use sign-in link to this memory's page, served by the `memdir serve` that is
/// running for it, and open it in the browser on a desktop. The link works once, for 10
/// minutes; signing in gives a session (a cookie) that agents' tokens cannot stand in for.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir serve &           # the page is on by default on loopback
  memdir ui                # prints (and opens) http://127.0.0.1:8707/ui/signin?code=...
  memdir ui --no-open      # only print the link, e.g. over ssh")]
pub struct Args {
    /// Only print the link; do not open a browser.
    #[arg(long)]
    pub no_open: bool,
}

/// Runs `ui`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let mem = env.open()?;
    let fail = |e: memdir_ui::auth::AuthError| CliError {
        message: e.to_string(),
        code: exit::FAILURE,
    };
    let not_running = || {
        CliError {
        message: "no `memdir serve` with its page is running for this memory: start one with `memdir serve` (the page is on by default on loopback), then run `memdir ui` again".to_string(),
        code: exit::NOT_FOUND,
    }
    };
    let served = memdir_ui::auth::announced(&mem)
        .map_err(fail)?
        .ok_or_else(not_running)?;
    // A server killed without its shutdown leaves its announcement behind: check it listens.
    if let Some(addr) = served.listen
        && std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_err()
    {
        return Err(not_running());
    }
    let code = memdir_ui::auth::new_code(&mem).map_err(fail)?;
    let link = memdir_ui::auth::link(&served.base_url, &code);
    out(&link)?;
    let desktop = cfg!(target_os = "macos")
        || std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if !a.no_open
        && desktop
        && let Err(e) = opener::open_browser(&link)
    {
        eprintln!("memdir: could not open a browser ({e}): open the link above yourself");
    }
    Ok(())
}
