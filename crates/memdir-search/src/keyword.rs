//! The keyword index: `.memdir/search.sqlite`, SQLite FTS5 tables of pre-stemmed terms.
//!
//! It is a cache and never the source of truth. Every ranked search first brings it up to date
//! with the files: a file whose size and modification time are unchanged is trusted, any other
//! is read and hashed, and re-indexed only if its content hash changed; files that are gone are
//! dropped. A missing, corrupt or out-of-date index (schema or tokenizer version) is rebuilt
//! from the files; a folder where it cannot be written gets a throwaway in-memory index.
//!
//! Tables: `files(id, path, size, mtime_ns, hash, date, ...)`; `lines`, an FTS5 table with one
//! row per non-blank line (`body` terms, `speaker` terms, and unindexed `file_id`, `line`,
//! `text`); `docs`, an FTS5 table with one row per file (all its terms), so a line can be
//! scored together with the file (the day) it sits in; `postings`, the same terms as `lines`
//! and `docs` kept per term and file in our own encoding (`postings.rs`), which ranked mode
//! scores with bounds so it can stop before it has scored every matching line. The FTS5
//! tables stay the reference those scores are checked against (and hold each line's text).

use super::grep::line_text;
use super::postings;
use super::sqlite::{KEYWORD_DB, db_err};
use super::walk::{FileRef, open_file};
use crate::error::Error;
use memdir_core::tokenize::{self, Tokenizer, split_line};
use memdir_folder::stamp::{change_stamp, content_hash, unchanged};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bump when the tables or what goes into them change.
const SCHEMA: u32 = 5;

/// Files bigger than this are indexed by their first this-many bytes only.
const MAX_INDEXED_BYTES: usize = 8 << 20;

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    date TEXT,
    -- What the early-stopping scorer needs of a file: its rows in `lines` (numbered from
    -- `first_row`, in line order), their tokens (body and speaker) and its `docs` row's tokens.
    first_row INTEGER NOT NULL DEFAULT 0,
    nrows INTEGER NOT NULL DEFAULT 0,
    ntok INTEGER NOT NULL DEFAULT 0,
    doc_len INTEGER NOT NULL DEFAULT 0
);
-- One row per term and file. `data` starts with how many of the file's lines hold the term, how
-- often its `docs` row does, the most times one line holds it in its body, speaker and
-- unindexed columns and the fewest tokens of a line holding it (which bound its score in the
-- file), then lists those lines (see `postings.rs`): one blob, so a query reads two columns a
-- row, not eight.
CREATE TABLE IF NOT EXISTS postings(
    term TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY(term, file_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_file ON postings(file_id);
CREATE VIRTUAL TABLE IF NOT EXISTS lines USING fts5(
    body, speaker, file_id UNINDEXED, line UNINDEXED, text UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 0', detail = 'column'
);
-- `docs` keeps positions (detail=full): with less, FTS5 re-tokenizes a whole file for the term
-- counts of every matching file at query time. `lines` stays at detail=column: full detail
-- there changes the scores (at detail=column FTS5 finds a row's instances by tokenizing every
-- column again, the unindexed raw `text` too, so an unstemmed word counts twice), and the
-- hybrid ranking is tuned on these. Ranked mode scores from `postings`, which counts the same.
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
    body, file_id UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 0', detail = 'full'
);
";

fn version_tag() -> String {
    format!("{SCHEMA}.{}", tokenize::VERSION)
}

/// An open, up-to-date index.
pub(crate) struct Index {
    pub conn: Connection,
    /// Every file's id and path as last read, with the `data_version` it was read at: SQLite
    /// changes that number when another connection commits, and [`Index::sync`] drops the list
    /// when this one writes, so an equal number means the list is still the table.
    files: std::cell::RefCell<Option<(i64, FileList)>>,
    /// The device and inode of the file this connection opened (`None`: in memory), so a kept
    /// connection is handed back only while that file is still the one at its path.
    file: Option<(u64, u64)>,
}

/// Every file of the index, with what ranked search reads of each.
type FileList = std::sync::Arc<Vec<Listed>>;

/// A file of the index: its id, path, first row of `lines` (its line `k` is row
/// `first_row + k`), its rows there and their tokens, and its `docs` row's length in tokens.
pub(crate) struct Listed {
    pub id: i64,
    pub path: String,
    pub first_row: i64,
    pub nrows: i64,
    pub ntok: i64,
    pub doc_len: i64,
}

/// A folder's keyword index kept open between the searches of one long-lived memory, so a
/// search does not pay for opening SQLite, reading the schema (the FTS5 tables' set-up) and
/// preparing its statements again, nor for reading the file table when nothing changed.
///
/// The file on disk stays the truth: a kept connection is used only while the index file at
/// its path is still the one it opened (same device and inode), so an index deleted by hand,
/// by `forget` or by another process's rebuild is opened afresh. [`Kept::clear`] closes it,
/// which `forget` needs: an open connection would keep a deleted file's bytes on disk.
#[derive(Default)]
pub(crate) struct Kept(std::sync::Mutex<Option<KeptIndex>>);

/// A kept index: its file's path, the device and inode it had when opened, the connection.
type KeptIndex = (PathBuf, (u64, u64), Index);

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kept")
    }
}

