//! `memdir tenant`

use crate::env::Env;
use crate::ui::{CliError, CliResult, out, out_json};
use memdir::Memory;
use memdir::tenants::Tenant;
use memdir_mcp::tokens::{new_token, token_hash};

/// Manage the tenants of a memory service: each has its own memory, a bearer token and a
/// principal (the writer its changes are recorded under). The store is the service's root: a
/// PostgreSQL URL without `tenant=`, or a folder that holds only tenants.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  memdir --store postgres://127.0.0.1/memdir tenant add alice --principal alice
  memdir --store postgres://127.0.0.1/memdir tenant list
  memdir --store postgres://127.0.0.1/memdir tenant list --after alice --limit 100
  TOKEN=$(memdir --store postgres://127.0.0.1/memdir tenant rotate alice)
  memdir --store postgres://127.0.0.1/memdir tenant remove alice --purge
  memdir --store postgres://127.0.0.1/memdir tenant link alice --person ana")]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// A tenant command.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Add a tenant and its memory; prints its new bearer token alone on stdout, once
    Add {
        /// The tenant's name (letters, digits, '-', '_', '.', '@').
        name: String,
        /// The writer recorded for its changes: lowercase letters, digits and dashes [default:
        /// the name, lowercased]
        #[arg(long, value_name = "NAME")]
        principal: Option<String>,
    },
    /// List the tenants (never their tokens), by name
    List {
        /// Print JSON: name, principal, created, token_set.
        #[arg(long)]
        json: bool,
        /// Only tenants whose names come after NAME (byte order): the next page after a
        /// page that ended with NAME.
        #[arg(long, value_name = "NAME")]
        after: Option<String>,
        /// At most N tenants.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// Give a tenant a new token (printed alone on stdout); the old one stops working at once,
    /// and on a running service within its `[limits] token_cache_ms` (5 s by default)
    Rotate {
        /// The tenant's name.
        name: String,
    },
    /// Print a single-use sign-in link to the tenant's page for its person (valid 10 minutes)
    Link {
        /// The tenant's name.
        name: String,
        /// Who signs in (the writer of their changes): lowercase letters, digits and dashes
        /// [default: the tenant's principal]
        #[arg(long, value_name = "NAME")]
        person: Option<String>,
        /// The URL the page is served at [default: the one `memdir serve` announced]
        #[arg(long, value_name = "URL")]
        url: Option<String>,
    },
    /// Remove a tenant's token; with --purge, its memory and history too
    Remove {
        /// The tenant's name.
        name: String,
        /// Delete the tenant's memory and its history as well (cannot be undone).
        #[arg(long)]
        purge: bool,
    },
}

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

fn service_only(env: &Env) -> Result<(), CliError> {
    if env.location.is_service() || matches!(env.location, crate::store::Location::Folder(_)) {
        return Ok(());
    }
    Err(CliError::invalid(format!(
        "{} names one memory, not a service: drop ?tenant=... from the store URL",
        env.location.shown()
    )))
}

/// Makes the principal the memory's main writer (its logs go to `log/YYYY-MM-DD.md`), in a
/// config that `init` just wrote; a memory adopted with settings of its own keeps them.
fn main_writer(b: &memdir::Backend, principal: &str) -> Result<(), CliError> {
    let Some(text) = b.store.read_meta("config.toml")? else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(&text).into_owned();
    let template = format!(
        "# main = \"{}\"",
        memdir_core::config::Config::default().writers.main
    );
    if !text.contains(&template) {
        return Ok(());
    }
    let new = text.replacen(&template, &format!("main = \"{principal}\""), 1);
    match memdir_core::config::Config::from_toml(&new) {
        Ok(c) if c.writers.main == principal => {
            b.store.write_meta("config.toml", new.as_bytes())?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Runs `tenant`.
pub fn run(a: Args, env: &Env) -> CliResult {
    service_only(env)?;
    match a.action {
        Action::Add { name, principal } => {
            let tenants = env.location.tenants(true)?;
            let principal = principal.unwrap_or_else(|| memdir::tenants::default_principal(&name));
            let token = new_token()?;
            tenants.add(&Tenant::new(&name, &principal), &token_hash(&token))?;
            // The memory's layout, so its first session finds core.md and the index.
            let made = tenants
                .backend(&name, true)
                .map_err(CliError::from)
                .and_then(|b| {
                    Memory::init_backend(b.clone(), env.clock.clone(), true)?;
                    main_writer(&b, &principal)
                });
            if let Err(e) = made {
                let _ = tenants.remove(&name, false);
                return Err(e);
            }
            out(&format!("{token}\n"))
        }
        Action::Link { name, person, url } => link(env, &name, person, url),
        Action::List { json, after, limit } => {
            let list = env
                .location
                .tenants(false)?
                .list_page(after.as_deref(), limit.unwrap_or(usize::MAX))?;
            if json {
                let v: Vec<_> = list
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "name": t.name,
                            "principal": t.principal,
                            "created": rfc3339(t.created_ms),
                            "token_set": rfc3339(t.token_set_ms),
                        })
                    })
                    .collect();
                return out_json(&v);
            }
            let mut s = String::new();
            for t in &list {
                s.push_str(&format!(
                    "{}\tprincipal {}\tsince {}\ttoken set {}\n",
                    t.name,
                    t.principal,
                    rfc3339(t.created_ms),
                    rfc3339(t.token_set_ms)
                ));
            }
            if list.is_empty() && after.is_none() {
                eprintln!("memdir: no tenants yet: `memdir tenant add NAME` adds one");
            }
            out(&s)
        }
        Action::Rotate { name } => {
            let token = new_token()?;
            env.location
                .tenants(false)?
                .set_token(&name, &token_hash(&token))?;
            out(&format!("{token}\n"))
        }
        Action::Remove { name, purge } => {
            env.location.tenants(false)?.remove(&name, purge)?;
            eprintln!(
                "memdir: removed tenant {name}{}",
                if purge {
                    ", its memory and its history"
                } else {
                    " (its memory is kept: --purge deletes it)"
                }
            );
            Ok(())
        }
    }
}

/// `tenant link`: a single-use sign-in link for the tenant's person.
fn link(env: &Env, name: &str, person: Option<String>, url: Option<String>) -> CliResult {
    let (tenants, sign_ins) = env
        .location
        .service_registry(false, memdir_store_pg::SERVICE_POOL_SIZE)?;
    let sign_ins = sign_ins.ok_or_else(|| {
        CliError::invalid(
            "the person's page of a service keeps its sign-ins in PostgreSQL: use --store postgres://HOST/DB",
        )
    })?;
    let tenant = tenants.get(name)?.ok_or_else(|| CliError {
        message: format!("no tenant {name:?}: `memdir tenant list` shows them"),
        code: crate::ui::exit::NOT_FOUND,
    })?;
    let base = match url {
        Some(u) => u.trim().trim_end_matches('/').to_string(),
        None => sign_ins.announced()?.ok_or_else(|| {
            CliError::invalid(
                "no `memdir serve` has announced this service's page yet: start one, or pass --url https://HOST",
            )
        })?,
    };
    let person = person.unwrap_or(tenant.principal);
    let code = memdir_ui::service::new_code(
        sign_ins.as_ref(),
        &tenant.name,
        &person,
        env.clock.now().timestamp(),
    )
    .map_err(|e| match e {
        memdir_ui::auth::AuthError::BadPerson(_) => CliError::invalid(e.to_string()),
        e => CliError {
            message: e.to_string(),
            code: crate::ui::exit::FAILURE,
        },
    })?;
    out(&memdir_ui::auth::link(&base, &code))
}
