//! `memdir serve` as a multi-tenant memory service: one process in front of a shared store,
//! each tenant reaching its own memory, by bearer token, and nothing else.
//!
//! Routes:
//! - `/mcp`: MCP streamable HTTP, for the tenant whose token comes with the request. Each
//!   tenant has its own rmcp session table, so a session id is only ever found by its tenant.
//! - `POST /v1/tools/{name}`: the tool layer, the tool's arguments as the JSON body; the answer
//!   is `{"text": "...", "is_error": false}`, the same text as `memdir tool`.
//! - `GET /v1/files/{path}`: a file's bytes.
//! - `/healthz` (the process answers), `/readyz` (the store answers), `/metrics` (Prometheus
//!   text; counts only: never a tenant's name, path or content).
//!
//! Guards, outermost first: request body size, the request timeout, the bearer token (looked up
//! in the registry on every request, so a rotated or removed token stops working on every
//! instance at once), the tenant's rate limit, then the tool layer's admission (a bound on
//! calls in flight, on searches in flight overall and per tenant) and its response cap.
//!
//! Open tenants (their engine, sessions and rate limiter) are kept in a table bounded by count
//! and by one memory budget for warm search copies across tenants: past either, the least
//! recently used tenant is closed (its MCP clients start a new session, as they do after a
//! restart). Nothing a tenant owns lives only here: a restart loses nothing.

use crate::http::{Limits, Mcp};
use crate::server::MemdirServer;
use crate::tokens::token_hash;
use crate::tools::{Admission, Tools};
use axum::body::Body;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota as RateQuota, RateLimiter};
use hashlink::LruCache;
use memdir::Memory;
use memdir::tenants::{Tenant, Tenants};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rmcp::transport::StreamableHttpServerConfig;
use serde_json::Value;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

/// What one tenant, and all of them together, may take of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceLimits {
    /// A request body larger than this is refused with `413`.
    pub max_body_bytes: usize,
    /// A tool answer or file larger than this is refused (an error result, or `413` for a file).
    pub max_response_bytes: usize,
    /// Requests per second one tenant may make, on average (per instance).
    pub rate_per_sec: u32,
    /// Requests one tenant may make in a burst above its rate.
    pub rate_burst: u32,
    /// Tool calls running at once, over all tenants.
    pub max_calls: usize,
    /// Searches running at once, over all tenants (each search uses every core it can).
    pub max_searches: usize,
    /// Searches running at once for one tenant.
    pub max_searches_per_tenant: usize,
    /// Tenants kept open at once (least recently used closed first).
    pub max_open_tenants: usize,
    /// Bytes of files held in memory by warm search, over all open tenants.
    pub warm_budget_bytes: usize,
    /// MCP sessions one tenant may hold (the least recently used idle one ended first; `503`
    /// when all are busy).
    pub max_sessions_per_tenant: usize,
    /// How long an instance keeps a token's tenant after looking it up, in milliseconds (0:
    /// look up every request). A rotated or removed token keeps working on an instance for at
    /// most this long.
    pub token_cache_ms: u64,
    /// Bytes the tenants' local search indexes may take on this instance's disk together
    /// (database and object-store tenants; the least recently used tenant's folder is deleted
    /// past it and rebuilt on its next search).
    pub cache_bytes: u64,
    /// Database and object-store tenants whose keyword index stays open between searches
    /// (the most recently used; each holds three descriptors and about 0.3 MB: SQLite's
    /// lookaside and page cache, the schema and the prepared statements).
    pub max_open_indexes: usize,
}

impl Default for ServiceLimits {
    fn default() -> ServiceLimits {
        ServiceLimits {
            max_body_bytes: 4 << 20,
            max_response_bytes: 8 << 20,
            rate_per_sec: 50,
            rate_burst: 100,
            max_calls: 12,
            max_searches: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_searches_per_tenant: 1,
            max_open_tenants: 10_000,
            warm_budget_bytes: 256 << 20,
            max_sessions_per_tenant: 8,
            token_cache_ms: 5_000,
            cache_bytes: 1 << 30,
            max_open_indexes: 64,
        }
    }
}

