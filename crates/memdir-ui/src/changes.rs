//! A change's diff and the restore of a file's old version: both read what a recorded change
//! did to each file ([`memdir::Memory::change_files`]), and a restore writes a file back as it
//! was after one change, as a new change by the signed-in person.
// A refusal is a whole page (a `Response`), as in `views`.
#![allow(clippy::result_large_err)]

use crate::Page;
use crate::markdown::{self, encode_path};
use crate::views::{Nav, Out, blocking, engine_error, html, message_page, see_other};
use askama::Template;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use memdir::history::FileChange;
use memdir::{ErrorKind, Memory};
use serde::Deserialize;

/// The most text a page shows of all its diffs together; the rest is cut, and said to be.
const DIFF_BUDGET: usize = 64 * 1024;

/// A file's content as text (invalid UTF-8 replaced, direction controls made visible).
fn text(b: Option<&[u8]>) -> String {
    let t = String::from_utf8_lossy(b.unwrap_or_default());
    markdown::visible_controls(&t).into_owned()
}

/// The unified diff from `old` to `new` under `budget`, and whether it was cut.
fn diff(old: &str, new: &str, from: &str, to: &str, budget: &mut usize) -> (String, bool) {
    let mut d = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(from, to)
        .to_string();
    let cut = d.len() > *budget;
    if cut {
        let mut end = *budget;
        while !d.is_char_boundary(end) {
            end -= 1;
        }
        d.truncate(end);
    }
    *budget -= d.len();
    (d, cut)
}

/// What a change did to one file.
struct FileDiff {
    path: String,
    enc: String,
    /// `created`, `deleted` or `changed`.
    what: &'static str,
    diff: String,
    cut: bool,
    /// The file exists after the change, so it can be restored as of it.
    restorable: bool,
}

/// The change's record, when it is among the recent ones the page looks through.
struct ChangeMeta {
    writer: String,
    date: String,
    summary: String,
    source: String,
    reason: String,
}

#[derive(Template)]
#[template(path = "change.html")]
struct ChangePage {
    nav: Option<Nav>,
    commit: String,
    short: String,
    meta: Option<ChangeMeta>,
    files: Vec<FileDiff>,
}

/// How far back the page looks for a change's writer, time and reason.
const META_DEPTH: usize = 1000;

fn meta(mem: &Memory, commit: &str) -> Option<ChangeMeta> {
    mem.history(None, META_DEPTH)
        .ok()?
        .into_iter()
        .find(|h| h.commit == commit)
        .map(|h| ChangeMeta {
            date: crate::views::when(mem, &h.date),
            writer: h.writer,
            summary: h.summary,
            source: h.source.unwrap_or_default(),
            reason: h.reason.unwrap_or_default(),
        })
}

fn short(commit: &str) -> String {
    commit.chars().take(10).collect()
}

/// `/ui/change/<commit>`: what one change did, file by file.
pub(crate) async fn change(
    State(p): State<Page>,
    headers: HeaderMap,
    Path(commit): Path<String>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let nav = || Some(p.nav(&s));
        let (full, touched) = s
            .mem
            .change_files(commit.trim())
            .map_err(|e| engine_error(nav(), &e))?;
        let mut budget = DIFF_BUDGET;
        let files = touched
            .into_iter()
            .map(|f| {
                let path = f.path.as_str().to_string();
                let what = match (&f.before, &f.after) {
                    (None, _) => "created",
                    (_, None) => "deleted",
                    _ => "changed",
                };
                let (diff, cut) = diff(
                    &text(f.before.as_deref()),
                    &text(f.after.as_deref()),
                    &format!("{path} before"),
                    &format!("{path} after"),
                    &mut budget,
                );
                FileDiff {
                    enc: encode_path(&path),
                    path,
                    what,
                    diff,
                    cut,
                    restorable: f.after.is_some(),
                }
            })
            .collect();
        Ok(html(
            StatusCode::OK,
            &ChangePage {
                nav: nav(),
                meta: meta(&s.mem, &full),
                short: short(&full),
                commit: full,
                files,
            },
        ))
    })
    .await
}

#[derive(Deserialize, Default)]
pub(crate) struct RestoreForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    commit: String,
    /// The version of the file the person saw when they confirmed (empty: it was absent).
    #[serde(default)]
    base: String,
    #[serde(default)]
    reason: String,
}

#[derive(Template)]
#[template(path = "restore.html")]
struct RestorePage {
    nav: Option<Nav>,
    path: String,
    enc: String,
    commit: String,
    short: String,
    base: String,
    /// What restoring changes, from the file now to the old version.
    diff: String,
    cut: bool,
    /// The file is absent now: restoring makes it again.
    absent: bool,
}