/// The device and inode of the file at `path`, naming which file a connection has open.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

impl Kept {
    /// The kept index of the folder at `root`, if one is kept and its file is still there;
    /// else a newly opened one. The caller hands it back with [`Kept::keep`] when done, so two
    /// searches at once each have their own connection.
    pub(crate) fn open(&self, root: &Path) -> Result<Index, Error> {
        let path = index_path(root);
        let kept = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((p, id, index)) = kept
            && p == path
            && file_id(&path) == Some(id)
        {
            return Ok(index);
        }
        Index::open(Some(root))
    }

    /// Keeps `index` (of the folder at `root`) for the next search, if the file it opened is
    /// still the one at its path: an index deleted meanwhile (a cache folder dropped to stay
    /// within its budget, `forget`) is closed, so its bytes leave the disk now.
    pub(crate) fn keep(&self, root: &Path, index: Index) {
        let path = index_path(root);
        if let Some(id) = index.file
            && file_id(&path) == Some(id)
        {
            *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some((path, id, index));
        }
    }

    /// Closes the kept connection, if any.
    pub(crate) fn clear(&self) {
        drop(self.0.lock().unwrap_or_else(|p| p.into_inner()).take());
    }
}

/// Where the index of a folder lives.
pub(crate) fn index_path(root: &Path) -> PathBuf {
    root.join(memdir_folder::META_DIR).join(KEYWORD_DB)
}

impl Index {
    /// Opens (creating or rebuilding as needed) the index of the folder at `root`; without a
    /// folder, an index in memory.
    pub fn open(root: Option<&Path>) -> Result<Index, Error> {
        let Some(root) = root else {
            let c = Connection::open_in_memory().map_err(db_err)?;
            init(&c)?;
            return Ok(Index {
                conn: c,
                files: Default::default(),
                file: None,
            });
        };
        let path = index_path(root);
        let on_disk = std::fs::create_dir_all(root.join(memdir_folder::META_DIR))
            .ok()
            .and_then(|()| open_checked(&path).ok());
        let (conn, file) = match on_disk {
            Some(c) => (c, file_id(&path)),
            None => {
                // Corrupt or unreadable: start over, or fall back to memory if the folder is
                // read-only. The files are the truth; the index is only a cache.
                let _ = std::fs::remove_file(&path);
                match open_checked(&path) {
                    Ok(c) => (c, file_id(&path)),
                    Err(_) => {
                        let c = Connection::open_in_memory().map_err(db_err)?;
                        init(&c)?;
                        (c, None)
                    }
                }
            }
        };
        Ok(Index {
            conn,
            files: Default::default(),
            file,
        })
    }

