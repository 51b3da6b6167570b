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
use crate::stdio::{Verdict, judge_body};
use crate::tools::Tools;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_core::Stream;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;
use tower_http::timeout::TimeoutLayer;

/// How to serve.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// The bearer token clients must send, if any.
    pub token: Option<String>,
    /// Browser origins allowed to call (e.g. `http://localhost:5173`); others get 403.
    pub allowed_origins: Vec<String>,
    /// Timeouts and caps.
    pub limits: Limits,
}

/// What one client, or a flood of them, may hold of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request's headers must arrive within this of the connection opening or of the previous
    /// response; a connection that sends nothing (or trickles, slowloris) is closed after it.
    pub header_timeout: Duration,
    /// A request must be read (body included) and its response begun within this, or it is
    /// answered `408`. Streamed responses (SSE) are not cut by it.
    pub request_timeout: Duration,
    /// Open connections at most. At the cap, a new connection closes the oldest idle one (no
    /// request in flight); when none is idle it is answered `503`.
    pub max_connections: usize,
    /// MCP sessions at most; at the cap, a new session ends the least recently used one with no
    /// request in flight (its client gets `404` and starts a new session, as MCP clients do),
    /// or is answered `503` with `Retry-After` when every session is busy.
    pub max_sessions: usize,
    /// A session with no message for this long is ended.
    pub session_idle: Duration,
    /// On SIGTERM or Ctrl-C, in-flight requests get this long to finish before streams and
    /// sessions are ended and the process exits.
    pub shutdown_timeout: Duration,
}

impl Limits {
    /// The defaults: 10 s for headers, 30 s for a request, 256 connections, 64 sessions ended
    /// after 5 minutes idle, 10 s to shut down.
    pub const DEFAULT: Limits = Limits {
        header_timeout: Duration::from_secs(10),
        request_timeout: Duration::from_secs(30),
        max_connections: 256,
        max_sessions: 64,
        session_idle: Duration::from_secs(300),
        shutdown_timeout: Duration::from_secs(10),
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

use memdir::tenants::same;

/// The credentials of an `Authorization: Bearer <token>` header; the scheme name is
/// case-insensitive (RFC 9110, section 11.1).
pub(crate) fn bearer(value: &str) -> Option<&str> {
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
///
/// On a signal: no new connection is accepted, idle connections close, requests in flight get
/// [`Limits::shutdown_timeout`] to finish, then every stream and session is ended and the call
/// returns (a tool call already running on a blocking thread, such as a write, is waited for
/// within the same bound).
pub fn serve(
    tools: Tools,
    config: HttpConfig,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    serve_with_page(tools, config, None, on_ready)
}

/// A person's page served beside `/mcp` (memdir-ui's routes, all under their own prefix). It
/// sits outside the bearer-token check, since it has its own sign-in; and the agent's endpoint
/// refuses any request that carries the page's session `cookie`, so a person's session never
/// stands in for an agent's credential.
pub struct PageRoutes {
    /// The page's routes, with their own guards.
    pub router: axum::Router,
    /// The name of the page's session cookie.
    pub cookie: &'static str,
}

/// [`serve`], with a person's page mounted beside `/mcp` when one is given.
pub fn serve_with_page(
    tools: Tools,
    config: HttpConfig,
    page: Option<PageRoutes>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    check(&config)?;
    let listen = config.listen;
    let limits = config.limits;
    serve_with(
        listen,
        limits,
        move |addr| {
            let mut served = router(tools, &config, addr, page.as_ref().map(|p| p.cookie));
            if let Some(page) = page {
                served.router =
                    served
                        .router
                        .merge(page.router)
                        .layer(TimeoutLayer::with_status_code(
                            StatusCode::REQUEST_TIMEOUT,
                            config.limits.request_timeout,
                        ));
            }
            served
        },
        on_ready,
    )
}

/// Refuses a request to the agent's endpoint that carries a person's session cookie.
pub(crate) async fn refuse_page_cookie(
    State(cookie): State<&'static str>,
    req: Request,
    next: Next,
) -> Response {
    let carries = req
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|kv| kv.trim().split('=').next() == Some(cookie));
    if carries {
        return (
            StatusCode::UNAUTHORIZED,
            "a person's page session does not open the agent's endpoint: send the agent's bearer token, without the page's cookie\n",
        )
            .into_response();
    }
    next.run(req).await
}

/// Binds `listen`, builds the routes for the bound address and serves them with the accept
/// loop until interrupted, as [`serve`] says; the multi-tenant service uses it too.
pub(crate) fn serve_with(
    listen: SocketAddr,
    limits: Limits,
    routes: impl FnOnce(SocketAddr) -> Served + Send + 'static,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let out = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the bound address: {e}"))?;
        let served = routes(addr);
        on_ready(addr);
        Ok(run(listener, served, limits, shutdown()).await)
    });
    // Blocking tool calls (file writes) still running get what is left of the bound; the
    // process then exits whatever is left.
    let left = out.as_ref().map_or(Duration::ZERO, |deadline| {
        deadline.saturating_duration_since(tokio::time::Instant::now())
    });
    rt.shutdown_timeout(left.max(Duration::from_millis(100)));
    out.map(drop)
}

