//! memdir's page for the person whose memory it is: see what the agent loads, read and fix
//! files, accept or reject proposals for core, approve or deny gated actions, search and undo.
//!
//! Served by `memdir serve` under `/ui/`, beside the agent's `/mcp`, with its own credential: a
//! person signs in with a single-use link (see [`auth`]); an agent's bearer token never opens
//! a page, and the page's cookie never reaches the agent's endpoints.
//!
//! The pages are rendered on the server from askama templates (checked at build time), with
//! plain links and forms: no script runs, so the Content-Security-Policy forbids all but the
//! page's own stylesheet. Handlers call [`memdir::Memory`]'s public API and render; the engine
//! decides everything (caps, the core gate, the gates' ledger), as it does for the CLI.
//!
//! Safe by construction: every byte shown came from an agent or from outside. Templates escape
//! every value; Markdown goes through [`markdown::render`] (raw HTML shown as text, sanitised
//! by ammonia); every response carries a strict CSP, `nosniff`, `Referrer-Policy: no-referrer`
//! and `frame-ancestors 'none'`; every form carries the session's CSRF token and every request
//! that changes something must come from the page's own origin.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let clock = memdir::Clock::fixed("2026-12-01T09:00:00Z".parse().unwrap(), jiff::tz::TimeZone::UTC);
//! let mem = memdir::Memory::init_with(dir.path(), clock, false).unwrap();
//! let page = memdir_ui::Page::new(mem.clone(), memdir_ui::PageConfig::loopback());
//! let _routes: axum::Router = page.router();
//! let code = memdir_ui::auth::new_code(&mem).unwrap();
//! assert!(memdir_ui::auth::link("http://127.0.0.1:8707", &code).contains("/ui/signin?code="));
//! ```
#![deny(missing_docs)]

pub mod auth;
mod changes;
pub mod markdown;
pub mod service;
pub mod sso;
mod views;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use memdir::Memory;
use std::sync::Arc;

/// The path prefix every page lives under.
pub const UI_PATH: &str = "/ui";

/// How the page is reached.
#[derive(Debug, Clone, Default)]
pub struct PageConfig {
    /// The URL people open, when the page is behind a proxy or a name (`--public-url`); its
    /// scheme decides the cookie's `Secure` flag and its origin is the one forms must come
    /// from. `None`: the address the server listens on, over plain HTTP.
    pub public_url: Option<String>,
    /// Host names accepted besides the public URL's (the listening address; `localhost` and
    /// `127.0.0.1` on loopback). A request for any other host is refused (DNS rebinding).
    pub hosts: Vec<String>,
}

impl PageConfig {
    /// A page on loopback: `localhost`, `127.0.0.1` and `[::1]`, plain HTTP.
    pub fn loopback() -> PageConfig {
        PageConfig {
            public_url: None,
            hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
        }
    }

    /// True when the cookie must be `Secure` (the public URL is https).
    fn secure(&self) -> bool {
        self.public_url
            .as_deref()
            .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://"))
    }

    /// The public URL's `host[:port]`, if one is set.
    fn public_authority(&self) -> Option<&str> {
        let u = self.public_url.as_deref()?;
        let rest = u.split_once("://")?.1;
        Some(rest.split('/').next().unwrap_or(rest))
    }
}

/// Whose page it is: one memory, or every tenant of a service.
pub(crate) enum Realm {
    /// One memory; its sign-in codes and sessions live under its `.memdir/`.
    One(Box<Memory>),
    /// A service: each session names its tenant.
    Service(service::ServicePage),
}

/// The page over one memory, or over every tenant of a service.
#[derive(Clone)]
pub struct Page {
    realm: Arc<Realm>,
    config: Arc<PageConfig>,
}

impl Page {
    /// The page over `mem`. Its changes are recorded with source `user` and the signed-in
    /// person as the writer, whatever `mem`'s own writer is.
    pub fn new(mem: Memory, config: PageConfig) -> Page {
        let mem = mem.with_actor(memdir::Actor {
            writer: mem.config().writers.main.clone(),
            source: memdir::Source::User,
        });
        Page {
            realm: Arc::new(Realm::One(Box::new(mem))),
            config: Arc::new(config),
        }
    }

    /// The page of every tenant of a service: people sign in with links from `memdir tenant
    /// link` or with a product's signed token, and each sees only their tenant's memory.
    pub fn service(service: service::ServicePage, config: PageConfig) -> Page {
        Page {
            realm: Arc::new(Realm::Service(service)),
            config: Arc::new(config),
        }
    }

    /// The routes, all under [`UI_PATH`], with the page's guards: security headers on every
    /// response, the Host check, the same-origin check on every request that changes
    /// something, and no bearer token accepted.
    pub fn router(&self) -> axum::Router {
        views::routes(self.clone())
            .layer(axum::middleware::from_fn_with_state(self.clone(), guard))
            .layer(axum::middleware::from_fn(security_headers))
    }
}

/// The Content-Security-Policy of every page: only the page's own stylesheet and images, no
/// script at all, no framing, forms only to itself.
pub const CSP: &str = "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; img-src 'self'; style-src 'self'";

