//! `memdir serve`

use crate::cmd::mcp::open_or_init;
use crate::env::Env;
use crate::ui::{CliError, CliResult, exit};
use memdir::Memory;
use memdir::tenants::{DAY_MS, Schedule};
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
///
/// On a service root (a PostgreSQL URL without `tenant=`, or a folder made by `memdir tenant
/// add`) it serves every tenant: each request's bearer token chooses the memory, and REST
/// endpoints (POST /v1/tools/NAME, GET /v1/files/PATH), /healthz, /readyz and /metrics join
/// /mcp. The embedder, limits and quotas then come from --config, never from a tenant's own
/// settings.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir serve
  memdir serve --listen 127.0.0.1:0          # pick a free port; the address is printed on stderr
  MEMDIR_TOKEN=$(openssl rand -hex 32) memdir serve --listen 0.0.0.0:8707
  claude mcp add --transport http --header \"Authorization: Bearer $MEMDIR_TOKEN\" memdir http://127.0.0.1:8707/mcp
  memdir --store postgres://127.0.0.1/memdir serve --listen 0.0.0.0:8707 --config service.toml")]
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
    /// MCP sessions at most; at the cap a new one ends the least recently used idle session,
    /// or gets 503 when every session has a request in flight.
    #[arg(long, value_name = "N", default_value_t = DEFAULTS.max_sessions, value_parser = count())]
    pub max_sessions: usize,
    /// End a session that has sent nothing for SECS.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULTS.session_idle.as_secs(), value_parser = secs())]
    pub session_idle: u64,
    /// On SIGTERM or Ctrl-C, give requests in flight SECS to finish, then end streams and exit.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULTS.shutdown_timeout.as_secs(), value_parser = secs())]
    pub shutdown_timeout: u64,
    /// A service's operator settings (TOML: [embed], [limits], [quota], [store], [jobs],
    /// [consolidate]); only on a service root.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve the person's page at /ui/ (sign in with the link printed on start, or from
    /// `memdir ui`); on by default on a loopback address.
    #[arg(long, conflicts_with = "no_ui")]
    pub ui: bool,
    /// Do not serve the person's page.
    #[arg(long)]
    pub no_ui: bool,
    /// The URL people open the page at, when a proxy or a name stands in front
    /// (https://memory.example.org); an https URL makes the session cookie Secure.
    #[arg(long, value_name = "URL", value_parser = parse_public_url)]
    pub public_url: Option<String>,
}

/// An absolute http(s) URL without a path, query or fragment; the trailing slash is dropped.
fn parse_public_url(s: &str) -> Result<String, String> {
    let t = s.trim().trim_end_matches('/');
    let Some((scheme, rest)) = t.split_once("://") else {
        return Err("not a URL: give one like https://memory.example.org".into());
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return Err(format!("the scheme {scheme:?} is not http or https"));
    }
    if rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ']) {
        return Err("give only the scheme and host[:port], e.g. https://memory.example.org".into());
    }
    Ok(t.to_string())
}

/// What the operator of a service sets: tenants' own `.memdir/config.toml` cannot change these.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Operator {
    /// The embedder of semantic and hybrid search, shared by every tenant.
    embed: memdir_core::config::EmbedSettings,
    /// Per-tenant and global bounds.
    limits: memdir_mcp::service::ServiceLimits,
    /// What each tenant may store.
    quota: memdir_mcp::quota::Quota,
    /// The service's store.
    store: StoreSettings,
    /// The person's page of every tenant.
    ui: crate::page::UiSettings,
    /// The jobs the service runs itself.
    jobs: JobsSettings,
    /// The chat model of the service's scheduled consolidation.
    consolidate: ConsolidateModel,
    /// What a write does with a credential, at least, in every tenant (`policy`, `redact` by
    /// default): a tenant's own `[secrets]` may be stricter, never looser.
    secrets: memdir_core::config::SecretsConfig,
}

/// `[jobs]`: what the service runs for every tenant on a schedule.
#[derive(Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct JobsSettings {
    /// How often each tenant is swept (a duration such as `1h`, or `off`).
    sweep_every: String,
    /// How often each tenant is consolidated (a duration such as `1d`, or `off`, the default).
    consolidate_every: String,
    /// The time of day (UTC, `HH:MM`) consolidation runs at, once a day or once per
    /// `consolidate_every` whole days.
    consolidate_at: Option<String>,
    /// How often an instance looks for tenants whose job is due.
    check_every: String,
    /// Tenants an instance claims at a time.
    batch: usize,
}

