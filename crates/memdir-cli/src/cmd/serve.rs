//! `memdir serve`

use crate::app::Env;
use crate::cmd::mcp::open_or_init;
use crate::ui::{CliError, CliResult, exit};
use memdir_mcp::Tools;
use memdir_mcp::http::{HttpConfig, Limits, MCP_PATH};
use std::net::{SocketAddr, ToSocketAddrs as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Serve the memory folder over MCP streamable HTTP at http://ADDR/mcp. It listens on loopback
/// by default; a browser Origin is refused unless named with --allow-origin. With a token (from
/// MEMDIR_TOKEN or --token-file) every request must send `Authorization: Bearer <token>`;
/// another address than loopback needs one. The token is never printed or logged.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir serve
  memdir serve --listen 127.0.0.1:0          # pick a free port; the address is printed on stderr
  MEMDIR_TOKEN=$(openssl rand -hex 32) memdir serve --listen 0.0.0.0:8707
  claude mcp add --transport http --header \"Authorization: Bearer $MEMDIR_TOKEN\" memdir http://127.0.0.1:8707/mcp")]
pub struct Args {
    /// The address to listen on: an IP address or a host name, and a port (localhost:8707).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8707", value_parser = parse_listen)]
    pub listen: SocketAddr,
    /// Read the bearer token from this file (first line); overrides MEMDIR_TOKEN.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Allow browser requests from this origin, e.g. http://localhost:5173 (repeatable).
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Close a connection that has not sent a request's headers within SECS of opening or of
    /// its previous response (idle and slow, slowloris, connections).
    #[arg(long, value_name = "SECS", default_value_t = DEFAULTS.header_timeout.as_secs(), value_parser = secs())]
    pub header_timeout: u64,
    /// Answer 408 to a request not read (body included) within SECS; streams are not cut.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULTS.request_timeout.as_secs(), value_parser = secs())]
    pub request_timeout: u64,
    /// Open connections at most; at the cap a new one closes the oldest idle one, or gets 503
    /// when all are busy.
    #[arg(long, value_name = "N", default_value_t = DEFAULTS.max_connections, value_parser = count())]
    pub max_connections: usize,
    /// MCP sessions at most; at the cap a new one ends the least recently used session.
    #[arg(long, value_name = "N", default_value_t = DEFAULTS.max_sessions, value_parser = count())]
    pub max_sessions: usize,
    /// End a session that has sent nothing for SECS.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULTS.session_idle.as_secs(), value_parser = secs())]
    pub session_idle: u64,
    /// On SIGTERM or Ctrl-C, give requests in flight SECS to finish, then end streams and exit.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULTS.shutdown_timeout.as_secs(), value_parser = secs())]
    pub shutdown_timeout: u64,
}

const DEFAULTS: Limits = Limits::DEFAULT;

/// A count from 1 to a million.
fn count() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000)
}

/// A whole number of seconds, at least 1 and at most a day.
fn secs() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=86_400)
}

/// `HOST:PORT` as one socket address; a name that resolves to several takes the first IPv4 one.
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = s.parse() {
        return Ok(addr);
    }
    let bad = |why: &str| format!("{why}; use HOST:PORT, e.g. 127.0.0.1:8707 or localhost:8707");
    let Some((_, port)) = s.rsplit_once(':') else {
        return Err(bad("no port"));
    };
    if port.parse::<u16>().is_err() {
        return Err(bad(&format!("bad port {port:?}")));
    }
    let addrs: Vec<SocketAddr> = s
        .to_socket_addrs()
        .map_err(|_| bad("not an IP address or a known host name"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| bad("the host name has no address"))
}

fn token(a: &Args) -> Result<Option<String>, CliError> {
    if let Some(f) = &a.token_file {
        let s = std::fs::read_to_string(f).map_err(|e| {
            CliError::invalid(format!("cannot read the token file {}: {e}", f.display()))
        })?;
        let t = s.lines().next().unwrap_or("").trim().to_string();
        if t.is_empty() {
            return Err(CliError::invalid(format!(
                "the token file {} is empty: put a long random string in it",
                f.display()
            )));
        }
        return Ok(Some(t));
    }
    Ok(std::env::var("MEMDIR_TOKEN")
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty()))
}

/// Runs `serve`.
pub fn run(a: Args, env: &Env) -> CliResult {
    memdir_mcp::server::init_logging(std::env::var("MEMDIR_LOG").ok().as_deref());
    let config = HttpConfig {
        listen: a.listen,
        token: token(&a)?,
        allowed_origins: a.allow_origin.clone(),
        limits: Limits {
            header_timeout: Duration::from_secs(a.header_timeout),
            request_timeout: Duration::from_secs(a.request_timeout),
            max_connections: a.max_connections,
            max_sessions: a.max_sessions,
            session_idle: Duration::from_secs(a.session_idle),
            shutdown_timeout: Duration::from_secs(a.shutdown_timeout),
        },
    };
    memdir_mcp::http::check(&config).map_err(CliError::invalid)?;
    let with_token = config.token.is_some();
    let tools = Tools::new(Arc::new(open_or_init(env)?.with_warm_search()));
    memdir_mcp::http::serve(tools, config, |addr| {
        eprintln!(
            "memdir: serving MCP on http://{addr}{MCP_PATH}{}",
            if with_token {
                " (bearer token required)"
            } else {
                ""
            }
        );
    })
    .map_err(|e| CliError {
        message: e,
        code: exit::FAILURE,
    })
}
