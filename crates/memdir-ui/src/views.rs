//! The pages: one handler per view, each reading a signed-in session, calling the engine's
//! public API on a blocking thread and rendering a template. These URLs are a contract (other
//! programs link to them): `/ui/`, `/ui/files/<path>`, `/ui/search?q=`, `/ui/history`,
//! `/ui/review`.
// A refusal is a whole page (a `Response`), made at most once per request; boxing it would
// only add noise.
#![allow(clippy::result_large_err)]

use crate::auth::{self, SESSION_COOKIE, Session};
use crate::markdown::{self, Links, encode_path};
use crate::{Page, Realm};
use askama::Template;
use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use memdir::gates::{Presence, Verdict};
use memdir::{EntryKind, ErrorKind, Memory};
use memdir_core::note::Note;
use serde::Deserialize;

/// The vendored stylesheet, served by memdir (no asset from another origin).
const STYLE: &str = include_str!("../static/memdir.css");

pub(crate) fn routes(page: Page) -> Router {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(context))
        .route("/ui/static/memdir.css", get(style))
        .route("/ui/signin", get(signin_page).post(signin))
        .route("/ui/sso", get(sso_page).post(sso))
        .route("/ui/signout", post(signout))
        .route(
            "/ui/files",
            get(|| async { Redirect::permanent("/ui/files/") }),
        )
        .route("/ui/files/", get(files_root))
        .route("/ui/files/{*path}", get(files))
        .route("/ui/edit/{*path}", get(edit_page).post(edit))
        .route("/ui/new", get(new_page).post(new_note))
        .route("/ui/rename/{*path}", post(rename))
        .route("/ui/delete/{*path}", post(delete))
        .route("/ui/review", get(review))
        .route("/ui/review/proposal", post(decide_proposal))
        .route("/ui/review/gate", post(decide_gate))
        .route("/ui/search", get(search))
        .route("/ui/history", get(history))
        .route("/ui/lint", get(lint))
        .route("/ui/blame/{*path}", get(blame))
        .route("/ui/undo", get(undo_page).post(undo))
        .route("/ui/change/{commit}", get(crate::changes::change))
        .route(
            "/ui/restore",
            get(crate::changes::restore_page).post(crate::changes::restore),
        )
        .with_state(page)
}

async fn style() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}

/// What a handler returns: a page, or a page saying why not.
pub(crate) type Out = Result<Response, Response>;

/// Runs `f` (engine calls block on files, git and locks) off the async threads.
pub(crate) async fn blocking(f: impl FnOnce() -> Out + Send + 'static) -> Response {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(r)) | Ok(Err(r)) => r,
        Err(e) => {
            tracing::error!("a page's handler failed: {e}");
            message_page(
                None,
                StatusCode::INTERNAL_SERVER_ERROR,
                "memdir failed",
                "the page failed: see the server's log",
            )
        }
    }
}

/// The header of every page.
#[derive(Clone)]
pub(crate) struct Nav {
    pub(crate) person: String,
    pub(crate) csrf: String,
    pub(crate) pending: usize,
}

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage<'a> {
    nav: Option<Nav>,
    title: &'a str,
    message: &'a str,
}

pub(crate) fn html(status: StatusCode, t: &impl Template) -> Response {
    match t.render() {
        Ok(body) => (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response(),
        Err(e) => {
            tracing::error!("a template failed: {e}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page failed to render\n",
            )
                .into_response()
        }
    }
}

pub(crate) fn message_page(
    nav: Option<Nav>,
    status: StatusCode,
    title: &str,
    message: &str,
) -> Response {
    html(
        status,
        &MessagePage {
            nav,
            title,
            message,
        },
    )
}

/// The page for an engine error: memdir's own message, with the status its kind means.
pub(crate) fn engine_error(nav: Option<Nav>, e: &memdir::Error) -> Response {
    let status = match e.kind() {
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::Invalid => StatusCode::BAD_REQUEST,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Unavailable => StatusCode::INTERNAL_SERVER_ERROR,
    };
    message_page(nav, status, "refused", &e.to_string())
}

fn auth_error(e: &auth::AuthError) -> Response {
    match e {
        auth::AuthError::BadCode | auth::AuthError::BadLink | auth::AuthError::NoTenant => {
            message_page(
                None,
                StatusCode::UNAUTHORIZED,
                "sign-in link not valid",
                &e.to_string(),
            )
        }
        auth::AuthError::Sso(_) | auth::AuthError::BadPerson(_) => message_page(
            None,
            StatusCode::UNAUTHORIZED,
            "sign-in refused",
            &e.to_string(),
        ),
        auth::AuthError::Store(_) => message_page(
            None,
            StatusCode::INTERNAL_SERVER_ERROR,
            "memdir failed",
            &e.to_string(),
        ),
    }
}

/// The value of the session cookie, if the request carries one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == SESSION_COOKIE)
        .map(|(_, v)| v.trim().to_string())
}

impl Page {
    /// The signed-in session of this request, or the page that says to sign in.
    pub(crate) fn session(&self, headers: &HeaderMap) -> Result<Session, Response> {
        let not_in = || {
            message_page(
                None,
                StatusCode::UNAUTHORIZED,
                "sign in",
                &format!("you are not signed in. {}", self.how_to_sign_in()),
            )
        };
        let secret = cookie(headers).ok_or_else(not_in)?;
        let found = match &*self.realm {
            Realm::One(mem) => auth::session(mem, &secret),
            Realm::Service(svc) => svc.session(&secret),
        };
        match found {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err(not_in()),
            Err(e) => Err(auth_error(&e)),
        }
    }

    /// What a person does to sign in here.
    fn how_to_sign_in(&self) -> &'static str {
        match &*self.realm {
            Realm::One(_) => {
                "To sign in, run `memdir ui` on the machine that holds this memory and open the link it prints."
            }
            Realm::Service(_) => {
                "To sign in, open a new sign-in link from the service that holds your memory."
            }
        }
    }

    /// The session, and for a form its CSRF token checked.
    pub(crate) fn session_for_form(
        &self,
        headers: &HeaderMap,
        csrf: &str,
    ) -> Result<Session, Response> {
        let s = self.session(headers)?;
        if !auth::same(&s.csrf, csrf) {
            return Err(message_page(
                None,
                StatusCode::FORBIDDEN,
                "refused",
                "this form's security token does not belong to your session: reload the page and try again",
            ));
        }
        Ok(s)
    }

    /// The memory, written by the signed-in person.
    pub(crate) fn as_person(&self, s: &Session) -> Memory {
        s.mem
            .with_actor(memdir::Actor {
                writer: s.person.clone(),
                source: memdir::Source::User,
            })
            .with_via(Some("web"))
    }

    pub(crate) fn nav(&self, s: &Session) -> Nav {
        let pending =
            s.mem.proposals().map_or(0, |p| p.len()) + s.mem.gate_pending().map_or(0, |g| g.len());
        Nav {
            person: s.person.clone(),
            csrf: s.csrf.clone(),
            pending,
        }
    }
}