impl Default for JobsSettings {
    fn default() -> JobsSettings {
        JobsSettings {
            sweep_every: "1h".into(),
            consolidate_every: "off".into(),
            consolidate_at: None,
            check_every: "1m".into(),
            batch: 100,
        }
    }
}

/// The operator's `[consolidate]`: the chat model the service's consolidation asks besides its
/// deterministic rules (none by default). A tenant's own `[consolidate]` model is never asked.
#[derive(Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ConsolidateModel {
    /// `none` or `openai`.
    provider: String,
    /// The chat endpoint's base URL.
    url: Option<String>,
    /// The model name sent to the endpoint.
    model: Option<String>,
    /// The name of the environment variable that holds the endpoint's API key.
    api_key_env: Option<String>,
    /// Seconds allowed for the model's answer.
    timeout_secs: u64,
}

impl Default for ConsolidateModel {
    fn default() -> ConsolidateModel {
        let d = memdir_core::config::ConsolidateConfig::default();
        ConsolidateModel {
            provider: d.provider,
            url: d.url,
            model: d.model,
            api_key_env: d.api_key_env,
            timeout_secs: d.timeout_secs,
        }
    }
}

impl ConsolidateModel {
    fn chat_model(&self) -> Result<Option<memdir::consolidate::ChatModel>, CliError> {
        let c = memdir_core::config::ConsolidateConfig {
            provider: self.provider.clone(),
            url: self.url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            timeout_secs: self.timeout_secs,
            ..Default::default()
        };
        crate::cmd::consolidate::chat_model(&c, "the service config's")
    }
}

/// `HH:MM` (UTC) as milliseconds after midnight.
fn time_of_day(v: &str) -> Result<i64, CliError> {
    let bad = || {
        CliError::invalid(format!(
            "the service config's jobs.consolidate_at {v:?}: give a UTC time of day as HH:MM, e.g. \"03:00\""
        ))
    };
    let (h, m) = v.trim().split_once(':').ok_or_else(bad)?;
    if h.len() != 2 || m.len() != 2 {
        return Err(bad());
    }
    let (h, m): (i64, i64) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if !(0..24).contains(&h) || !(0..60).contains(&m) {
        return Err(bad());
    }
    Ok((h * 60 + m) * 60_000)
}

impl JobsSettings {
    fn jobs(
        &self,
        model: Option<memdir::consolidate::ChatModel>,
    ) -> Result<memdir_mcp::jobs::Jobs, CliError> {
        let ttl = |key: &str, v: &str| {
            memdir_core::duration::parse_ttl(v)
                .map_err(|e| CliError::invalid(format!("the service config's jobs.{key}: {e}")))
        };
        let every = |key: &str, v: &str| match v.trim() {
            "off" => Ok(None),
            v => ttl(key, v).map(Some),
        };
        let sweep_every_ms = every("sweep_every", &self.sweep_every)?;
        let at_ms = self
            .consolidate_at
            .as_deref()
            .map(time_of_day)
            .transpose()?;
        let consolidate = match (every("consolidate_every", &self.consolidate_every)?, at_ms) {
            (None, None) => None,
            (Some(every_ms), None) => Some(Schedule {
                every_ms,
                at_ms: None,
            }),
            (None, Some(at)) => Some(Schedule {
                every_ms: DAY_MS,
                at_ms: Some(at),
            }),
            (Some(every_ms), Some(at)) => {
                // At a time of day, a run can only come back a whole number of days later.
                if every_ms % DAY_MS != 0 {
                    return Err(CliError::invalid(format!(
                        "the service config's jobs.consolidate_every {:?} is not a whole number of days: with consolidate_at use 1d, 2d, 1w, ...",
                        self.consolidate_every
                    )));
                }
                Some(Schedule {
                    every_ms,
                    at_ms: Some(at),
                })
            }
        };
        if self.batch == 0 {
            return Err(CliError::invalid(
                "the service config's jobs.batch is 0: set it to at least 1",
            ));
        }
        Ok(memdir_mcp::jobs::Jobs {
            sweep_every_ms,
            consolidate,
            consolidate_model: model,
            check_every_ms: ttl("check_every", &self.check_every)?,
            batch: self.batch,
        })
    }
}