/// The MCP service with its guards, layered as the module docs say.
/// rmcp's settings for a server bound to `addr`: the Origin check enforced for `origins`, the
/// Host check kept to loopback names unless it listens elsewhere, and streams ended by `stop`.
pub(crate) fn rmcp_config(
    addr: SocketAddr,
    origins: Vec<String>,
    stop: &CancellationToken,
) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(stop.clone());
    if addr.ip().is_loopback() {
        config
    } else if addr.ip().is_unspecified() {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts([addr.ip().to_string()])
    }
}

fn router(
    tools: Tools,
    config: &HttpConfig,
    addr: SocketAddr,
    page_cookie: Option<&'static str>,
) -> Served {
    let stop_streams = CancellationToken::new();
    let rmcp_config = rmcp_config(addr, config.allowed_origins.clone(), &stop_streams);
    let mcp = Mcp::new(MemdirServer::new(tools), config.limits, rmcp_config);
    let service = tower::service_fn(move |req: Request| {
        let mcp = mcp.clone();
        async move { Ok::<_, Infallible>(mcp.handle(req).await) }
    });
    let mut router =
        axum::Router::new()
            .nest_service(MCP_PATH, service)
            .layer(TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                config.limits.request_timeout,
            ));
    if let Some(token) = &config.token {
        router = router.layer(axum::middleware::from_fn_with_state(
            Arc::new(token.trim().to_string()),
            require_token,
        ));
    }
    if let Some(cookie) = page_cookie {
        router = router.layer(axum::middleware::from_fn_with_state(
            cookie,
            refuse_page_cookie,
        ));
    }
    if !config.allowed_origins.is_empty() {
        // Outermost, so a preflight is answered before the token check.
        router = router.layer(axum::middleware::from_fn_with_state(
            Arc::new(config.allowed_origins.clone()),
            cors,
        ));
    }
    Served {
        router,
        stop_streams,
    }
}

/// The router, and the token that ends its SSE streams and sessions.
pub(crate) struct Served {
    pub(crate) router: axum::Router,
    pub(crate) stop_streams: CancellationToken,
}