/// How to serve many tenants.
pub struct ServiceConfig {
    /// The address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Timeouts and connection caps, as for a single memory.
    pub limits: Limits,
    /// Per-tenant and global bounds.
    pub service: ServiceLimits,
    /// The folder that holds each tenant's local search cache as `<folder>/<tenant name>/`,
    /// kept within `service.cache_bytes` (`None`: tenants keep none, e.g. a folder root).
    pub search_cache: Option<std::path::PathBuf>,
    /// The jobs every instance runs (`[jobs]`).
    pub jobs: crate::jobs::Jobs,
}

/// Opens a tenant's memory as the service runs it: its principal as the writer, the operator's
/// embedder, quotas and caches. The memory is opened once and kept while the tenant is open.
pub type Opener = dyn Fn(&Tenant) -> Result<Memory, String> + Send + Sync;

/// One open tenant.
struct Open {
    tenant: Tenant,
    tools: Tools,
    mcp: Mcp,
    limiter: DefaultDirectRateLimiter,
    /// Its warm-search bytes when last measured (after its last request), as counted in
    /// [`Shared::warm_total`].
    warm_seen: AtomicUsize,
    /// Closed (out of the table): a request still running on it no longer counts.
    closed: AtomicBool,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
    outcome: &'static str,
}

type Latency = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// Latency buckets from 0.5 ms to about 16 s.
fn new_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

struct Metrics {
    registry: Registry,
    requests: Family<RouteLabels, Counter>,
    latency: Latency,
    tools: Family<ToolLabels, Counter>,
    open_tenants: Gauge,
    warm_bytes: Gauge,
    rate_limited: Counter,
    unauthorized: Counter,
    /// Credentials found in writes (redacted or refused), from [`memdir::guard::secrets_found`].
    secrets: Counter,
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("memdir");
        let requests = Family::<RouteLabels, Counter>::default();
        let latency: Latency = Family::new_with_constructor(new_histogram);
        let tools = Family::<ToolLabels, Counter>::default();
        let open_tenants = Gauge::default();
        let warm_bytes = Gauge::default();
        let rate_limited = Counter::default();
        let unauthorized = Counter::default();
        let secrets = Counter::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "Time to the response's headers",
            latency.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls by tool and outcome",
            tools.clone(),
        );
        registry.register(
            "open_tenants",
            "Tenants open in this instance",
            open_tenants.clone(),
        );
        registry.register(
            "warm_bytes",
            "Bytes held by warm search over all open tenants",
            warm_bytes.clone(),
        );
        registry.register(
            "rate_limited",
            "Requests refused by a tenant's rate limit",
            rate_limited.clone(),
        );
        registry.register(
            "unauthorized",
            "Requests with a missing or unknown token",
            unauthorized.clone(),
        );
        registry.register(
            "secrets_found",
            "Credentials found in writes, redacted or refused by [secrets] policy",
            secrets.clone(),
        );
        Metrics {
            registry,
            secrets,
            requests,
            latency,
            tools,
            open_tenants,
            warm_bytes,
            rate_limited,
            unauthorized,
        }
    }
}

pub(crate) struct Shared {
    pub(crate) tenants: Arc<dyn Tenants>,
    tokens: crate::token_cache::TokenCache,
    pub(crate) opener: Box<Opener>,
    limits: ServiceLimits,
    session_limits: Limits,
    admission: Arc<Admission>,
    /// Open tenants, least recently used first: a lookup, an insert and closing the oldest are
    /// O(1), and the lock is never held while a tenant opens.
    open: Mutex<LruCache<(String, i64), Arc<Open>>>,
    /// The open tenants' warm-search bytes, kept up to date after each request (no scan).
    warm_total: AtomicUsize,
    /// The tenants' local search caches within their byte budget.
    disk: Option<crate::disk_cache::DiskCache>,
    /// The jobs' counters.
    pub(crate) jobs: crate::jobs::JobMetrics,
    metrics: Metrics,
    rmcp: StreamableHttpServerConfig,
}