    /// Every file's id, path, first row and length, read again only when the table may have
    /// changed. Called inside a read transaction, the list and what the search reads next are
    /// one snapshot.
    pub fn files(&self) -> Result<FileList, Error> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(db_err)?;
        if let Some((v, files)) = &*self.files.borrow()
            && *v == version
        {
            return Ok(files.clone());
        }
        let mut st = self
            .conn
            // In path order (SQLite's BINARY collation compares bytes, as Rust's `str` does),
            // from the path's unique index: a file's place in the list is its rank by path.
            .prepare_cached(
                "SELECT id, path, first_row, nrows, ntok, doc_len FROM files ORDER BY path",
            )
            .map_err(db_err)?;
        let files = st
            .query_map([], |r| {
                Ok(Listed {
                    id: r.get(0)?,
                    path: r.get(1)?,
                    first_row: r.get(2)?,
                    nrows: r.get(3)?,
                    ntok: r.get(4)?,
                    doc_len: r.get(5)?,
                })
            })
            .map_err(db_err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db_err)?;
        let files = std::sync::Arc::new(files);
        *self.files.borrow_mut() = Some((version, files.clone()));
        Ok(files)
    }

    /// Drops everything, so the next sync reads every file again.
    pub fn clear(&mut self) -> Result<(), Error> {
        *self.files.get_mut() = None;
        self.conn
            .execute_batch(
                "DELETE FROM files; DELETE FROM lines; DELETE FROM docs; DELETE FROM postings;",
            )
            .map_err(db_err)
    }

    /// How many files the index holds.
    pub fn file_count(&self) -> Result<usize, Error> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
            .map_err(db_err)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Brings the index up to date with `files` (every file of the folder).
    pub fn sync(&mut self, files: &[FileRef], tok: &Tokenizer) -> Result<SyncStats, Error> {
        // This connection's own commits leave `data_version` as it was.
        *self.files.get_mut() = None;
        let mut stats = SyncStats::default();
        let mut known: HashMap<String, (i64, i64, i64, String)> = HashMap::new();
        {
            let mut st = self
                .conn
                .prepare("SELECT path, id, size, mtime_ns, hash FROM files")
                .map_err(db_err)?;
            let rows = st
                .query_map([], |r| {
                    Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
                })
                .map_err(db_err)?;
            for row in rows {
                let (p, v) = row.map_err(db_err)?;
                known.insert(p, v);
            }
        }
        let tx = self.conn.transaction().map_err(db_err)?;
        let mut next_row = next_line_row(&tx)?;
        let mut probe = Probe::default();
        for f in files {
            // A file read from a store (no path on disk) is held whole: index it by content.
            if let (Some(held), true) = (&f.held, f.abs.as_os_str().is_empty()) {
                let hash = content_hash(&held.bytes);
                let size = i64::try_from(held.bytes.len()).unwrap_or(i64::MAX);
                let old = known.remove(&f.rel);
                if old.as_ref().is_some_and(|(_, _, _, h)| *h == hash) {
                    continue;
                }
                if let Some((id, ..)) = &old {
                    delete_file(&tx, *id)?;
                }
                tx.execute(
                    "INSERT INTO files(path, size, mtime_ns, hash, date) VALUES (?1, ?2, 0, ?3, ?4)",
                    params![f.rel, size, hash, f.date_string()],
                )
                .map_err(db_err)?;
                let id = tx.last_insert_rowid();
                add_lines(&tx, id, &held.bytes, tok, &mut next_row, &mut probe)?;
                stats.indexed += 1;
                continue;
            }
            let Ok(mut file) = open_file(&f.abs) else {
                continue;
            };
            let Ok(meta) = file.metadata() else {
                continue;
            };
            let (size, mtime) = change_stamp(&meta);
            let old = known.remove(&f.rel);
            if let Some((_, s, m, _)) = &old
                && unchanged((*s, *m), (size, mtime))
            {
                continue;
            }
            let mut bytes = Vec::new();
            if std::io::Read::read_to_end(&mut file, &mut bytes).is_err() {
                continue;
            }
            let hash = content_hash(&bytes);
            if let Some((id, _, _, h)) = &old
                && *h == hash
            {
                tx.execute(
                    "UPDATE files SET size = ?1, mtime_ns = ?2 WHERE id = ?3",
                    params![size, mtime, id],
                )
                .map_err(db_err)?;
                continue;
            }
            if let Some((id, ..)) = &old {
                delete_file(&tx, *id)?;
            }
            tx.execute(
                "INSERT INTO files(path, size, mtime_ns, hash, date) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![f.rel, size, mtime, hash, f.date_string()],
            )
            .map_err(db_err)?;
            let id = tx.last_insert_rowid();
            add_lines(&tx, id, &bytes, tok, &mut next_row, &mut probe)?;
            stats.indexed += 1;
        }
        for (_, (id, ..)) in known {
            delete_file(&tx, id)?;
            stats.removed += 1;
        }
        tx.commit().map_err(db_err)?;
        Ok(stats)
    }
}