/// A time as a person reads it, in the memory's time zone: `30 Nov 2026, 09:15 UTC`; the
/// text as it was when it is not an RFC 3339 time.
pub(crate) fn when(mem: &Memory, rfc3339: &str) -> String {
    match rfc3339.parse::<jiff::Timestamp>() {
        Ok(t) => t
            .to_zoned_datetime(mem.clock().now().time_zone().clone())
            .strftime("%-d %b %Y, %H:%M %Z")
            .to_string(),
        Err(_) => rfc3339.to_string(),
    }
}

/// A 303 to a page of this site; `to` is built from encoded parts, and anything that still
/// could not be a header value goes to the start page instead of failing.
pub(crate) fn see_other(to: &str) -> Response {
    let value = HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/ui/"));
    (StatusCode::SEE_OTHER, [(header::LOCATION, value)]).into_response()
}

// ---------------------------------------------------------------- sign-in

#[derive(Deserialize)]
struct CodeQuery {
    #[serde(default)]
    code: String,
}

#[derive(Template)]
#[template(path = "signin.html")]
struct SigninPage {
    nav: Option<Nav>,
    /// Where the button posts, and the name of the field that carries the code or token.
    action: &'static str,
    field: &'static str,
    code: String,
}

async fn signin_page(State(p): State<Page>, Query(q): Query<CodeQuery>) -> Response {
    blocking(move || {
        if q.code.is_empty() {
            return Ok(message_page(
                None,
                StatusCode::UNAUTHORIZED,
                "sign in",
                p.how_to_sign_in(),
            ));
        }
        let valid = match &*p.realm {
            Realm::One(mem) => auth::code_is_valid(mem, &q.code),
            Realm::Service(svc) => svc.code_is_valid(&q.code),
        };
        let bad = match &*p.realm {
            Realm::One(_) => auth::AuthError::BadCode,
            Realm::Service(_) => auth::AuthError::BadLink,
        };
        match valid {
            Ok(true) => Ok(html(
                StatusCode::OK,
                &SigninPage {
                    nav: None,
                    action: "/ui/signin",
                    field: "code",
                    code: q.code,
                },
            )),
            Ok(false) => Err(auth_error(&bad)),
            Err(e) => Err(auth_error(&e)),
        }
    })
    .await
}

/// The `Set-Cookie` of a new session.
fn session_cookie(p: &Page, secret: &str) -> Response {
    let cookie = format!(
        "{SESSION_COOKIE}={secret}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={}{}",
        auth::ABSOLUTE_DAYS * 24 * 3600,
        if p.config.secure() { "; Secure" } else { "" }
    );
    let mut r = see_other("/ui/");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

async fn signin(State(p): State<Page>, Form(f): Form<CodeQuery>) -> Response {
    blocking(move || {
        let secret = match &*p.realm {
            Realm::One(mem) => {
                let person = mem.actor().writer.clone();
                auth::sign_in(mem, &f.code, &person)
            }
            Realm::Service(svc) => svc.sign_in_code(&f.code),
        }
        .map_err(|e| auth_error(&e))?;
        Ok(session_cookie(&p, &secret))
    })
    .await
}

#[derive(Deserialize)]
struct TokenQuery {
    #[serde(default)]
    token: String,
}

/// A product's login hands its user over with `/ui/sso?token=JWT`: the token is checked and a
/// button signs in (a link alone never signs anyone in, so no other site can sign a browser
/// in to someone else's memory).
async fn sso_page(State(p): State<Page>, Query(q): Query<TokenQuery>) -> Response {
    blocking(move || {
        let Realm::Service(svc) = &*p.realm else {
            return Err(message_page(
                None,
                StatusCode::NOT_FOUND,
                "sign in",
                "single sign-on is for a memory service: run `memdir ui` for a sign-in link",
            ));
        };
        svc.check_token(q.token.trim())
            .map_err(|e| auth_error(&e))?;
        Ok(html(
            StatusCode::OK,
            &SigninPage {
                nav: None,
                action: "/ui/sso",
                field: "token",
                code: q.token.trim().to_string(),
            },
        ))
    })
    .await
}

async fn sso(State(p): State<Page>, Form(f): Form<TokenQuery>) -> Response {
    blocking(move || {
        let Realm::Service(svc) = &*p.realm else {
            return Err(message_page(
                None,
                StatusCode::NOT_FOUND,
                "sign in",
                "single sign-on is for a memory service: run `memdir ui` for a sign-in link",
            ));
        };
        let secret = svc
            .sign_in_token(f.token.trim())
            .map_err(|e| auth_error(&e))?;
        Ok(session_cookie(&p, &secret))
    })
    .await
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn signout(State(p): State<Page>, headers: HeaderMap, Form(f): Form<CsrfForm>) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        match &*p.realm {
            Realm::One(mem) => auth::sign_out(mem, &s),
            Realm::Service(svc) => svc.sign_out(&s),
        }
        .map_err(|e| auth_error(&e))?;
        let mut r = message_page(
            None,
            StatusCode::OK,
            "signed out",
            &format!("you are signed out. {}", p.how_to_sign_in()),
        );
        r.headers_mut().insert(
            header::SET_COOKIE,
            HeaderValue::from_static(
                "memdir_session=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0",
            ),
        );
        Ok(r)
    })
    .await
}

// ---------------------------------------------------------------- context

struct SectionView {
    title: String,
    name: String,
    path: Option<String>,
    href: Option<String>,
    bytes: usize,
    tokens: usize,
    truncated: bool,
    content: String,
}

struct CapView {
    layer: &'static str,
    href: String,
    lines: usize,
    max_lines: usize,
    bytes: usize,
    max_bytes: usize,
}

#[derive(Template)]
#[template(path = "context.html")]
struct ContextPage {
    nav: Option<Nav>,
    sections: Vec<SectionView>,
    tokens: usize,
    budget: usize,
    caps: Vec<CapView>,
}

async fn context(State(p): State<Page>, headers: HeaderMap) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let nav = p.nav(&s);
        let ctx = s
            .mem
            .context()
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let sections: Vec<SectionView> = ctx
            .sections
            .into_iter()
            .map(|sec| SectionView {
                href: sec
                    .path
                    .as_deref()
                    .map(|p| format!("/ui/files/{}", encode_path(p))),
                title: sec.title,
                name: sec.name,
                path: sec.path,
                bytes: sec.bytes,
                tokens: sec.tokens,
                truncated: sec.truncated,
                content: sec.content,
            })
            .collect();
        let config = s.mem.config();
        let layout = s.mem.layout();
        let measure = |layer: &'static str, max_lines: usize, max_bytes: usize| {
            let text = s
                .mem
                .read(layer)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            CapView {
                layer,
                href: format!("/ui/files/{}", encode_path(layer)),
                lines: text.lines().count(),
                max_lines,
                bytes: text.len(),
                max_bytes,
            }
        };
        let caps = vec![
            measure(layout.core, config.core.max_lines, config.core.max_bytes),
            measure(
                layout.index_file,
                config.index.max_lines,
                config.index.max_bytes,
            ),
            measure(layout.state, config.state.max_lines, config.state.max_bytes),
        ];
        Ok(html(
            StatusCode::OK,
            &ContextPage {
                nav: Some(nav),
                tokens: sections.iter().map(|s| s.tokens).sum(),
                budget: config.context.max_tokens,
                sections,
                caps,
            },
        ))
    })
    .await
}

