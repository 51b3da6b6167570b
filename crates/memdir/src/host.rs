//! Folders other tools keep: which layout a folder has (for `memdir init --existing`) and
//! writing a memory in a host's layout (`memdir export --format`), both through stores. The
//! layouts themselves are pure data in [`memdir_core::host`].

use crate::ctx::Ctx;
use crate::error::Error;
use crate::store::{EntryKind, Store, StoreError};
use memdir_core::host::{LayoutName, Survey, detect};
use memdir_core::path::MemPath;

/// How much of `MEMORY.md` detection reads: enough for memdir's generated header.
const HEAD_BYTES: usize = 256;

/// The layout the files in `store` already have: `Ok(None)` for an empty folder, an error
/// naming the candidates when the signs disagree (the user then passes `--layout`).
pub fn detect_layout(store: &dyn Store) -> Result<Option<LayoutName>, Error> {
    let top = match store.list(&MemPath::root()) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let names: Vec<String> = top
        .iter()
        .filter_map(|e| e.path.file_name().map(str::to_string))
        .collect();
    let openclaw = memdir_core::host::FolderLayout::of(LayoutName::OpenClaw);
    let dated = |dir: &str| -> Result<bool, Error> {
        if !top
            .iter()
            .any(|e| e.kind == EntryKind::Dir && e.path.as_str() == dir)
        {
            return Ok(false);
        }
        Ok(store.list(&MemPath::parse(dir)?)?.iter().any(|e| {
            e.kind == EntryKind::File
                && e.path
                    .file_name()
                    .and_then(|n| openclaw.log_name_date(n))
                    .is_some()
        }))
    };
    let head = match store.read(&MemPath::parse_file(memdir_core::note::INDEX_FILE)?) {
        Ok(b) => Some(String::from_utf8_lossy(&b[..b.len().min(HEAD_BYTES)]).into_owned()),
        Err(StoreError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let survey = Survey {
        top: names.iter().map(String::as_str).collect(),
        dated_memory_files: dated("memory")?,
        dated_log_files: dated(memdir_core::log::LOG_DIR)?,
        index_head: head.as_deref(),
    };
    detect(&survey).map_err(Error::Invalid)
}

/// What `memdir export --format` wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ExportReport {
    /// The layout written.
    pub format: String,
    /// Files written.
    pub written: Vec<String>,
    /// Files that were there already with the same bytes.
    pub unchanged: Vec<String>,
    /// This memory's files left out (memdir's own: the generated index, scratch, the archive,
    /// proposals, gates, offloads, reports).
    pub left_out: usize,
}

/// Writes this memory into `target` (a folder) in a host's layout: Claude Code's (topic
/// files, and a `MEMORY.md` that starts with core and links every note) or OpenClaw's
/// (core as `MEMORY.md`, logs in `memory/`, notes in `memory/notes/`). Nothing is written
/// over: a file already there with other bytes refuses the whole export before any write.
pub(crate) fn export_layout(
    cx: &Ctx,
    to: LayoutName,
    target: &dyn Store,
) -> Result<ExportReport, Error> {
    let layout = cx.layout();
    let store = cx.store();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut report = ExportReport {
        format: to.as_str().to_string(),
        ..ExportReport::default()
    };
    let all = match store.walk(&MemPath::root()) {
        Ok(v) => v,
        Err(StoreError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let mut index_lines: Vec<(String, String, String)> = Vec::new();
    for e in all.into_iter().filter(|e| e.kind == EntryKind::File) {
        let rel = e.path.as_str();
        let Some(out) = layout.export_target(rel, to) else {
            report.left_out += 1;
            continue;
        };
        let bytes = store.read(&e.path)?;
        if layout.is_note_path(rel) {
            let text = String::from_utf8_lossy(&bytes);
            if memdir_core::layout::is_generated_folder_index(rel, &text) {
                report.left_out += 1;
                continue;
            }
            let note = memdir_core::note::Note::parse(&text);
            let name = note
                .meta
                .name
                .clone()
                .unwrap_or_else(|| out.trim_end_matches(".md").to_string());
            index_lines.push((name, out.clone(), note.meta.description.unwrap_or_default()));
        }
        if files.iter().any(|(p, _)| *p == out) {
            return Err(Error::Conflict(format!(
                "two files of this memory would both be {out} in the {to} layout: rename one, then export again"
            )));
        }
        files.push((out, bytes));
    }
    if to == LayoutName::ClaudeCode {
        let core = match store.read(&MemPath::parse_file(layout.core)?) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(StoreError::NotFound(_)) => String::new(),
            Err(e) => return Err(e.into()),
        };
        index_lines.sort_by(|a, b| a.1.cmp(&b.1));
        let index = memdir_core::host::claude_code_index(&core, &index_lines);
        files.push((
            memdir_core::note::INDEX_FILE.to_string(),
            index.into_bytes(),
        ));
    }
    // Check everything before writing anything.
    let mut todo = Vec::new();
    for (path, bytes) in files {
        let p = MemPath::parse_file(&path)?;
        match target.read(&p) {
            Ok(have) if have == bytes => report.unchanged.push(path),
            Ok(_) => {
                return Err(Error::Conflict(format!(
                    "{path} is already in the target with other content: export to an empty folder, or move that file away"
                )));
            }
            Err(StoreError::NotFound(_)) => todo.push((p, bytes)),
            Err(e) => return Err(e.into()),
        }
    }
    for (p, bytes) in todo {
        target.write(&p, &bytes)?;
        report.written.push(p.to_string());
    }
    Ok(report)
}