/// What a sync changed.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SyncStats {
    /// Files (re)indexed.
    pub indexed: usize,
    /// Files dropped because they are gone.
    pub removed: usize,
}

fn open_checked(path: &Path) -> Result<Connection, Error> {
    let c = Connection::open(path).map_err(db_err)?;
    c.busy_timeout(Duration::from_secs(10)).map_err(db_err)?;
    c.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
        .map_err(db_err)?;
    let tag: Option<String> = c
        .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
            r.get(0)
        })
        .optional()
        .unwrap_or(None);
    if tag.as_deref() != Some(version_tag().as_str()) {
        // One transaction: the schema is made whole or not at all, in one commit (not one per
        // table; a new tenant's first search makes this schema).
        let tx = c.unchecked_transaction().map_err(db_err)?;
        tx.execute_batch(
            "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS files;
             DROP TABLE IF EXISTS lines; DROP TABLE IF EXISTS docs;
             DROP TABLE IF EXISTS postings;",
        )
        .map_err(db_err)?;
        init(&tx)?;
        tx.commit().map_err(db_err)?;
    }
    Ok(c)
}

fn init(c: &Connection) -> Result<(), Error> {
    c.execute_batch(CREATE).map_err(db_err)?;
    c.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('version', ?1)",
        [version_tag()],
    )
    .map_err(db_err)?;
    Ok(())
}

fn delete_file(tx: &Connection, id: i64) -> Result<(), Error> {
    tx.execute("DELETE FROM lines WHERE file_id = ?1", [id])
        .map_err(db_err)?;
    tx.execute("DELETE FROM docs WHERE file_id = ?1", [id])
        .map_err(db_err)?;
    tx.execute("DELETE FROM postings WHERE file_id = ?1", [id])
        .map_err(db_err)?;
    tx.execute("DELETE FROM files WHERE id = ?1", [id])
        .map_err(db_err)?;
    Ok(())
}

/// The rowid the next line row gets: lines are inserted with explicit rowids, consecutive per
/// file, so a file's row `k` is `first_row + k` and its text can be fetched by rowid.
fn next_line_row(c: &Connection) -> Result<i64, Error> {
    let last: Option<i64> = c
        .query_row(
            "SELECT rowid FROM lines ORDER BY rowid DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(db_err)?;
    Ok(last.unwrap_or(0) + 1)
}

/// FTS5's own tokens of our terms, for the terms where they might differ.
///
/// The FTS5 columns hold our terms joined by spaces, and FTS5's `unicode61` tokenizer splits
/// and folds them again by its own (older) Unicode tables. For ASCII terms that is the term
/// itself; for any other term the early-stopping scorer must count what FTS5 counts, so the
/// term is run through an FTS5 table and its tokens read back (`fts5vocab`), once per term and
/// sync.
#[derive(Default)]
pub(crate) struct Probe {
    known: HashMap<String, Vec<String>>,
    ready: bool,
}

impl Probe {
    /// FTS5's tokens of any text, appended to `out`: ASCII text split here exactly as
    /// `unicode61` splits it (runs of letters and digits, lowercased), other text through FTS5.
    pub fn split_into(
        &mut self,
        c: &Connection,
        text: &str,
        out: &mut Vec<String>,
    ) -> Result<(), Error> {
        if text.is_ascii() {
            out.extend(
                text.split(|ch: char| !ch.is_ascii_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_ascii_lowercase),
            );
            return Ok(());
        }
        self.fts_tokens(c, text, out)
    }

    /// FTS5's tokens of `term`, appended to `out`.
    pub fn tokens_into(
        &mut self,
        c: &Connection,
        term: &str,
        out: &mut Vec<String>,
    ) -> Result<(), Error> {
        if term
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() && !b.is_ascii_uppercase())
        {
            out.push(term.to_string());
            return Ok(());
        }
        if let Some(t) = self.known.get(term) {
            out.extend(t.iter().cloned());
            return Ok(());
        }
        let mut tokens = Vec::new();
        self.fts_tokens(c, term, &mut tokens)?;
        out.extend(tokens.iter().cloned());
        self.known.insert(term.to_string(), tokens);
        Ok(())
    }

    /// Runs `text` through an FTS5 table and reads its tokens back, in order.
    fn fts_tokens(
        &mut self,
        c: &Connection,
        text: &str,
        out: &mut Vec<String>,
    ) -> Result<(), Error> {
        if !self.ready {
            c.execute_batch(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memdir_probe USING fts5(
                     t, tokenize = 'unicode61 remove_diacritics 0');
                 CREATE VIRTUAL TABLE IF NOT EXISTS temp.memdir_probe_v
                     USING fts5vocab(temp, memdir_probe, instance);",
            )
            .map_err(db_err)?;
            self.ready = true;
        }
        c.execute(
            "INSERT INTO temp.memdir_probe(rowid, t) VALUES (1, ?1)",
            [text],
        )
        .map_err(db_err)?;
        {
            let mut st = c
                .prepare_cached("SELECT term FROM temp.memdir_probe_v ORDER BY offset")
                .map_err(db_err)?;
            let rows = st
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(db_err)?;
            for t in rows {
                out.push(t.map_err(db_err)?);
            }
        }
        c.execute("DELETE FROM temp.memdir_probe", [])
            .map_err(db_err)?;
        Ok(())
    }
}