// ---------------------------------------------------------------- files

struct Layer {
    label: String,
    href: String,
}

fn layers(mem: &Memory) -> Vec<Layer> {
    let l = mem.layout();
    let mut out = vec![
        Layer {
            label: "core".into(),
            href: format!("/ui/files/{}", encode_path(l.core)),
        },
        Layer {
            label: "index".into(),
            href: format!("/ui/files/{}", encode_path(l.index_file)),
        },
        Layer {
            label: "state".into(),
            href: format!("/ui/files/{}", encode_path(l.state)),
        },
        Layer {
            label: "logs".into(),
            href: format!("/ui/files/{}", encode_path(l.log_dir)),
        },
        Layer {
            label: "scratch".into(),
            href: format!("/ui/files/{}", encode_path(l.scratch)),
        },
    ];
    if !l.notes_dir.is_empty() {
        out.push(Layer {
            label: "notes".into(),
            href: format!("/ui/files/{}", encode_path(l.notes_dir)),
        });
    }
    out.push(Layer {
        label: "archive".into(),
        href: "/ui/files/archive".into(),
    });
    out.push(Layer {
        label: "proposals".into(),
        href: "/ui/files/proposals".into(),
    });
    out.push(Layer {
        label: "all files".into(),
        href: "/ui/files/".into(),
    });
    out
}

/// A scratch note still alive, and how long it has left.
struct ScratchView {
    name: String,
    href: String,
    left: String,
}

/// The scratch notes still alive at the clock's now, soonest to end first.
fn live_scratch(mem: &Memory) -> Vec<ScratchView> {
    let dir = mem.layout().scratch;
    let now = mem.clock().now().timestamp().as_millisecond();
    let mut live: Vec<(i64, ScratchView)> = mem
        .ls(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.kind == EntryKind::File)
        .filter_map(|e| {
            let full = e.path.as_str().to_string();
            let file = full.rsplit('/').next().unwrap_or(&full).to_string();
            let n = memdir_core::scratch::ScratchName::parse(&file)?;
            let left_min = (n.expires_ms - now) / 60_000;
            (n.expires_ms > now).then(|| {
                (
                    n.expires_ms,
                    ScratchView {
                        name: n.slug.clone(),
                        href: format!("/ui/files/{}", encode_path(&full)),
                        left: match left_min {
                            m if m < 60 => format!("{m} min left"),
                            m if m < 48 * 60 => format!("{} h {} min left", m / 60, m % 60),
                            m => format!("{} days left", m / (24 * 60)),
                        },
                    },
                )
            })
        })
        .collect();
    live.sort_by_key(|(t, _)| *t);
    live.into_iter().map(|(_, v)| v).collect()
}

/// Notes grouped under one type or tag.
struct Group {
    label: String,
    notes: Vec<Layer>,
}

/// The notes by type, then by tag (a note without either is under neither).
fn note_groups(mem: &Memory) -> Vec<Group> {
    let Ok(notes) = mem.notes() else {
        return Vec::new();
    };
    let mut by: std::collections::BTreeMap<String, Vec<Layer>> = Default::default();
    for f in notes.notes() {
        let link = || Layer {
            label: f.path.as_str().to_string(),
            href: format!("/ui/files/{}", encode_path(f.path.as_str())),
        };
        if let Some(k) = &f.note.meta.kind {
            by.entry(format!("type: {k}")).or_default().push(link());
        }
        for t in &f.note.meta.tags {
            by.entry(format!("tag: {t}")).or_default().push(link());
        }
    }
    let (types, tags): (Vec<_>, Vec<_>) = by.into_iter().partition(|(k, _)| k.starts_with("type"));
    types
        .into_iter()
        .chain(tags)
        .map(|(label, notes)| Group { label, notes })
        .collect()
}

struct EntryView {
    name: String,
    href: String,
    folder: bool,
    size: u64,
}

struct Crumb {
    name: String,
    href: String,
}

fn crumbs(path: &str) -> Vec<Crumb> {
    let mut out = vec![Crumb {
        name: "memory".into(),
        href: "/ui/files/".into(),
    }];
    let mut so_far = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        if !so_far.is_empty() {
            so_far.push('/');
        }
        so_far.push_str(seg);
        out.push(Crumb {
            name: seg.to_string(),
            href: format!("/ui/files/{}", encode_path(&so_far)),
        });
    }
    out
}

#[derive(Template)]
#[template(path = "folder.html")]
struct FolderPage {
    nav: Option<Nav>,
    layers: Vec<Layer>,
    scratch: Vec<ScratchView>,
    /// On the notes folder: its notes by type and tag.
    groups: Vec<Group>,
    crumbs: Vec<Crumb>,
    entries: Vec<EntryView>,
}

/// A log line, and whether it came from outside.
struct LogLine {
    number: usize,
    text: String,
    external: bool,
}

struct LinkView {
    label: String,
    href: String,
    line: usize,
}

struct LastChange {
    writer: String,
    date: String,
    summary: String,
    source: String,
    reason: String,
}

/// How a file's body is shown.
enum Body {
    /// Markdown, rendered and sanitised.
    Markdown(String),
    /// Content from outside: shown as text, fenced and marked untrusted.
    Untrusted(String),
    /// A log: its lines, external ones marked.
    Log(Vec<LogLine>),
    /// Anything else: as text.
    Text(String),
}

#[derive(Template)]
#[template(path = "file.html")]
struct FilePage {
    nav: Option<Nav>,
    layers: Vec<Layer>,
    scratch: Vec<ScratchView>,
    crumbs: Vec<Crumb>,
    path: String,
    enc: String,
    version: String,
    frontmatter: Vec<(String, String)>,
    front_errors: Vec<String>,
    body: Body,
    /// For a long file shown by sections: where this one is, and the links to its neighbours.
    section: Option<SectionNav>,
    source: Option<String>,
    backlinks: Vec<LinkView>,
    last: Option<LastChange>,
}

async fn files_root(state: State<Page>, headers: HeaderMap) -> Response {
    files(
        state,
        headers,
        Path(String::new()),
        Query(FileQuery::default()),
    )
    .await
}

/// `?lines=1`: the file as numbered lines (`#L12` anchors), the view lint findings and search
/// hits link to; `at=N`: the section of a long file's lines that holds line N.
#[derive(Deserialize, Default)]
struct FileQuery {
    #[serde(default)]
    lines: Option<String>,
    #[serde(default)]
    at: Option<usize>,
}