/// What a connection holds: how many of its requests are in flight (from their headers to the
/// end of their response body), and the token that closes it.
struct Conn {
    busy: AtomicUsize,
    close: CancellationToken,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Conns {
    open: Mutex<BTreeMap<u64, Arc<Conn>>>,
    next: AtomicU64,
}

impl Conns {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes the oldest connection with no request in flight; false if there is none.
    fn close_oldest_idle(&self) -> bool {
        let mut open = self.lock();
        let idle = open
            .iter()
            .find(|(_, c)| c.busy.load(Ordering::Acquire) == 0)
            .map(|(id, _)| *id);
        match idle.and_then(|id| open.remove(&id)) {
            Some(c) => {
                c.close.cancel();
                true
            }
            None => false,
        }
    }
}

/// Counts a request as in flight until its response body is dropped (sent, or the connection
/// gone). Requests other than `GET` (which opens a long-lived SSE stream) are also counted in
/// `messages`, which shutdown waits on.
struct Busy {
    conn: Arc<Conn>,
    messages: Option<Arc<watch::Sender<usize>>>,
}

impl Busy {
    fn start(conn: &Arc<Conn>, messages: &Arc<watch::Sender<usize>>, method: &Method) -> Busy {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        let messages = (method != Method::GET).then(|| {
            messages.send_modify(|n| *n += 1);
            messages.clone()
        });
        Busy {
            conn: conn.clone(),
            messages,
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn.busy.fetch_sub(1, Ordering::AcqRel);
        if let Some(m) = &self.messages {
            m.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// What a connection gets when every connection is busy.
const BUSY_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-type: text/plain\r\ncontent-length: 47\r\nconnection: close\r\n\r\ntoo many connections in use: retry in a moment\n";

/// The accept loop: serves connections until `stop` resolves, then shuts down as [`serve`]
/// says.
async fn run(
    listener: tokio::net::TcpListener,
    served: Served,
    limits: Limits,
    stop: impl Future<Output = ()>,
) -> tokio::time::Instant {
    let Served {
        router,
        stop_streams,
    } = served;
    let conns = Arc::new(Conns::default());
    let closing = CancellationToken::new();
    let messages = Arc::new(watch::Sender::new(0usize));
    let tasks = TaskTracker::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let mut stop = pin!(stop);
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut stop => break,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors (EMFILE, ENFILE), or a connection that died in the queue.
                // The loop goes on; closing an idle connection frees a descriptor for the
                // connection still waiting (after its task has run, hence the pause).
                tracing::warn!("cannot accept a connection: {e}");
                let pause = if conns.close_oldest_idle() { 5 } else { 50 };
                tokio::time::sleep(Duration::from_millis(pause)).await;
                continue;
            }
        };
        let full = conns.lock().len() >= limits.max_connections;
        if full && !conns.close_oldest_idle() {
            tracing::warn!(
                "{} connections open and all busy: refusing one",
                limits.max_connections
            );
            let _ = stream.try_write(BUSY_RESPONSE);
            continue;
        }
        let id = conns.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            busy: AtomicUsize::new(0),
            close: closing.child_token(),
        });
        conns.lock().insert(id, conn.clone());
        let service = {
            let (conn, messages, router) = (conn.clone(), messages.clone(), router.clone());
            hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let busy = Busy::start(&conn, &messages, req.method());
                let response = router.clone().oneshot(req.map(axum::body::Body::new));
                async move {
                    let response = response.await?;
                    Ok::<_, Infallible>(response.map(|inner| Held {
                        inner,
                        _guard: busy,
                    }))
                }
            })
        };
        let served = http.serve_connection(TokioIo::new(stream), service);
        let conns = conns.clone();
        tasks.spawn(async move {
            let mut served = pin!(served);
            tokio::select! {
                r = served.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!("connection ended: {e}");
                    }
                }
                () = conn.close.cancelled() => {
                    // Closed to make room, or shutting down: an idle connection is dropped
                    // now; a busy one finishes its response first.
                    if conn.busy.load(Ordering::Acquire) > 0 {
                        served.as_mut().graceful_shutdown();
                        let _ = served.await;
                    }
                }
            }
            conns.lock().remove(&id);
        });
    }
    drop(listener);
    closing.cancel();
    let deadline = tokio::time::Instant::now() + limits.shutdown_timeout;
    // Messages in flight finish; SSE streams (GET) would never end by themselves.
    let mut left = messages.subscribe();
    let _ = tokio::time::timeout_at(deadline, left.wait_for(|n| *n == 0)).await;
    stop_streams.cancel();
    tasks.close();
    if tokio::time::timeout_at(deadline, tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown timeout: closing them");
    }
    deadline
}