fn add_lines(
    tx: &Connection,
    id: i64,
    bytes: &[u8],
    tok: &Tokenizer,
    next_row: &mut i64,
    probe: &mut Probe,
) -> Result<(), Error> {
    // Binary files hold no lines worth ranking.
    if bytes.iter().take(8192).any(|b| *b == 0) {
        tx.execute("INSERT INTO docs(body, file_id) VALUES ('', ?1)", [id])
            .map_err(db_err)?;
        return Ok(());
    }
    let bytes = &bytes[..bytes.len().min(MAX_INDEXED_BYTES)];
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let bodies: Vec<Vec<String>> = lines
        .iter()
        .map(|l| tok.terms(split_line(l).body))
        .collect();
    let mut st = tx
        .prepare_cached(
            "INSERT INTO lines(rowid, body, speaker, file_id, line, text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(db_err)?;
    let first_row = *next_row;
    let mut all = String::new();
    let mut posts = postings::FilePostings::default();
    let (mut body_toks, mut speaker_toks, mut other_toks) = (Vec::new(), Vec::new(), Vec::new());
    for (i, line) in lines.iter().enumerate() {
        if bodies[i].is_empty() && line.trim().is_empty() {
            continue;
        }
        let speaker_terms = tok.terms(split_line(line).speaker);
        let speaker = speaker_terms.join(" ");
        let body = bodies[i].join(" ");
        let line_no = i64::try_from(i + 1).unwrap_or(i64::MAX);
        st.execute(params![
            *next_row,
            body,
            speaker,
            id,
            line_no,
            line_text(line.as_bytes())
        ])
        .map_err(db_err)?;
        *next_row += 1;
        body_toks.clear();
        speaker_toks.clear();
        other_toks.clear();
        // FTS5 counts the unindexed columns' tokens too when it scores (`Counts::freq`).
        probe.split_into(tx, &id.to_string(), &mut other_toks)?;
        probe.split_into(tx, &line_no.to_string(), &mut other_toks)?;
        probe.split_into(tx, &line_text(line.as_bytes()), &mut other_toks)?;
        for t in &bodies[i] {
            probe.tokens_into(tx, t, &mut body_toks)?;
        }
        for t in &speaker_terms {
            probe.tokens_into(tx, t, &mut speaker_toks)?;
        }
        posts.add_row(
            u32::try_from(i + 1).unwrap_or(u32::MAX),
            &body_toks,
            &speaker_toks,
            &other_toks,
        );
        all.push_str(&body);
        all.push(' ');
    }
    tx.execute(
        "INSERT INTO docs(body, file_id) VALUES (?1, ?2)",
        params![all, id],
    )
    .map_err(db_err)?;
    posts.store(tx, id, first_row)
}