/// The URL of `path` shown at `line`: the numbered view, at the section that holds it.
fn line_href(path: &str, line: u64) -> String {
    format!("/ui/files/{}?lines=1&at={line}#L{line}", encode_path(path))
}

/// The most text one section of a long file's lines shows, and the most lines: a page stays
/// well under 100 KB of HTML whatever the file's size.
const SECTION_BYTES: usize = 40_000;
const SECTION_LINES: usize = 800;

/// Where a long file's sections start (1-based line numbers), cut from the first line on, so
/// a section is the same whichever line a link names.
fn section_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![1];
    let (mut bytes, mut lines) = (0, 0);
    for (i, l) in text.lines().enumerate() {
        if lines > 0 && (bytes + l.len() > SECTION_BYTES || lines == SECTION_LINES) {
            starts.push(i + 1);
            (bytes, lines) = (0, 0);
        }
        bytes += l.len() + 1;
        lines += 1;
    }
    starts
}

/// Links between the sections of a long file.
struct SectionNav {
    /// `lines 801–1600 of 13,231`.
    label: String,
    prev: Option<String>,
    next: Option<String>,
}

fn folder_page(p: &Page, s: &Session, path: &str) -> Out {
    let nav = || Some(p.nav(s));
    let list = s.mem.ls(path).map_err(|e| engine_error(nav(), &e))?;
    let entries = list
        .into_iter()
        .map(|e| {
            let full = e.path.as_str().to_string();
            EntryView {
                name: full.rsplit('/').next().unwrap_or(&full).to_string(),
                href: format!("/ui/files/{}", encode_path(&full)),
                folder: e.kind == EntryKind::Dir,
                size: e.size,
            }
        })
        .collect();
    Ok(html(
        StatusCode::OK,
        &FolderPage {
            nav: nav(),
            layers: layers(&s.mem),
            scratch: live_scratch(&s.mem),
            groups: if !path.is_empty() && path == s.mem.layout().notes_dir {
                note_groups(&s.mem)
            } else {
                Vec::new()
            },
            crumbs: crumbs(path),
            entries,
        },
    ))
}

async fn files(
    State(p): State<Page>,
    headers: HeaderMap,
    Path(path): Path<String>,
    Query(q): Query<FileQuery>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let path = path.trim_matches('/').to_string();
        let stat = s
            .mem
            .ls(&path)
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let is_file =
            matches!(stat.as_slice(), [e] if e.kind == EntryKind::File && e.path.as_str() == path);
        if path.is_empty() || !is_file {
            return folder_page(&p, &s, &path);
        }
        file_page(&p, &s, &path, q.lines.is_some(), q.at.unwrap_or(1))
    })
    .await
}

fn file_page(p: &Page, s: &Session, path: &str, numbered: bool, at: usize) -> Out {
    let nav = || Some(p.nav(s));
    let bytes = s.mem.read(path).map_err(|e| engine_error(nav(), &e))?;
    let version = memdir::Version::of(&bytes).to_string();
    let text = markdown::visible_controls(&String::from_utf8_lossy(&bytes)).into_owned();
    let layout = s.mem.layout();
    let mut frontmatter = Vec::new();
    let mut front_errors = Vec::new();
    let mut source = None;
    let mut backlinks = Vec::new();
    let is_log = path.starts_with(&format!("{}/", layout.log_dir));
    let mut section = None;
    let body = if is_log || numbered {
        // A long file is shown a section at a time, with links to the next and previous.
        let starts = section_starts(&text);
        let i = starts
            .partition_point(|s| *s <= at.max(1))
            .saturating_sub(1);
        let (from, to) = (starts[i], starts.get(i + 1).copied());
        if starts.len() > 1 {
            let total = text.lines().count();
            let href = |line: usize| {
                let lines = if numbered { "lines=1&" } else { "" };
                format!("/ui/files/{}?{lines}at={line}", encode_path(path))
            };
            section = Some(SectionNav {
                label: format!(
                    "lines {from}\u{2013}{} of {total}",
                    to.map_or(total, |t| t - 1)
                ),
                prev: i.checked_sub(1).map(|j| href(starts[j])),
                next: to.map(href),
            });
        }
        Body::Log(
            text.lines()
                .enumerate()
                .skip(from - 1)
                .take(to.map_or(usize::MAX, |t| t - from))
                .map(|(i, l)| LogLine {
                    number: i + 1,
                    external: is_log && l.contains(memdir_core::log::EXTERNAL_MARK),
                    text: l.to_string(),
                })
                .collect(),
        )
    } else if path.ends_with(".md") {
        let note = Note::parse(&text);
        if let Some(fm) = &note.frontmatter {
            for key in fm.keys() {
                let raw = fm.raw_entry(key).unwrap_or_default();
                let value = raw.split_once(':').map_or(raw, |(_, v)| v).trim();
                frontmatter.push((key.to_string(), value.to_string()));
            }
        }
        front_errors = note
            .errors
            .iter()
            .map(|e| format!("line {}: {}", e.line, e.message))
            .collect();
        source = note.meta.source.clone();
        let mut links = Links::new();
        if let Ok(report) = s.mem.links(path) {
            for l in &report.outgoing {
                if let Some(to) = &l.resolves_to {
                    links.insert(memdir_core::links::normalize(&l.link.target), to.clone());
                }
            }
            backlinks = report
                .backlinks
                .iter()
                .map(|b| LinkView {
                    label: b.file.clone(),
                    href: format!("/ui/files/{}", encode_path(&b.file)),
                    line: b.link.line,
                })
                .collect();
        }
        let external = note.meta.source.as_deref() == Some(memdir_core::note::EXTERNAL)
            || text.starts_with(memdir_core::log::EXTERNAL_SCRATCH_MARK);
        if external {
            Body::Untrusted(note.body)
        } else {
            Body::Markdown(markdown::render(&note.body, &links))
        }
    } else {
        Body::Text(text)
    };
    let last = s
        .mem
        .history(Some(path), 1)
        .ok()
        .and_then(|h| h.into_iter().next())
        .map(|h| LastChange {
            date: when(&s.mem, &h.date),
            writer: h.writer,
            summary: h.summary,
            source: h.source.unwrap_or_default(),
            reason: h.reason.unwrap_or_default(),
        });
    Ok(html(
        StatusCode::OK,
        &FilePage {
            nav: nav(),
            layers: layers(&s.mem),
            scratch: live_scratch(&s.mem),
            crumbs: crumbs(path),
            enc: encode_path(path),
            path: path.to_string(),
            version,
            frontmatter,
            front_errors,
            body,
            section,
            source,
            backlinks,
            last,
        },
    ))
}

// ---------------------------------------------------------------- edit