async fn security_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    r
}

/// A plain-text refusal (before any page could be rendered).
fn refuse(status: StatusCode, why: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        why,
    )
        .into_response()
}

/// The request's `Host`, lowercased, without the port.
fn host_name(headers: &HeaderMap) -> Option<String> {
    let h = headers
        .get(header::HOST)?
        .to_str()
        .ok()?
        .to_ascii_lowercase();
    let name = if h.starts_with('[') {
        h.split_inclusive(']').next().unwrap_or(&h).to_string()
    } else {
        h.split(':').next().unwrap_or(&h).to_string()
    };
    Some(name)
}

/// True when a request that changes something comes from the page itself. Browsers send
/// `Sec-Fetch-Site` (which a page cannot forge) and `Origin`; with `Referrer-Policy:
/// no-referrer` a same-origin form's `Origin` is `null`, so `Sec-Fetch-Site: same-origin`
/// decides then. Without `Sec-Fetch-Site` (an older browser), `Origin` must name this host.
fn same_origin(headers: &HeaderMap, config: &PageConfig) -> bool {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    let origin = get("origin");
    let host = get("host").unwrap_or_default();
    let origin_ok = |o: &str| {
        let Some((_, authority)) = o.split_once("://") else {
            return false;
        };
        authority.eq_ignore_ascii_case(host)
            || config
                .public_authority()
                .is_some_and(|p| authority.eq_ignore_ascii_case(p))
    };
    match get("sec-fetch-site") {
        Some(site) => site == "same-origin" && origin.is_none_or(|o| o == "null" || origin_ok(o)),
        None => origin.is_some_and(origin_ok),
    }
}

/// A gate decision the guard refuses is still recorded in the ledger, as every refused
/// attempt to decide a gate is.
async fn refuse_gate_too(
    page: &Page,
    req: Request,
    status: StatusCode,
    why: &'static str,
) -> Response {
    if req.method() == Method::POST && req.uri().path() == "/ui/review/gate" {
        views::record_refused_gate(page.clone(), req, why).await;
    }
    refuse(status, why)
}

async fn guard(
    axum::extract::State(page): axum::extract::State<Page>,
    req: Request,
    next: Next,
) -> Response {
    let config = page.config.clone();
    // An agent's credential never opens the page, even next to a valid cookie: what a bearer
    // token may do is the agent's surface, /mcp.
    if req.headers().contains_key(header::AUTHORIZATION) {
        return refuse_gate_too(
            &page,
            req,
            StatusCode::UNAUTHORIZED,
            "the page does not take bearer tokens (those are for agents, at /mcp): sign in with a link from `memdir ui`\n",
        )
        .await;
    }
    let known_host = host_name(req.headers()).is_some_and(|h| {
        config.hosts.iter().any(|k| k.eq_ignore_ascii_case(&h))
            || config
                .public_authority()
                .is_some_and(|p| host_name_of(p).eq_ignore_ascii_case(&h))
    });
    if !known_host {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "unknown host: open the page at the address `memdir ui` prints\n",
        );
    }
    let changes = !matches!(*req.method(), Method::GET | Method::HEAD);
    if changes && !same_origin(req.headers(), &config) {
        return refuse_gate_too(
            &page,
            req,
            StatusCode::FORBIDDEN,
            "refused: this form was not sent from memdir's own page (cross-origin request)\n",
        )
        .await;
    }
    next.run(req).await
}

fn host_name_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or(authority)
    } else {
        authority.split(':').next().unwrap_or(authority)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_the_page_itself_may_post() {
        let c = PageConfig::loopback();
        let host = ("host", "127.0.0.1:8707");
        for (ok, h) in [
            (
                true,
                vec![host, ("sec-fetch-site", "same-origin"), ("origin", "null")],
            ),
            (
                true,
                vec![
                    host,
                    ("sec-fetch-site", "same-origin"),
                    ("origin", "http://127.0.0.1:8707"),
                ],
            ),
            (true, vec![host, ("origin", "http://127.0.0.1:8707")]),
            (
                false,
                vec![host, ("sec-fetch-site", "cross-site"), ("origin", "null")],
            ),
            (
                false,
                vec![
                    host,
                    ("sec-fetch-site", "same-site"),
                    ("origin", "http://localhost:5173"),
                ],
            ),
            (
                false,
                vec![
                    host,
                    ("sec-fetch-site", "same-origin"),
                    ("origin", "http://evil.example"),
                ],
            ),
            (false, vec![host, ("origin", "null")]),
            (false, vec![host, ("origin", "http://127.0.0.1:9999")]),
            (false, vec![host]),
        ] {
            assert_eq!(same_origin(&headers(&h), &c), ok, "{h:?}");
        }
    }

    #[test]
    fn https_public_url_makes_the_cookie_secure() {
        let mut c = PageConfig::loopback();
        assert!(!c.secure());
        c.public_url = Some("https://mem.example.org/".into());
        assert!(c.secure());
        assert_eq!(c.public_authority(), Some("mem.example.org"));
    }
}