impl Shared {
    fn open_table(&self) -> std::sync::MutexGuard<'_, LruCache<(String, i64), Arc<Open>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Measures a tenant's warm-search bytes again (after a request) into the total.
    fn note_warm(&self, o: &Open) {
        if o.closed.load(Ordering::Relaxed) {
            return;
        }
        let now = o.tools.memory().warm_bytes();
        let old = o.warm_seen.swap(now, Ordering::Relaxed);
        let total = if now >= old {
            self.warm_total.fetch_add(now - old, Ordering::Relaxed) + (now - old)
        } else {
            self.warm_total.fetch_sub(old - now, Ordering::Relaxed) - (old - now)
        };
        self.metrics.warm_bytes.set(total as i64);
    }

    /// The open tenant, opening it (and closing the least recently used past the bounds).
    fn get_or_open(&self, tenant: Tenant) -> Result<Arc<Open>, String> {
        let key = (tenant.name.clone(), tenant.created_ms);
        if let Some(o) = self.open_table().get(&key) {
            return Ok(o.clone());
        }
        let mem = (self.opener)(&tenant)?;
        let tools = Tools::new(Arc::new(mem)).with_admission(self.admission.clone());
        let server = MemdirServer::new(tools.clone());
        let mut session_limits = self.session_limits;
        session_limits.max_sessions = self.limits.max_sessions_per_tenant.max(1);
        let mcp = Mcp::new(server, session_limits, self.rmcp.clone());
        let per_sec = NonZeroU32::new(self.limits.rate_per_sec.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(self.limits.rate_burst.max(1)).unwrap_or(NonZeroU32::MIN);
        let open = Arc::new(Open {
            tenant,
            tools,
            mcp,
            limiter: RateLimiter::direct(RateQuota::per_second(per_sec).allow_burst(burst)),
            warm_seen: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        });
        let mut table = self.open_table();
        // Another request may have opened it meanwhile: keep the first.
        let open = match table.get(&key) {
            Some(o) => o.clone(),
            None => {
                table.insert(key.clone(), open.clone());
                open
            }
        };
        // Past the bounds, close the least recently used others (the front of the table; the
        // tenant just used is at the back).
        while table.len() > self.limits.max_open_tenants.max(1)
            || (self.warm_total.load(Ordering::Relaxed) > self.limits.warm_budget_bytes
                && table.len() > 1)
        {
            match table.iter().next().map(|(k, _)| k.clone()) {
                Some(k) if k != key => {
                    if let Some(v) = table.remove(&k) {
                        v.closed.store(true, Ordering::Relaxed);
                        self.warm_total
                            .fetch_sub(v.warm_seen.swap(0, Ordering::Relaxed), Ordering::Relaxed);
                    }
                }
                _ => break,
            }
        }
        self.metrics
            .warm_bytes
            .set(self.warm_total.load(Ordering::Relaxed) as i64);
        self.metrics.open_tenants.set(table.len() as i64);
        Ok(open)
    }
}

/// Opens a tenant's memory by name for the person's page (`None`: no such tenant), through the
/// same table of open tenants the agents' requests use.
pub type TenantMemories = Arc<dyn Fn(&str) -> Result<Option<Memory>, String> + Send + Sync>;

/// Makes the person's page of the service, given the way to its tenants' memories.
pub type PageMaker = Box<dyn FnOnce(TenantMemories) -> crate::http::PageRoutes + Send>;

/// The tenant a request was authenticated as.
#[derive(Clone)]
struct Authed(Arc<Open>);

fn error_json(status: StatusCode, text: impl Into<String>) -> Response {
    let body = serde_json::json!({"text": text.into(), "is_error": true});
    (status, axum::Json(body)).into_response()
}

fn unauthorized(shared: &Shared) -> Response {
    shared.metrics.unauthorized.inc();
    let mut r = (
        StatusCode::UNAUTHORIZED,
        "missing or unknown bearer token: send Authorization: Bearer <token>\n",
    )
        .into_response();
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"memdir\""),
    );
    r
}