#[derive(Template)]
#[template(path = "edit.html")]
struct EditPage {
    nav: Option<Nav>,
    path: String,
    enc: String,
    base: String,
    text: String,
    error: Option<String>,
    /// On a stale edit: the file as it is now, and the diff from it to the person's text.
    theirs: Option<String>,
    diff: Option<String>,
}

async fn edit_page(
    State(p): State<Page>,
    headers: HeaderMap,
    Path(path): Path<String>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let (text, base) = match s.mem.read(&path) {
            Ok(b) => (
                String::from_utf8_lossy(&b).into_owned(),
                memdir::Version::of(&b).to_string(),
            ),
            Err(e) if e.kind() == ErrorKind::NotFound => (String::new(), String::new()),
            Err(e) => return Err(engine_error(Some(p.nav(&s)), &e)),
        };
        Ok(html(
            StatusCode::OK,
            &EditPage {
                nav: Some(p.nav(&s)),
                enc: encode_path(&path),
                path,
                base,
                text,
                error: None,
                theirs: None,
                diff: None,
            },
        ))
    })
    .await
}

#[derive(Deserialize)]
struct EditForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    base: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    reason: String,
}

async fn edit(
    State(p): State<Page>,
    headers: HeaderMap,
    Path(path): Path<String>,
    Form(f): Form<EditForm>,
) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        // Browsers send a textarea's lines with CRLF; memory's files use LF.
        let text = f.text.replace("\r\n", "\n");
        let reason = match f.reason.trim() {
            "" => "edited on memdir's page".to_string(),
            r => r.to_string(),
        };
        let mem = p.as_person(&s).with_reason(Some(&reason));
        let mem = if f.base.is_empty() {
            mem.with_precondition(memdir::Precondition::Absent)
        } else {
            mem.with_base(Some(&f.base))
        };
        match mem.write(&path, &text) {
            Ok(memdir::Outcome::Done(())) => {
                Ok(see_other(&format!("/ui/files/{}", encode_path(&path))))
            }
            // Core gated for this writer: the change waits for review and was not made.
            Ok(memdir::Outcome::Proposed { message, .. }) => Ok(message_page(
                Some(p.nav(&s)),
                StatusCode::CONFLICT,
                "refused",
                &message,
            )),
            Err(e) => {
                let nav = Some(p.nav(&s));
                // A stale edit: show what is there now and the difference, keep every
                // character the person typed, and let a second save go over the new version.
                let (theirs, diff, base) = if e.kind() == ErrorKind::Conflict {
                    match s.mem.read(&path) {
                        Ok(b) => {
                            let now = String::from_utf8_lossy(&b).into_owned();
                            let diff = similar::TextDiff::from_lines(&now, &text)
                                .unified_diff()
                                .header("now in memory", "your text")
                                .to_string();
                            (Some(now), Some(diff), memdir::Version::of(&b).to_string())
                        }
                        Err(_) => (None, None, String::new()),
                    }
                } else {
                    (None, None, f.base.clone())
                };
                Ok(html(
                    StatusCode::CONFLICT,
                    &EditPage {
                        nav,
                        enc: encode_path(&path),
                        path,
                        base,
                        text,
                        error: Some(e.to_string()),
                        theirs,
                        diff,
                    },
                ))
            }
        }
    })
    .await
}

#[derive(Template)]
#[template(path = "new.html")]
struct NewPage {
    nav: Option<Nav>,
    error: Option<String>,
    form: NewForm,
}

#[derive(Deserialize, Default)]
struct NewForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    expires: String,
    #[serde(default)]
    body: String,
}

async fn new_page(State(p): State<Page>, headers: HeaderMap) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        Ok(html(
            StatusCode::OK,
            &NewPage {
                nav: Some(p.nav(&s)),
                error: None,
                form: NewForm::default(),
            },
        ))
    })
    .await
}

async fn new_note(State(p): State<Page>, headers: HeaderMap, Form(f): Form<NewForm>) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        let tags: Vec<String> = f
            .tags
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        let body = f.body.replace("\r\n", "\n");
        let expires = match f.expires.trim() {
            "" => Ok(None),
            d => d
                .parse::<jiff::civil::Date>()
                .map(Some)
                .map_err(|_| format!("expires {d:?} is not a date: use YYYY-MM-DD")),
        };
        let done = expires.and_then(|expires| {
            let kind = f.kind.trim();
            let req = memdir::notes::NoteRequest {
                name: f.name.trim(),
                description: f.description.trim(),
                kind: (!kind.is_empty()).then_some(kind),
                tags: &tags,
                expires,
                body: &body,
                force: false,
            };
            p.as_person(&s)
                .with_reason(Some("note made on memdir's page"))
                .note_new(&req)
                .map_err(|e| e.to_string())
        });
        match done {
            Ok(path) => Ok(see_other(&format!("/ui/files/{}", encode_path(&path)))),
            Err(e) => Ok(html(
                StatusCode::BAD_REQUEST,
                &NewPage {
                    nav: Some(p.nav(&s)),
                    error: Some(e),
                    form: f,
                },
            )),
        }
    })
    .await
}

#[derive(Deserialize)]
struct RenameForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    to: String,
}

async fn rename(
    State(p): State<Page>,
    headers: HeaderMap,
    Path(path): Path<String>,
    Form(f): Form<RenameForm>,
) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        let to = f.to.trim();
        p.as_person(&s)
            .with_reason(Some("renamed on memdir's page"))
            .mv(&path, to)
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        Ok(see_other(&format!("/ui/files/{}", encode_path(to))))
    })
    .await
}

#[derive(Deserialize)]
struct DeleteForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    confirm: String,
}

async fn delete(
    State(p): State<Page>,
    headers: HeaderMap,
    Path(path): Path<String>,
    Form(f): Form<DeleteForm>,
) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        if f.confirm != "yes" {
            return Err(message_page(
                Some(p.nav(&s)),
                StatusCode::BAD_REQUEST,
                "not deleted",
                "tick the box to confirm the deletion",
            ));
        }
        p.as_person(&s)
            .with_reason(Some("deleted on memdir's page"))
            .rm(&path)
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let parent = path.rsplit_once('/').map_or("", |(d, _)| d);
        Ok(see_other(&format!("/ui/files/{}", encode_path(parent))))
    })
    .await
}

// ---------------------------------------------------------------- review

struct ProposalView {
    id: String,
    writer: String,
    reason: String,
    created: String,
    /// What accepting it does, in words: `core.md changes`, or `notes/a.md is superseded by
    /// notes/b.md`.
    what: String,
    /// The lines that support it (`file:line: text`).
    evidence: Vec<String>,
    diff: String,
}

struct GateView {
    id: String,
    kind: String,
    target: String,
    amount: String,
    writer: String,
    reason: String,
    time: String,
    /// How long the token an approval hands out stays valid (`approval_ttl`), as a person
    /// reads it; `None` when the policy has no rule for the kind (an approval is refused).
    token_ttl: Option<String>,
}