/// The file `path` as change `commit` left it, with the change's full id; a page saying why not
/// when the change did not touch it or deleted it.
fn old_version(
    nav: Nav,
    mem: &Memory,
    path: &str,
    commit: &str,
) -> Result<(String, Vec<u8>), Response> {
    let (full, touched) = mem
        .change_files(commit.trim())
        .map_err(|e| engine_error(Some(nav.clone()), &e))?;
    let f: Option<FileChange> = touched.into_iter().find(|f| f.path.as_str() == path);
    match f.map(|f| f.after) {
        Some(Some(bytes)) => Ok((full, bytes)),
        Some(None) => Err(message_page(
            Some(nav),
            StatusCode::NOT_FOUND,
            "nothing to restore",
            &format!(
                "change {} deleted {path}: restore it as of an earlier change in its history",
                short(&full)
            ),
        )),
        None => Err(message_page(
            Some(nav),
            StatusCode::NOT_FOUND,
            "nothing to restore",
            &format!(
                "change {} did not touch {path}: pick a change from the file's history",
                short(&full)
            ),
        )),
    }
}

/// The file now; `None` when it is absent.
fn now_of(mem: &Memory, path: &str) -> Result<Option<Vec<u8>>, memdir::Error> {
    match mem.read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `GET /ui/restore?path=&commit=`: what restoring the file as of that change would do, and
/// the button that does it.
pub(crate) async fn restore_page(
    State(p): State<Page>,
    headers: HeaderMap,
    Query(f): Query<RestoreForm>,
) -> Response {
    blocking(move || {
        let s = p.session(&headers)?;
        let path = f.path.trim_matches('/').to_string();
        let (full, old) = old_version(p.nav(&s), &s.mem, &path, &f.commit)?;
        let now = now_of(&s.mem, &path).map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        if now.as_deref() == Some(old.as_slice()) {
            return Ok(message_page(
                Some(p.nav(&s)),
                StatusCode::OK,
                "nothing to restore",
                &format!("{path} is already as change {} left it", short(&full)),
            ));
        }
        let mut budget = DIFF_BUDGET;
        let (diff, cut) = diff(
            &text(now.as_deref()),
            &text(Some(&old)),
            &format!("{path} now"),
            &format!("{path} as of {}", short(&full)),
            &mut budget,
        );
        Ok(html(
            StatusCode::OK,
            &RestorePage {
                nav: Some(p.nav(&s)),
                enc: encode_path(&path),
                base: now
                    .as_deref()
                    .map(|b| memdir::Version::of(b).to_string())
                    .unwrap_or_default(),
                absent: now.is_none(),
                path,
                short: short(&full),
                commit: full,
                diff,
                cut,
            },
        ))
    })
    .await
}

/// `POST /ui/restore`: writes the file back as the change left it, over the version the
/// person confirmed (a file changed since is refused, not overwritten).
pub(crate) async fn restore(
    State(p): State<Page>,
    headers: HeaderMap,
    Form(f): Form<RestoreForm>,
) -> Response {
    blocking(move || -> Out {
        let s = p.session_for_form(&headers, &f.csrf)?;
        let path = f.path.trim_matches('/').to_string();
        let (full, old) = old_version(p.nav(&s), &s.mem, &path, &f.commit)?;
        let Ok(old) = String::from_utf8(old) else {
            return Err(message_page(
                Some(p.nav(&s)),
                StatusCode::BAD_REQUEST,
                "not restored",
                &format!(
                    "{path} as of {} is not text: restore it with git",
                    short(&full)
                ),
            ));
        };
        let reason = match f.reason.trim() {
            "" => format!("restored as of {} on memdir's page", short(&full)),
            r => r.to_string(),
        };
        let mem = p.as_person(&s).with_reason(Some(&reason));
        let mem = if f.base.is_empty() {
            mem.with_precondition(memdir::Precondition::Absent)
        } else {
            mem.with_base(Some(&f.base))
        };
        let outcome = mem
            .write(&path, &old)
            .map_err(|e| engine_error(Some(p.nav(&s)), &e))?;
        // Core gated for this writer: the restore waits for review and was not made.
        if let memdir::Outcome::Proposed { message, .. } = outcome {
            return Ok(message_page(
                Some(p.nav(&s)),
                StatusCode::CONFLICT,
                "not restored",
                &message,
            ));
        }
        Ok(see_other(&format!(
            "/ui/history?path={}&done=restored%20as%20of%20{}",
            encode_path(&path),
            encode_path(&short(&full))
        )))
    })
    .await
}