/// Finds the tenant of the request's bearer token, checks its rate, and hands it on.
async fn authenticate(State(shared): State<Arc<Shared>>, mut req: Request, next: Next) -> Response {
    let Some(token) = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::http::bearer)
        .map(str::to_string)
    else {
        return unauthorized(&shared);
    };
    req.headers_mut().remove(header::AUTHORIZATION);
    let s = shared.clone();
    let found = tokio::task::spawn_blocking(move || {
        let hash = token_hash(&token);
        let tenant = match s.tokens.get(&hash) {
            Some(t) => Some(t),
            None => {
                let found = s.tenants.by_token(&hash).map_err(|e| e.to_string())?;
                if let Some(t) = &found {
                    s.tokens.put(hash, t.clone());
                }
                found
            }
        };
        tenant.map(|t| s.get_or_open(t)).transpose()
    })
    .await;
    let open = match found {
        Ok(Ok(Some(o))) => o,
        Ok(Ok(None)) => return unauthorized(&shared),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "cannot open a tenant");
            return error_json(
                StatusCode::SERVICE_UNAVAILABLE,
                "the memory store cannot be reached: retry in a moment",
            );
        }
        Err(e) => {
            tracing::error!(error = %e, "tenant lookup failed");
            return error_json(StatusCode::INTERNAL_SERVER_ERROR, "internal error");
        }
    };
    if let Err(not_until) = open.limiter.check() {
        shared.metrics.rate_limited.inc();
        let wait = not_until.wait_time_from(governor::clock::Clock::now(
            &governor::clock::DefaultClock::default(),
        ));
        let mut r = error_json(
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests for this memory: slow down and retry",
        );
        let secs = wait.as_secs().max(1).to_string();
        if let Ok(v) = HeaderValue::from_str(&secs) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return r;
    }
    req.extensions_mut().insert(Authed(open.clone()));
    let in_use = shared
        .disk
        .as_ref()
        .map(|d| d.enter(&open.tenant.name, open.tools.memory().warm_handle()));
    let r = next.run(req).await;
    drop(in_use);
    shared.note_warm(&open);
    r
}

/// Counts and logs every answered request: route, status, time, and the tenant by name (never
/// a token, a path or content).
async fn observe(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let route = route_of(req.uri().path());
    let started = Instant::now();
    let r = next.run(req).await;
    let labels = RouteLabels {
        route,
        status: r.status().as_u16(),
    };
    let took = started.elapsed();
    shared.metrics.requests.get_or_create(&labels).inc();
    shared
        .metrics
        .latency
        .get_or_create(&labels)
        .observe(took.as_secs_f64());
    tracing::info!(
        route,
        status = labels.status,
        ms = took.as_secs_f64() * 1e3,
        "request"
    );
    r
}

fn route_of(path: &str) -> &'static str {
    if path == "/mcp" || path.starts_with("/mcp/") {
        "mcp"
    } else if path.starts_with("/v1/tools/") {
        "tools"
    } else if path.starts_with("/v1/files/") {
        "files"
    } else if path == "/healthz" {
        "healthz"
    } else if path == "/readyz" {
        "readyz"
    } else if path == "/metrics" {
        "metrics"
    } else if path == "/ui" || path.starts_with("/ui/") {
        "ui"
    } else {
        "other"
    }
}

async fn mcp(req: Request) -> Response {
    let Some(Authed(open)) = req.extensions().get::<Authed>().cloned() else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    open.mcp.clone().handle(req).await
}

async fn tool(
    State(shared): State<Arc<Shared>>,
    axum::Extension(Authed(open)): axum::Extension<Authed>,
    UrlPath(name): UrlPath<String>,
    body: axum::body::Bytes,
) -> Response {
    let args: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error_json(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "the body is not JSON ({e}): send the tool's arguments as a JSON object"
                    ),
                );
            }
        }
    };
    let tools = open.tools.clone();
    let called = name.clone();
    let out = tokio::task::spawn_blocking(move || tools.call(&called, args)).await;
    match out {
        Ok(Ok(t)) => {
            let outcome = if t.is_error { "error" } else { "ok" };
            shared
                .metrics
                .tools
                .get_or_create(&ToolLabels {
                    tool: name,
                    outcome,
                })
                .inc();
            axum::Json(serde_json::json!({"text": t.text, "is_error": t.is_error})).into_response()
        }
        Ok(Err(unknown)) => error_json(StatusCode::NOT_FOUND, unknown.to_string()),
        Err(e) => {
            tracing::error!(tenant = %open.tenant.name, error = %e, "tool task failed");
            error_json(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
        }
    }
}