/// A duration in milliseconds in the largest whole unit: `24 hours`, `90 minutes`.
fn lasting(ms: i64) -> String {
    let n = |d: i64| usize::try_from(ms / d).unwrap_or(0);
    match ms {
        _ if ms > 0 && ms % 86_400_000 == 0 => plural(n(86_400_000), "day", "days"),
        _ if ms > 0 && ms % 3_600_000 == 0 => plural(n(3_600_000), "hour", "hours"),
        _ if ms > 0 && ms % 60_000 == 0 => plural(n(60_000), "minute", "minutes"),
        _ => plural(n(1_000), "second", "seconds"),
    }
}

#[derive(Template)]
#[template(path = "review.html")]
struct ReviewPage {
    nav: Option<Nav>,
    done: Option<String>,
    proposals: Vec<ProposalView>,
    gates: Vec<GateView>,
    ledger: String,
}

#[derive(Deserialize)]
struct DoneQuery {
    #[serde(default)]
    done: Option<String>,
}

async fn review(State(p): State<Page>, headers: HeaderMap, Query(q): Query<DoneQuery>) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let nav = || Some(p.nav(&s));
        let proposals = s
            .mem
            .proposals()
            .map_err(|e| engine_error(nav(), &e))?
            .into_iter()
            .map(|pr| ProposalView {
                what: match &pr.superseded_by {
                    Some(new) => format!("{} is superseded by {new}", pr.target),
                    None => format!("{} changes", pr.target),
                },
                id: pr.id,
                writer: pr.writer,
                reason: pr.reason,
                created: when(&s.mem, &pr.created),
                evidence: pr.evidence,
                diff: pr.diff,
            })
            .collect();
        let gates = s
            .mem
            .gate_pending()
            .map_err(|e| engine_error(nav(), &e))?
            .into_iter()
            .map(|g| GateView {
                token_ttl: s
                    .mem
                    .gate_approval_ttl(&g.request.kind)
                    .ok()
                    .flatten()
                    .map(lasting),
                time: when(&s.mem, &g.time.to_string()),
                id: g.id,
                kind: g.request.kind,
                target: g.request.target,
                amount: g.request.amount.map(|a| a.to_string()).unwrap_or_default(),
                writer: g.writer,
                reason: g.reason,
            })
            .collect();
        let ledger = match s.mem.gate_verify() {
            Ok(r) => format!(
                "intact: {} in {}",
                plural(r.entries, "entry", "entries"),
                plural(r.files, "file", "files")
            ),
            Err(e) => e.to_string(),
        };
        Ok(html(
            StatusCode::OK,
            &ReviewPage {
                nav: nav(),
                done: q.done,
                proposals,
                gates,
                ledger,
            },
        ))
    })
    .await
}

#[derive(Deserialize)]
struct DecideForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    reason: String,
}

async fn decide_proposal(
    State(p): State<Page>,
    headers: HeaderMap,
    Form(f): Form<DecideForm>,
) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        let mem = p.as_person(&s);
        let done = match f.action.as_str() {
            "accept" => mem.accept_proposal(&f.id).map(|_| "accepted"),
            "reject" => mem.reject_proposal(&f.id).map(|_| "rejected"),
            _ => Err(memdir::Error::Invalid("choose accept or reject".into())),
        }
        .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        Ok(see_other(&format!(
            "/ui/review?done=proposal%20{}%20{done}",
            encode_path(&f.id)
        )))
    })
    .await
}

impl Page {
    /// Records in the ledger a gate decision sent to the page by anything but a signed-in
    /// person (no session, another session's form, a bearer token, another origin), as the
    /// engine records an agent's attempt. A service's request names its tenant only through
    /// a session: with one (a form without its token, a bearer token or another origin beside
    /// the cookie) the attempt goes to that tenant's ledger; without one it names no tenant,
    /// and goes to the service's log instead.
    fn record_refused_gate(&self, headers: &HeaderMap, f: &DecideForm, why: &str) {
        let mem = match &*self.realm {
            Realm::One(mem) => (**mem).clone(),
            Realm::Service(svc) => match cookie(headers).map(|c| svc.session(&c)) {
                Some(Ok(Some(s))) => s.mem,
                _ => {
                    tracing::warn!(
                        "refused a gate decision for request {:?} sent to the page without a signed-in person ({}); it names no tenant, so no ledger records it",
                        f.id.trim(),
                        why.trim()
                    );
                    return;
                }
            },
        };
        let verdict = if f.action == "deny" {
            Verdict::Deny
        } else {
            Verdict::Approve
        };
        let who = mem
            .with_actor(memdir::Actor {
                writer: "page-visitor".into(),
                source: memdir::Source::External,
            })
            .with_via(Some("web"))
            .with_reason(Some(&format!("sent to memdir's page: {}", why.trim())));
        if let Err(e) = who.gate_decide(f.id.trim(), verdict, Presence::Unattended) {
            tracing::warn!("a gate decision without a signed-in person was refused: {e}");
        }
    }
}

/// Records a gate decision that the page's guard refused before any handler ran (see
/// [`Page::record_refused_gate`]).
pub(crate) async fn record_refused_gate(
    page: Page,
    req: axum::extract::Request,
    why: &'static str,
) {
    use axum::extract::FromRequest as _;
    let headers = req.headers().clone();
    let Ok(Form(f)) = Form::<DecideForm>::from_request(req, &()).await else {
        return;
    };
    let _ = tokio::task::spawn_blocking(move || page.record_refused_gate(&headers, &f, why)).await;
}

async fn decide_gate(
    State(p): State<Page>,
    headers: HeaderMap,
    Form(f): Form<DecideForm>,
) -> Response {
    blocking(move || {
        let s = match p.session_for_form(&headers, &f.csrf) {
            Ok(s) => s,
            Err(refusal) => {
                p.record_refused_gate(&headers, &f, "no signed-in session with this form's token");
                return Err(refusal);
            }
        };
        let verdict = match f.action.as_str() {
            "approve" => Verdict::Approve,
            "deny" => Verdict::Deny,
            _ => {
                return Err(message_page(
                    Some(p.nav(&s)),
                    StatusCode::BAD_REQUEST,
                    "refused",
                    "choose approve or deny",
                ));
            }
        };
        let reason = match f.reason.trim() {
            "" => "on memdir's page".to_string(),
            r => format!("{r} (on memdir's page)"),
        };
        p.as_person(&s)
            .with_reason(Some(&reason))
            .gate_decide(&f.id, verdict, Presence::Page)
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let word = if verdict == Verdict::Approve {
            "approved"
        } else {
            "denied"
        };
        Ok(see_other(&format!(
            "/ui/review?done=request%20{}%20{word}",
            encode_path(&f.id)
        )))
    })
    .await
}

// ---------------------------------------------------------------- search

#[derive(Deserialize)]
struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
    /// The page of hits, from 0.
    #[serde(default)]
    page: usize,
}