/// rmcp's in-memory sessions, capped: a new session past [`Limits::max_sessions`] ends the
/// least recently used session with no request in flight; when every session is busy, the new
/// one is refused (the client gets `503` with `Retry-After`, see [`Mcp`]). A session is never
/// ended under a request, so a tool call that ran is always answered. Sessions idle for
/// [`Limits::session_idle`] end by themselves (rmcp's keep-alive), and rmcp then closes them
/// here.
///
/// This table, not rmcp's, says which sessions exist: a session leaves it before rmcp is told
/// to close it, and [`Mcp`] answers `404` for a session not in it, so no request can reach a
/// session that is being closed.
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    table: Mutex<Table>,
    max: usize,
}

/// The sessions open, and those being made.
#[derive(Default)]
struct Table {
    open: HashMap<SessionId, Use>,
    /// Sessions counted against the cap while rmcp makes them.
    making: usize,
}

/// What the table knows of one session.
struct Use {
    /// When a request for it last arrived.
    last: Instant,
    /// Its requests in flight (from their headers to the end of their response), plus one
    /// while its `initialize` runs.
    busy: usize,
}

/// Why a session could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    /// rmcp's own failure.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// Every session has a request in flight.
    #[error("every session is busy")]
    Full,
}

tokio::task_local! {
    /// Set by [`Sessions::create_session`] when it refuses a session for being full, for the
    /// [`Mcp`] request around it to answer `503` (rmcp would answer any error with `500`).
    static REFUSED: std::cell::Cell<bool>;
}

/// A request in flight on a session: the session is not ended while this lives.
pub(crate) struct Hold {
    sessions: Arc<Sessions>,
    id: SessionId,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.sessions.release(&self.id);
    }
}

impl Sessions {
    pub(crate) fn new(limits: Limits) -> Sessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.session_idle);
        Sessions {
            inner,
            table: Mutex::new(Table::default()),
            max: limits.max_sessions.max(1),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks a request on `id` in flight; `None` if there is no such session.
    fn hold(self: &Arc<Self>, id: &SessionId) -> Option<Hold> {
        let mut table = self.table();
        let u = table.open.get_mut(id)?;
        u.busy += 1;
        u.last = Instant::now();
        Some(Hold {
            sessions: self.clone(),
            id: id.clone(),
        })
    }

    fn release(&self, id: &SessionId) {
        if let Some(u) = self.table().open.get_mut(id) {
            u.busy = u.busy.saturating_sub(1);
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Some(u) = self.table().open.get_mut(id) {
            u.last = Instant::now();
        }
    }
}

/// A session being made, counted in [`Table::making`] until dropped.
struct Making<'a>(&'a Sessions);