async fn file(
    State(shared): State<Arc<Shared>>,
    axum::Extension(Authed(open)): axum::Extension<Authed>,
    UrlPath(path): UrlPath<String>,
) -> Response {
    let mem = open.tools.memory().clone();
    let max = shared.limits.max_response_bytes;
    let out = tokio::task::spawn_blocking(move || mem.read(&path)).await;
    match out {
        Ok(Ok(bytes)) if bytes.len() > max => error_json(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the file is {} bytes, past this service's response limit of {max}: read a line range with memory_read",
                bytes.len()
            ),
        ),
        Ok(Ok(bytes)) => {
            let mut r = Response::new(Body::from(bytes));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/markdown; charset=utf-8"),
            );
            r
        }
        Ok(Err(e)) => {
            let status = match e.kind() {
                memdir::ErrorKind::NotFound => StatusCode::NOT_FOUND,
                memdir::ErrorKind::Invalid => StatusCode::BAD_REQUEST,
                memdir::ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::CONFLICT,
            };
            error_json(status, e.to_string())
        }
        Err(e) => {
            tracing::error!(error = %e, "file task failed");
            error_json(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
        }
    }
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(shared): State<Arc<Shared>>) -> Response {
    let s = shared.clone();
    match tokio::task::spawn_blocking(move || s.tenants.ready()).await {
        Ok(Ok(())) => "ready\n".into_response(),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "the memory store cannot be reached\n",
            )
                .into_response()
        }
        Err(_) => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let mut out = String::new();
    // The guard counts for the whole process (every tenant's writes); a scrape brings the
    // counter up to it.
    shared
        .metrics
        .secrets
        .inner()
        .fetch_max(memdir::guard::secrets_found(), Ordering::Relaxed);
    if prometheus_client::encoding::text::encode(&mut out, &shared.metrics.registry).is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let mut r = out.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    r
}