/// `[store]`: how an instance uses the service's database.
#[derive(Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct StoreSettings {
    /// Connections this instance keeps to PostgreSQL at most (instances x this must stay
    /// below the server's `max_connections`).
    pool_size: usize,
}

impl Default for StoreSettings {
    fn default() -> StoreSettings {
        StoreSettings {
            pool_size: memdir_store_pg::SERVICE_POOL_SIZE,
        }
    }
}

fn operator(a: &Args) -> Result<Operator, CliError> {
    let Some(path) = &a.config else {
        return Ok(Operator::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::invalid(format!(
            "cannot read the service config {}: {e}",
            path.display()
        ))
    })?;
    toml::from_str(&text).map_err(|e| {
        let msg = e.message().to_string();
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        CliError::invalid(match line {
            Some(l) => format!("{}:{l}: {msg}", path.display()),
            None => format!("{}: {msg}", path.display()),
        })
    })
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

fn limits(a: &Args) -> Limits {
    Limits {
        header_timeout: Duration::from_secs(a.header_timeout),
        request_timeout: Duration::from_secs(a.request_timeout),
        max_connections: a.max_connections,
        max_sessions: a.max_sessions,
        session_idle: Duration::from_secs(a.session_idle),
        shutdown_timeout: Duration::from_secs(a.shutdown_timeout),
    }
}

/// Serves every tenant of a service root.
fn run_service(a: Args, env: &Env) -> CliResult {
    if token(&a)?.is_some() {
        return Err(CliError::invalid(
            "a service authenticates each tenant by its own token: unset MEMDIR_TOKEN and drop --token-file (`memdir tenant add` makes tokens)",
        ));
    }
    if !a.allow_origin.is_empty() {
        return Err(CliError::invalid(
            "--allow-origin is for a single memory; a service is for programs, not browser pages",
        ));
    }
    let op = operator(&a)?;
    let (tenants, sign_ins) = env.location.service_registry(false, op.store.pool_size)?;
    tenants.ready()?;
    // One embedder for every tenant, chosen by the operator (MEMDIR_MODEL_DIR or [embed]), loaded
    // once; the API key comes from the variable the operator's config names.
    let api_key = op
        .embed
        .api_key_env
        .as_deref()
        .and_then(|name| std::env::var(name).ok())
        .filter(|k| !k.is_empty());
    let base = a
        .config
        .as_deref()
        .and_then(|c| c.parent())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let embed = memdir::search::embed_config(&op.embed, &base, env.model_dir.clone(), api_key)?;
    let embedder: Option<Arc<dyn memdir::embed::Embedder>> = memdir::embed::open(&embed)
        .map_err(|e| CliError::invalid(format!("the service's [embed]: {e}")))?
        .map(Arc::from);
    // On by default on loopback where sessions have a home (PostgreSQL); asked for with --ui.
    let ui_on = !a.no_ui && (a.ui || (a.listen.ip().is_loopback() && sign_ins.is_some()));
    let page_maker = if ui_on {
        let sign_ins = sign_ins.clone().ok_or_else(|| {
            CliError::invalid(
                "the person's page of a service keeps its sessions in PostgreSQL: serve a folder of tenants with --no-ui",
            )
        })?;
        if !a.listen.ip().is_loopback() && a.public_url.is_none() {
            return Err(CliError::invalid(
                "the person's page off loopback needs the URL people open it at: add --public-url https://HOST, or --no-ui",
            ));
        }
        let sso = crate::page::sso(&op.ui, &base)?;
        let config = memdir_ui::PageConfig {
            public_url: a.public_url.clone(),
            hosts: crate::page::hosts(a.listen),
        };
        let clock = env.clock.clone();
        let maker: memdir_mcp::service::PageMaker = Box::new(move |memories| {
            let page = memdir_ui::Page::service(
                memdir_ui::service::ServicePage {
                    sign_ins,
                    memories,
                    sso,
                    clock,
                },
                config,
            );
            memdir_mcp::http::PageRoutes {
                router: page.router(),
                cookie: memdir_ui::auth::SESSION_COOKIE,
            }
        });
        Some(maker)
    } else {
        None
    };
    let quota = op.quota;
    let secrets = op.secrets.policy;
    let clock = env.clock.clone();
    let cache = crate::dirs::cache_home().map(|c| {
        c.join("memdir")
            .join("service")
            .join(env.location.cache_name())
    });
    let is_folder = matches!(env.location, crate::store::Location::Folder(_));
    let search_root = cache.clone();
    let jobs = op.jobs.jobs(op.consolidate.chat_model()?)?;
    if is_folder && jobs.consolidate.is_some() {
        // A folder root keeps no schedule (it is one machine's folder, run by cron if at all).
        say!(
            "memdir: a folder root runs no scheduled jobs: [jobs] consolidate_every and consolidate_at are ignored (run `memdir consolidate` per tenant folder)"
        );
    }
    let registry = tenants.clone();
    let opener = Box::new(move |t: &memdir::tenants::Tenant| {
        let backend = memdir_mcp::quota::with_quota(
            registry
                .backend(&t.name, false)
                .map_err(|e| e.to_string())?,
            quota,
        );
        let mut mem = Memory::open_backend(backend, clock.clone())
            .map_err(|e| e.to_string())?
            .with_secrets_at_least(secrets);
        if let Some(c) = &cache
            && !is_folder
        {
            mem = mem.with_search_cache(c.join(&t.name));
        }
        // The principal is the writer, whatever a client says; agents' writes are labelled
        // `agent`, so core changes become proposals as on any agent surface.
        mem = mem.with_actor(memdir::Actor {
            writer: t.principal.clone(),
            source: memdir::Source::Agent,
        });
        mem = match &embedder {
            Some(e) => mem.with_embedder(e.clone()),
            None => mem.with_embed_config(memdir::embed::EmbedConfig::None),
        };
        // A folder tenant's files are copied in memory between searches; every tenant's
        // keyword index stays open between them (a store's in its cache folder, closed by the
        // service past `max_open_indexes` or before the folder is deleted).
        Ok(mem.with_warm_search())
    });
    let config = memdir_mcp::service::ServiceConfig {
        listen: a.listen,
        limits: limits(&a),
        service: op.limits,
        search_cache: if is_folder { None } else { search_root },
        jobs,
    };
    memdir_mcp::service::check(&config).map_err(CliError::invalid)?;
    let with_page = page_maker.is_some();
    let (public_url, now) = (a.public_url.clone(), env.clock.now().timestamp());
    memdir_mcp::service::serve_with_page(tenants, opener, config, page_maker, |addr| {
        say!("memdir: serving every tenant's memory on http://{addr} (/mcp, /v1/tools/NAME, /v1/files/PATH; bearer token required)");
        if let (true, Some(sign_ins)) = (with_page, &sign_ins) {
            let base = public_url.unwrap_or_else(|| format!("http://{addr}"));
            match sign_ins.announce(&base, now.as_millisecond()) {
                Ok(()) => say!(
                    "memdir: the person's page of every tenant at {base}/ui/ (sign-in links: `memdir tenant link NAME`)"
                ),
                Err(e) => say!(
                    "memdir: the person's page is served at {base}/ui/, but its address could not be recorded for `memdir tenant link`: {e}"
                ),
            }
        }
    })
    .map_err(|e| CliError {
        message: e,
        code: exit::FAILURE,
    })
}

/// Runs `serve`.
pub fn run(a: Args, env: &Env) -> CliResult {
    memdir_mcp::server::init_logging(std::env::var("MEMDIR_LOG").ok().as_deref());
    if env.location.is_service() {
        return run_service(a, env);
    }
    if a.config.is_some() {
        return Err(CliError::invalid(
            "--config is a service's operator settings: a single memory reads .memdir/config.toml",
        ));
    }
    let config = HttpConfig {
        listen: a.listen,
        token: token(&a)?,
        allowed_origins: a.allow_origin.clone(),
        limits: limits(&a),
    };
    memdir_mcp::http::check(&config).map_err(CliError::invalid)?;
    let with_token = config.token.is_some();
    let mem = open_or_init(env)?.with_warm_search().with_history_feed();
    let tools = Tools::new(Arc::new(mem.clone()));
    let ui_on = !a.no_ui && (a.ui || a.listen.ip().is_loopback());
    let page = ui_on.then(|| {
        memdir_ui::Page::new(
            mem.clone(),
            memdir_ui::PageConfig {
                public_url: a.public_url.clone(),
                hosts: crate::page::hosts(a.listen),
            },
        )
    });
    let routes = page.as_ref().map(|p| memdir_mcp::http::PageRoutes {
        router: p.router(),
        cookie: memdir_ui::auth::SESSION_COOKIE,
    });
    let served = memdir_mcp::http::serve_with_page(tools, config, routes, |addr| {
        say!(
            "memdir: serving MCP on http://{addr}{MCP_PATH}{}",
            if with_token {
                " (bearer token required)"
            } else {
                ""
            }
        );
        if page.is_some() {
            let base = a
                .public_url
                .clone()
                .unwrap_or_else(|| format!("http://{addr}"));
            match memdir_ui::auth::announce(&mem, &base, addr)
                .and_then(|()| memdir_ui::auth::new_code(&mem))
            {
                Ok(code) => say!(
                    "memdir: the person's page: sign in at {} (single use, valid {} minutes; `memdir ui` prints another)",
                    memdir_ui::auth::link(&base, &code),
                    memdir_ui::auth::CODE_TTL_MINUTES
                ),
                Err(e) => say!(
                    "memdir: the person's page is served at {base}/ui/, but no sign-in link could be made: {e}"
                ),
            }
        }
    });
    if page.is_some() {
        let _ = memdir_ui::auth::withdraw(&mem);
    }
    served.map_err(|e| CliError {
        message: e,
        code: exit::FAILURE,
    })
}

/// Prints one announcement line to stderr. A serve whose stderr went away (a supervisor or a test
/// that read the address and closed the pipe) keeps serving: `eprintln!` would panic on the
/// failed write.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
use say;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn jobs(toml_text: &str) -> Result<memdir_mcp::jobs::Jobs, String> {
        let op: Operator = toml::from_str(toml_text).map_err(|e| e.message().to_string())?;
        let model = op.consolidate.chat_model().map_err(|e| e.message)?;
        op.jobs.jobs(model).map_err(|e| e.message)
    }

    #[test]
    fn consolidation_is_off_unless_the_operator_schedules_it() {
        let j = jobs("").unwrap();
        assert_eq!(j.consolidate, None);
        assert_eq!(j.sweep_every_ms, Some(3_600_000));
        assert!(j.consolidate_model.is_none());
        assert_eq!(
            jobs("[jobs]\nconsolidate_every = \"12h\"\n")
                .unwrap()
                .consolidate,
            Some(Schedule {
                every_ms: 12 * 3_600_000,
                at_ms: None
            })
        );
        assert_eq!(
            jobs("[jobs]\nconsolidate_at = \"03:30\"\n")
                .unwrap()
                .consolidate,
            Some(Schedule {
                every_ms: DAY_MS,
                at_ms: Some(210 * 60_000)
            })
        );
        assert_eq!(
            jobs("[jobs]\nconsolidate_every = \"1w\"\nconsolidate_at = \"23:59\"\n")
                .unwrap()
                .consolidate,
            Some(Schedule {
                every_ms: 7 * DAY_MS,
                at_ms: Some((23 * 60 + 59) * 60_000)
            })
        );
    }

    #[test]
    fn bad_schedules_and_models_are_refused_in_one_line() {
        for (text, says) in [
            ("[jobs]\nconsolidate_at = \"3:00\"\n", "HH:MM"),
            ("[jobs]\nconsolidate_at = \"24:00\"\n", "HH:MM"),
            ("[jobs]\nconsolidate_at = \"03:60\"\n", "HH:MM"),
            ("[jobs]\nconsolidate_at = \"noon\"\n", "HH:MM"),
            (
                "[jobs]\nconsolidate_every = \"soon\"\n",
                "jobs.consolidate_every",
            ),
            (
                "[jobs]\nconsolidate_every = \"12h\"\nconsolidate_at = \"03:00\"\n",
                "whole number of days",
            ),
            (
                "[consolidate]\nprovider = \"openai\"\n",
                "needs url and model",
            ),
            ("[consolidate]\nprovider = \"gpt\"\n", "use none or openai"),
            ("[consolidate]\nmin_days = 2\n", "unknown field"),
        ] {
            let e = jobs(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let j = jobs(
            "[jobs]\nconsolidate_at = \"03:00\"\n[consolidate]\nprovider = \"openai\"\nurl = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n",
        )
        .unwrap();
        assert_eq!(j.consolidate_model.unwrap().model, "m");
    }
}
