//! MCP over streamable HTTP at `/mcp`: the same [`MemdirServer`] behind rmcp's tower service,
//! served by axum.
//!
//! Guards, in order: an optional bearer token (compared in constant time, removed from the
//! request before rmcp sees it, never logged); rmcp's `Host` check (loopback names unless the
//! server listens elsewhere); and rmcp's `Origin` check, enforced so that a browser page can only
//! reach the server from an origin named with `--allow-origin`. Those origins also get CORS:
//! their preflight `OPTIONS` is answered and their responses carry
//! `Access-Control-Allow-Origin`. A non-loopback address is refused without a token.

use crate::server::MemdirServer;
use crate::tools::Tools;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;

/// How to serve.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// The bearer token clients must send, if any.
    pub token: Option<String>,
    /// Browser origins allowed to call (e.g. `http://localhost:5173`); others get 403.
    pub allowed_origins: Vec<String>,
}

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// Compares two byte strings in time that depends only on their lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The credentials of an `Authorization: Bearer <token>` header; the scheme name is
/// case-insensitive (RFC 9110, section 11.1).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// The headers a browser page may send to the MCP endpoint, and the one it may read back.
const CORS_ALLOW_HEADERS: &str =
    "authorization, content-type, accept, last-event-id, mcp-session-id, mcp-protocol-version";
const CORS_EXPOSE_HEADERS: &str = "mcp-session-id";

/// CORS for the origins named with `--allow-origin`: answers their preflight `OPTIONS` (before
/// the token check, since browsers send no credentials there) and marks their responses
/// readable. Other origins get no CORS headers; rmcp's `Origin` check refuses them.
async fn cors(State(origins): State<Arc<Vec<String>>>, req: Request, next: Next) -> Response {
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .filter(|o| origins.iter().any(|a| a.as_bytes() == o.as_bytes()))
        .cloned();
    let Some(origin) = origin else {
        return next.run(req).await;
    };
    let preflight = req.method() == axum::http::Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut r = if preflight {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(CORS_ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        next.run(req).await
    };
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(CORS_EXPOSE_HEADERS),
    );
    h.append(header::VARY, HeaderValue::from_static("origin"));
    r
}

async fn require_token(State(token): State<Arc<String>>, mut req: Request, next: Next) -> Response {
    let ok = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .is_some_and(|given| same(given.as_bytes(), token.as_bytes()));
    if !ok {
        let mut r = (
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send Authorization: Bearer <token>\n",
        )
            .into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"memdir\""),
        );
        return r;
    }
    req.headers_mut().remove(header::AUTHORIZATION);
    next.run(req).await
}

/// Checks the config before anything binds: a public address needs a token.
pub fn check(config: &HttpConfig) -> Result<(), String> {
    if !config.listen.ip().is_loopback() && config.token.is_none() {
        return Err(format!(
            "refusing to listen on {} without a token: set MEMDIR_TOKEN or --token-file, or listen on 127.0.0.1",
            config.listen
        ));
    }
    if config.token.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err("the token is empty: put a long random string in it".into());
    }
    Ok(())
}

/// Serves until interrupted (Ctrl-C or SIGTERM). `on_ready` is told the bound address.
pub fn serve(
    tools: Tools,
    config: HttpConfig,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    check(&config)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;
        let mut rmcp_config = StreamableHttpServerConfig::default()
            .with_allowed_origins(config.allowed_origins.clone())
            .enforce_origin_validation();
        if !addr.ip().is_loopback() {
            rmcp_config = if addr.ip().is_unspecified() {
                rmcp_config.disable_allowed_hosts()
            } else {
                rmcp_config.with_allowed_hosts([addr.ip().to_string()])
            };
        }
        let server = MemdirServer::new(tools);
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            rmcp_config,
        );
        let mut router = axum::Router::new().nest_service(MCP_PATH, service);
        if let Some(token) = config.token {
            router = router.layer(axum::middleware::from_fn_with_state(
                Arc::new(token.trim().to_string()),
                require_token,
            ));
        }
        if !config.allowed_origins.is_empty() {
            // Outermost, so a preflight is answered before the token check.
            router = router.layer(axum::middleware::from_fn_with_state(
                Arc::new(config.allowed_origins.clone()),
                cors,
            ));
        }
        on_ready(addr);
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown())
            .await
            .map_err(|e| format!("http server failed: {e}"))
    })
}

async fn shutdown() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearerabc"), None);
    }

    #[test]
    fn token_compare_is_exact() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }

    #[test]
    fn public_address_needs_a_token() {
        let mut c = HttpConfig {
            listen: "0.0.0.0:0".parse().unwrap(),
            token: None,
            allowed_origins: vec![],
        };
        assert!(check(&c).unwrap_err().contains("without a token"));
        c.token = Some("s3cret-long".into());
        assert!(check(&c).is_ok());
        c.listen = "127.0.0.1:0".parse().unwrap();
        c.token = None;
        assert!(check(&c).is_ok());
    }
}
