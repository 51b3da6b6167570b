//! `memdir ui`

use crate::env::Env;
use crate::ui::{CliError, CliResult, exit, out};
use std::time::Duration;

/// Print a single-use sign-in link to this memory's page, served by the `memdir serve` that is
/// running for it (one is started in the background, on loopback, when none is), and open it in
/// the browser on a desktop. The link works once, for 10 minutes; signing in gives a session (a
/// cookie) that agents' tokens cannot stand in for.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir ui                # starts `memdir serve` if none runs, prints (and opens) the link
  memdir serve &           # or start it yourself: the page is on by default on loopback
  memdir ui --no-open      # only print the link, e.g. over ssh")]
pub struct Args {
    /// Only print the link; do not open a browser.
    #[arg(long)]
    pub no_open: bool,
}

/// True when the announced page answers at its address.
fn answers(served: &memdir_ui::auth::Announced) -> bool {
    served.listen.is_some_and(|addr| {
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
    })
}

/// Starts `memdir serve` for this memory in the background (its own process group, so closing
/// the terminal's foreground job does not stop it) and waits until its page answers.
fn start_serve(mem: &memdir::Memory, env: &Env) -> Result<memdir_ui::auth::Announced, CliError> {
    let fail = |message: String| CliError {
        message,
        code: exit::FAILURE,
    };
    let exe = std::env::current_exe().map_err(|e| {
        fail(format!(
            "cannot find the memdir program to start `memdir serve`: {e}"
        ))
    })?;
    let store = match &env.location {
        crate::store::Location::Folder(p) => p.display().to_string(),
        crate::store::Location::Postgres(u) | crate::store::Location::S3(u) => u.clone(),
    };
    // The usual port first; a free one when something else holds it.
    for listen in ["127.0.0.1:8707", "127.0.0.1:0"] {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["--store", &store, "serve", "--listen", listen, "--ui"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| fail(format!("cannot start `memdir serve`: {e}")))?;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if let Some(served) =
                memdir_ui::auth::announced(mem).map_err(|e| fail(e.to_string()))?
                && answers(&served)
            {
                eprintln!(
                    "memdir: started `memdir serve` for this memory at {} (process {}; `kill {}` stops it)",
                    served.base_url,
                    child.id(),
                    child.id()
                );
                return Ok(served);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if child.try_wait().ok().flatten().is_none() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(
                "`memdir serve` started but its page did not answer within 20 seconds: run `memdir serve` yourself to see why".into(),
            ));
        }
    }
    Err(fail(
        "`memdir serve` could not start: run it yourself to see why (`memdir serve`)".into(),
    ))
}

/// Runs `ui`.
pub fn run(a: Args, env: &Env) -> CliResult {
    if env.location.is_service() {
        return Err(CliError::invalid(
            "a service's people sign in with `memdir tenant link NAME`, or with the product's own login ([ui.sso])",
        ));
    }
    let mem = env.open()?;
    let fail = |e: memdir_ui::auth::AuthError| CliError {
        message: e.to_string(),
        code: exit::FAILURE,
    };
    let served = match memdir_ui::auth::announced(&mem).map_err(fail)? {
        // A server killed without its shutdown leaves its announcement behind: check it listens.
        Some(s) if answers(&s) => s,
        _ => start_serve(&mem, env)?,
    };
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