/// The service's router; `addr` is the bound address (for rmcp's Host check).
fn router(
    tenants: Arc<dyn Tenants>,
    opener: Box<Opener>,
    config: &ServiceConfig,
    addr: SocketAddr,
    page: Option<PageMaker>,
) -> crate::http::Served {
    let stop_streams = CancellationToken::new();
    let rmcp = crate::http::rmcp_config(addr, Vec::new(), &stop_streams);
    let l = config.service;
    let admission = Arc::new(Admission::new(
        l.max_calls,
        l.max_searches,
        l.max_searches_per_tenant,
        l.max_response_bytes,
    ));
    let mut registry_metrics = Metrics::new();
    let disk = config.search_cache.clone().map(|root| {
        let d = crate::disk_cache::DiskCache::new(root, l.cache_bytes, l.max_open_indexes);
        registry_metrics.registry.register(
            "search_cache_bytes",
            "Bytes of the tenants' local search caches on this instance's disk",
            d.bytes.clone(),
        );
        registry_metrics.registry.register(
            "search_cache_evictions",
            "Tenants' local search caches deleted to stay within [limits] cache_bytes",
            d.evictions.clone(),
        );
        d
    });
    let jobs = crate::jobs::JobMetrics::default();
    registry_metrics.registry.register(
        "jobs_sweeps",
        "Tenants swept by this instance's scheduled sweep ([jobs] sweep_every)",
        jobs.sweeps.clone(),
    );
    registry_metrics.registry.register(
        "jobs_sweep_errors",
        "Scheduled sweeps that failed (retried the next period)",
        jobs.sweep_errors.clone(),
    );
    registry_metrics.registry.register(
        "jobs_consolidations",
        "Tenants consolidated by this instance's scheduled consolidation ([jobs] consolidate_every, consolidate_at)",
        jobs.consolidations.clone(),
    );
    registry_metrics.registry.register(
        "jobs_consolidation_errors",
        "Scheduled consolidations that failed (retried the next period)",
        jobs.consolidation_errors.clone(),
    );
    registry_metrics.registry.register(
        "jobs_consolidation_proposals",
        "Proposals written by this instance's scheduled consolidations",
        jobs.consolidation_proposals.clone(),
    );
    let shared = Arc::new(Shared {
        tenants,
        tokens: crate::token_cache::TokenCache::new(
            std::time::Duration::from_millis(l.token_cache_ms),
            l.max_open_tenants.saturating_mul(2),
        ),
        opener,
        limits: l,
        session_limits: config.limits,
        admission,
        open: Mutex::new(LruCache::new_unbounded()),
        warm_total: AtomicUsize::new(0),
        disk,
        jobs,
        metrics: registry_metrics,
        rmcp,
    });
    crate::jobs::start(shared.clone(), config.jobs.clone());
    let mut tenant_routes = axum::Router::new()
        .route("/mcp", axum::routing::any(mcp))
        .route("/v1/tools/{name}", axum::routing::post(tool))
        .route("/v1/files/{*path}", axum::routing::get(file))
        .route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            authenticate,
        ));
    let page = page.map(|make| {
        let s = shared.clone();
        make(Arc::new(move |name: &str| {
            let Some(tenant) = s.tenants.get(name).map_err(|e| e.to_string())? else {
                return Ok(None);
            };
            let open = s.get_or_open(tenant)?;
            let memory = open.tools.memory();
            // In the local cache's table with its warm state, so an index the page opens is
            // closed before the tenant's folder is deleted.
            if let Some(d) = &s.disk {
                drop(d.enter(&open.tenant.name, memory.warm_handle()));
            }
            Ok(Some(Memory::clone(memory)))
        }))
    });
    if let Some(p) = &page {
        // A person's session never stands in for a tenant's token.
        tenant_routes = tenant_routes.route_layer(axum::middleware::from_fn_with_state(
            p.cookie,
            crate::http::refuse_page_cookie,
        ));
    }
    let mut router: axum::Router = axum::Router::new()
        .merge(tenant_routes)
        .route("/healthz", axum::routing::get(healthz))
        .route("/readyz", axum::routing::get(readyz))
        .route("/metrics", axum::routing::get(metrics))
        .with_state(shared.clone());
    if let Some(p) = page {
        router = router.merge(p.router);
    }
    let router = router
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            config.limits.request_timeout,
        ))
        .layer(RequestBodyLimitLayer::new(l.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            observe,
        ));
    crate::http::Served {
        router,
        stop_streams,
    }
}

/// Refuses a configuration that cannot work.
pub fn check(config: &ServiceConfig) -> Result<(), String> {
    let l = &config.service;
    for (name, v) in [
        ("max_body_bytes", l.max_body_bytes),
        ("max_response_bytes", l.max_response_bytes),
        ("max_calls", l.max_calls),
        ("max_searches", l.max_searches),
        ("max_searches_per_tenant", l.max_searches_per_tenant),
        ("max_open_tenants", l.max_open_tenants),
        ("max_sessions_per_tenant", l.max_sessions_per_tenant),
    ] {
        if v == 0 {
            return Err(format!("limits.{name} is 0: set it to at least 1"));
        }
    }
    if l.rate_per_sec == 0 || l.rate_burst == 0 {
        return Err("limits.rate_per_sec and limits.rate_burst must be at least 1".into());
    }
    Ok(())
}

/// Serves every tenant of `tenants` until interrupted (Ctrl-C or SIGTERM), as
/// [`crate::http::serve`] does for one memory. `on_ready` is told the bound address.
pub fn serve(
    tenants: Arc<dyn Tenants>,
    opener: Box<Opener>,
    config: ServiceConfig,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    serve_with_page(tenants, opener, config, None, on_ready)
}

/// [`serve`], with the person's page of every tenant mounted beside the agents' routes when
/// `page` is given. The page has its own sign-in; the agents' routes refuse a request that
/// carries the page's session cookie.
pub fn serve_with_page(
    tenants: Arc<dyn Tenants>,
    opener: Box<Opener>,
    config: ServiceConfig,
    page: Option<PageMaker>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    check(&config)?;
    let (listen, limits) = (config.listen, config.limits);
    crate::http::serve_with(
        listen,
        limits,
        move |addr| router(tenants, opener, &config, addr, page),
        on_ready,
    )
}