/// Hits per page of the search view.
const SEARCH_PAGE: usize = 50;
/// Pages a search goes to at most (the engine has no offset, so page N asks for N + 1 pages).
const SEARCH_PAGES: usize = 200;

/// Where a page of a list is, and the links to its neighbours: `shown` is `hits 51–100 of
/// 1,234` when the list is longer than a page (`no hits past 123` past its end, with a link back
/// to its last page).
struct Pages {
    /// The paragraph's `id`.
    id: &'static str,
    shown: Option<String>,
    newer: Option<String>,
    older: Option<String>,
}

impl Pages {
    /// Page `page` (from 0) of `per` items a page, of a list of `total` items of which the
    /// first `available` are at hand (fewer where the list was cut short).
    fn of(
        id: &'static str,
        noun: &str,
        (page, per): (usize, usize),
        (available, total): (usize, usize),
        href: impl Fn(usize) -> String,
    ) -> Pages {
        let first = page * per;
        let end = first + per;
        let mut pages = Pages {
            id,
            shown: None,
            newer: (page > 0).then(|| href(page - 1)),
            older: (end <= available && end < total).then(|| href(page + 1)),
        };
        if first < available {
            pages.shown = (total > per).then(|| {
                format!(
                    "{noun} {}\u{2013}{} of {total}",
                    first + 1,
                    available.min(end)
                )
            });
        } else if page > 0 {
            // Past the end: "previous" is the last page that holds any.
            pages.shown = Some(format!("no {noun} past {available}"));
            pages.newer = Some(href(available.saturating_sub(1) / per));
        }
        pages
    }
}

/// A day from a form field (`YYYY-MM-DD`), empty for none.
fn day(field: &str, value: &str) -> Result<Option<jiff::civil::Date>, memdir::Error> {
    match value.trim() {
        "" => Ok(None),
        v => v.parse().map(Some).map_err(|_| {
            memdir::Error::Invalid(format!("{field} {v:?} is not a day: use YYYY-MM-DD"))
        }),
    }
}

struct HitView {
    /// The day of a dated file (the recency a ranked score weighs).
    date: String,
    path: String,
    href: String,
    line: u64,
    text: String,
    score: String,
    /// Why the line came: the nonzero parts of its score (ranked, semantic, hybrid modes).
    why: Vec<(&'static str, String)>,
    /// From an external source: shown as untrusted data, as the CLI fences it.
    external: bool,
}

/// The nonzero parts of a ranked score, named as a person reads them.
fn why_parts(why: Option<memdir::search::Why>) -> Vec<(&'static str, String)> {
    let Some(w) = why else { return Vec::new() };
    [
        ("keyword", w.keyword),
        ("meaning", w.meaning),
        ("neighbour", w.neighbour),
        ("day", w.day),
        ("hint", w.hint),
    ]
    .into_iter()
    .filter(|(_, v)| *v != 0.0)
    .map(|(k, v)| (k, format!("{v:+.2}")))
    .collect()
}

#[derive(Template)]
#[template(path = "search.html")]
struct SearchPage {
    nav: Option<Nav>,
    q: String,
    mode: String,
    path: String,
    since: String,
    until: String,
    hits: Vec<HitView>,
    omitted: usize,
    error: Option<String>,
    /// The number of the page's first hit (the list goes on from the pages before).
    first: usize,
    pages: Pages,
}

async fn search(
    State(p): State<Page>,
    headers: HeaderMap,
    Query(q): Query<SearchQuery>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let mode = if q.mode.is_empty() {
            "grep".to_string()
        } else {
            q.mode.clone()
        };
        let mut hits = Vec::new();
        let mut omitted = 0;
        let mut error = None;
        let mut pages = Pages {
            id: "search-pages",
            shown: None,
            newer: None,
            older: None,
        };
        let page = q.page.min(SEARCH_PAGES - 1);
        if !q.q.trim().is_empty() {
            let run = || -> Result<memdir::search::SearchOutcome, memdir::Error> {
                let mut req = memdir::search::SearchRequest::new(q.q.trim());
                req.mode = mode.parse()?;
                // The engine has no offset: page n asks for the first (n + 1) pages and shows
                // the last of them.
                req.limit = Some((page + 1) * SEARCH_PAGE);
                req.max_bytes = Some((page + 1) * 64 * 1024);
                req.path_glob = (!q.path.trim().is_empty()).then(|| q.path.trim().to_string());
                req.since = day("since", &q.since)?;
                req.until = day("until", &q.until)?;
                s.mem.search(&req)
            };
            match run() {
                Ok(out) => {
                    let found: Vec<_> = out.hits.into_iter().filter(|h| !h.is_context).collect();
                    let href = |n: usize| {
                        // Each value percent-encoded as a path is (its slashes kept, which a
                        // query may hold).
                        let q = [
                            ("q", q.q.as_str()),
                            ("mode", mode.as_str()),
                            ("path", q.path.as_str()),
                            ("since", q.since.as_str()),
                            ("until", q.until.as_str()),
                        ]
                        .map(|(k, v)| format!("{k}={}", encode_path(v)));
                        format!("/ui/search?{}&page={n}", q.join("&"))
                    };
                    // A next page only where the engine held hits back for the limit (a search
                    // cut by its bytes says so in `omitted` below instead).
                    pages = Pages::of(
                        "search-pages",
                        "hits",
                        (page, SEARCH_PAGE),
                        (found.len(), found.len() + out.omitted),
                        href,
                    );
                    omitted = if pages.older.is_some() {
                        0
                    } else {
                        out.omitted
                    };
                    hits = found
                        .into_iter()
                        .skip(page * SEARCH_PAGE)
                        .map(|h| HitView {
                            href: line_href(&h.path, h.line),
                            date: h.date.clone().unwrap_or_default(),
                            score: h.score.map(|s| format!("{s:.2}")).unwrap_or_default(),
                            why: why_parts(h.why),
                            external: h.external,
                            text: markdown::visible_controls(&h.text).into_owned(),
                            path: h.path,
                            line: h.line,
                        })
                        .collect();
                }
                Err(e) => error = Some(e.to_string()),
            }
        }
        Ok(html(
            StatusCode::OK,
            &SearchPage {
                nav: Some(p.nav(&s)),
                q: q.q,
                mode,
                path: q.path,
                since: q.since,
                until: q.until,
                hits,
                omitted,
                error,
                first: page * SEARCH_PAGE + 1,
                pages,
            },
        ))
    })
    .await
}

// ---------------------------------------------------------------- lint

struct FindingView {
    severity: &'static str,
    code: &'static str,
    file: String,
    line: usize,
    href: String,
    message: String,
    hint: String,
}

#[derive(Template)]
#[template(path = "lint.html")]
struct LintPage {
    nav: Option<Nav>,
    notes: String,
    errors: String,
    warnings: String,
    findings: Vec<FindingView>,
    pages: Pages,
}

/// Findings per page of the lint view.
const LINT_PAGE: usize = 200;