impl Drop for Making<'_> {
    fn drop(&mut self) {
        let mut table = self.0.table();
        table.making = table.making.saturating_sub(1);
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let evicted = {
            let mut table = self.table();
            let evicted = if table.open.len() + table.making >= self.max {
                let idle = table
                    .open
                    .iter()
                    .filter(|(_, u)| u.busy == 0)
                    .min_by_key(|(_, u)| u.last)
                    .map(|(id, _)| id.clone());
                let Some(id) = idle else {
                    tracing::warn!("{} sessions open and all busy: refusing one", self.max);
                    let _ = REFUSED.try_with(|r| r.set(true));
                    return Err(SessionsError::Full);
                };
                table.open.remove(&id);
                Some(id)
            } else {
                None
            };
            // Counted under the same lock, so concurrent sessions cannot overshoot the cap.
            table.making += 1;
            evicted
        };
        // Uncounted however this ends, the request dropped midway included.
        let making = Making(self);
        if let Some(id) = evicted {
            tracing::warn!("{} sessions open: ending the least recently used", self.max);
            self.inner.close_session(&id).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        let mut table = self.table();
        table.open.insert(
            id.clone(),
            Use {
                last: Instant::now(),
                busy: 1,
            },
        );
        table.making -= 1;
        drop(table);
        std::mem::forget(making);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let answer = self.inner.initialize_session(id, message).await;
        // The session was busy from its creation until now.
        self.release(id);
        Ok(answer?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        let known = self.table().open.contains_key(id);
        Ok(known && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.table().open.remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// rmcp's MCP service over a capped [`Sessions`] table: a `POST` on a session holds it busy
/// until its response has been sent (or dropped), a `POST` on a session not in the table gets
/// `404`, and a new session refused because every session is busy gets `503` with
/// `Retry-After`.
#[derive(Clone)]
pub(crate) struct Mcp {
    service: StreamableHttpService<MemdirServer, Sessions>,
    sessions: Arc<Sessions>,
    /// rmcp's cap on a request body, which [`Mcp::judged`] reads first.
    max_body: usize,
}

impl Mcp {
    pub(crate) fn new(
        server: MemdirServer,
        limits: Limits,
        config: StreamableHttpServerConfig,
    ) -> Mcp {
        let sessions = Arc::new(Sessions::new(limits));
        let max_body = config.max_request_body_bytes;
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
        Mcp {
            service,
            sessions,
            max_body,
        }
    }

    /// Reads a JSON `POST`'s body and answers one that is not a JSON-RPC message the way stdio
    /// does (`400` with a `-32700` parse error, or `-32600` for JSON that is no message, with
    /// the request's `id` when it can be read), where rmcp would answer `415` as if the
    /// content type were wrong. Anything else goes on to rmcp with its body read.
    async fn judged(&self, req: Request) -> Result<Request, Response> {
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
                essence.trim().eq_ignore_ascii_case("application/json")
            });
        if req.method() != Method::POST || !json {
            return Ok(req);
        }
        let (parts, body) = req.into_parts();
        let bytes = match http_body_util::BodyExt::collect(http_body_util::Limited::new(
            body,
            self.max_body,
        ))
        .await
        {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                let why = format!(
                    "Payload Too Large: request body exceeds {} bytes",
                    self.max_body
                );
                return Err((StatusCode::PAYLOAD_TOO_LARGE, why).into_response());
            }
            Err(e) => {
                let why = format!("cannot read the request body: {e}");
                return Err((StatusCode::BAD_REQUEST, why).into_response());
            }
        };
        if let Verdict::Reply(reply) = judge_body(&bytes) {
            return Err((StatusCode::BAD_REQUEST, axum::Json(reply)).into_response());
        }
        Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
    }

    pub(crate) async fn handle(self, req: Request) -> Response {
        let session = req
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(SessionId::from);
        let hold = match session {
            Some(id) if req.method() == Method::POST => match self.sessions.hold(&id) {
                Some(hold) => Some(hold),
                None => {
                    return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
                }
            },
            _ => None,
        };
        let req = match self.judged(req).await {
            Ok(req) => req,
            Err(answer) => return answer,
        };
        let (response, refused) = REFUSED
            .scope(std::cell::Cell::new(false), async move {
                let Ok(r) = self.service.oneshot(req).await;
                (r, REFUSED.with(std::cell::Cell::get))
            })
            .await;
        if refused {
            let mut r = (
                StatusCode::SERVICE_UNAVAILABLE,
                "every MCP session is busy: retry in a moment\n",
            )
                .into_response();
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return r;
        }
        response.map(|inner| match hold {
            Some(hold) => axum::body::Body::new(Held {
                inner,
                _guard: hold,
            }),
            None => axum::body::Body::new(inner),
        })
    }
}

/// A response body that holds `G` (its connection or session counted busy) while it is being
/// sent, and lets it go when the body is done or dropped.
struct Held<B, G> {
    inner: B,
    _guard: G,
}

impl<B: http_body::Body + Unpin, G: Unpin> http_body::Body for Held<B, G> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Resolves on Ctrl-C or SIGTERM.
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
            limits: Limits::default(),
        };
        assert!(check(&c).unwrap_err().contains("without a token"));
        c.token = Some("s3cret-long".into());
        assert!(check(&c).is_ok());
        c.listen = "127.0.0.1:0".parse().unwrap();
        c.token = None;
        assert!(check(&c).is_ok());
    }
}