#[derive(Deserialize)]
struct PageQuery {
    #[serde(default)]
    page: usize,
}

async fn lint(State(p): State<Page>, headers: HeaderMap, Query(q): Query<PageQuery>) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let report = s
            .mem
            .lint()
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let total = report.findings.len();
        let page = q.page.min(total.saturating_sub(1) / LINT_PAGE);
        let pages = Pages::of(
            "lint-pages",
            "findings",
            (page, LINT_PAGE),
            (total, total),
            |n| format!("/ui/lint?page={n}"),
        );
        let findings = report
            .findings
            .into_iter()
            .skip(page * LINT_PAGE)
            .take(LINT_PAGE)
            .map(|f| FindingView {
                severity: match f.severity {
                    memdir::lint::Severity::Error => "error",
                    memdir::lint::Severity::Warning => "warning",
                },
                code: f.code,
                href: line_href(&f.file, f.line as u64),
                file: f.file,
                line: f.line,
                message: f.message,
                hint: f.hint,
            })
            .collect();
        Ok(html(
            StatusCode::OK,
            &LintPage {
                nav: Some(p.nav(&s)),
                notes: plural(report.notes, "note", "notes"),
                errors: plural(report.errors, "error", "errors"),
                warnings: plural(report.warnings, "warning", "warnings"),
                findings,
                pages,
            },
        ))
    })
    .await
}

// ---------------------------------------------------------------- history

/// `1 entry`, `2 entries`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

struct ChangeView {
    commit: String,
    short: String,
    writer: String,
    date: String,
    summary: String,
    source: String,
    reason: String,
}

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    nav: Option<Nav>,
    done: Option<String>,
    changes: Vec<ChangeView>,
    /// A file's history (its path), or the whole memory's.
    path: Option<String>,
    enc: String,
    /// Links to the newer and older pages, when there are.
    newer: Option<String>,
    older: Option<String>,
}

/// Changes per page of the timeline.
const HISTORY_PAGE: usize = 50;
/// Pages a timeline goes back at most (history is read newest first, so page N reads N pages).
const HISTORY_PAGES: usize = 200;

#[derive(Deserialize)]
struct HistoryQuery {
    #[serde(default)]
    done: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    page: usize,
}

fn history_href(path: Option<&str>, page: usize) -> String {
    let mut q = vec![];
    if let Some(p) = path {
        q.push(format!("path={}", encode_path(p)));
    }
    if page > 0 {
        q.push(format!("page={page}"));
    }
    if q.is_empty() {
        "/ui/history".into()
    } else {
        format!("/ui/history?{}", q.join("&"))
    }
}

fn change_view(mem: &Memory, h: memdir::provenance::HistoryEntry) -> ChangeView {
    ChangeView {
        short: h.commit.chars().take(10).collect(),
        date: when(mem, &h.date),
        commit: h.commit,
        writer: h.writer,
        summary: h.summary,
        source: h.source.unwrap_or_default(),
        reason: h.reason.unwrap_or_default(),
    }
}

async fn history(
    State(p): State<Page>,
    headers: HeaderMap,
    Query(q): Query<HistoryQuery>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let nav = || Some(p.nav(&s));
        let path = q
            .path
            .as_deref()
            .map(|p| p.trim_matches('/'))
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        let page = q.page.min(HISTORY_PAGES);
        let want = (page + 1) * HISTORY_PAGE + 1;
        let all = s
            .mem
            .history(path.as_deref(), want)
            .map_err(|e| engine_error(nav(), &e))?;
        let more = all.len() == want;
        let changes = all
            .into_iter()
            .skip(page * HISTORY_PAGE)
            .take(HISTORY_PAGE)
            .map(|h| change_view(&s.mem, h))
            .collect();
        Ok(html(
            StatusCode::OK,
            &HistoryPage {
                nav: nav(),
                done: q.done,
                changes,
                enc: path.as_deref().map(encode_path).unwrap_or_default(),
                newer: (page > 0).then(|| history_href(path.as_deref(), page - 1)),
                older: (more && page < HISTORY_PAGES)
                    .then(|| history_href(path.as_deref(), page + 1)),
                path,
            },
        ))
    })
    .await
}

struct BlameView {
    line: usize,
    text: String,
    commit: String,
    short: String,
    writer: String,
    date: String,
    reason: String,
    /// True for the first line of a run from the same change (the others leave it blank).
    first: bool,
}

#[derive(Template)]
#[template(path = "blame.html")]
struct BlamePage {
    nav: Option<Nav>,
    path: String,
    enc: String,
    lines: Vec<BlameView>,
}

async fn blame(State(p): State<Page>, headers: HeaderMap, Path(path): Path<String>) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let lines = s
            .mem
            .blame(&path)
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let mut prev = String::new();
        let lines = lines
            .into_iter()
            .map(|l| {
                let first = l.commit != prev;
                prev.clone_from(&l.commit);
                BlameView {
                    line: l.line,
                    text: markdown::visible_controls(&l.text).into_owned(),
                    short: l.commit.chars().take(10).collect(),
                    commit: l.commit,
                    writer: l.writer,
                    date: when(&s.mem, &l.date),
                    reason: l.reason.unwrap_or_default(),
                    first,
                }
            })
            .collect();
        Ok(html(
            StatusCode::OK,
            &BlamePage {
                nav: Some(p.nav(&s)),
                enc: encode_path(&path),
                path,
                lines,
            },
        ))
    })
    .await
}

#[derive(Deserialize)]
struct UndoForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    commit: String,
}

#[derive(Template)]
#[template(path = "undo.html")]
struct UndoPage {
    nav: Option<Nav>,
    change: ChangeView,
}

async fn undo_page(
    State(p): State<Page>,
    headers: HeaderMap,
    Query(f): Query<UndoForm>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let nav = || Some(p.nav(&s));
        let change = s
            .mem
            .history(None, 1000)
            .map_err(|e| engine_error(nav(), &e))?
            .into_iter()
            .find(|h| !f.commit.is_empty() && h.commit == f.commit)
            .ok_or_else(|| {
                message_page(
                    nav(),
                    StatusCode::NOT_FOUND,
                    "not found",
                    "no such change in the last 1000: pick one from the history",
                )
            })?;
        Ok(html(
            StatusCode::OK,
            &UndoPage {
                nav: nav(),
                change: change_view(&s.mem, change),
            },
        ))
    })
    .await
}

async fn undo(State(p): State<Page>, headers: HeaderMap, Form(f): Form<UndoForm>) -> Response {
    blocking(move || {
        let s = p.session_for_form(&headers, &f.csrf)?;
        let done = p
            .as_person(&s)
            .with_reason(Some("undone on memdir's page"))
            .undo(Some(&f.commit))
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        let _ = done;
        let short: String = f.commit.chars().take(10).collect();
        Ok(see_other(&format!(
            "/ui/history?done=undid%20{}",
            encode_path(&short)
        )))
    })
    .await
}
