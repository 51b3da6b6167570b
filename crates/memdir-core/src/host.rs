//! Folder layouts: where each layer lives in a memory folder that another tool already keeps.
//!
//! memdir's own layout is `core.md`, `log/YYYY-MM-DD.md`, a generated `MEMORY.md` and notes
//! anywhere. Two hosts keep agent memory in folders of their own, and memdir serves those in
//! place, without moving a file:
//!
//! | layer | `memdir` | `claude-code` | `openclaw` |
//! |---|---|---|---|
//! | core (always loaded) | `core.md` | `core.md` (memdir's; Claude Code loads `MEMORY.md` only) | `MEMORY.md` |
//! | index of notes | `MEMORY.md`, generated | `MEMORY.md`, written by the agent | none |
//! | daily logs | `log/YYYY-MM-DD.md` | `log/YYYY-MM-DD.md` (memdir's) | `memory/YYYY-MM-DD.md` |
//! | where `note new` writes | `notes/` | the top level, one topic file per memory | `notes/` |
//! | state, scratch | `state.md`, `scratch/` | the same (memdir's) | the same (memdir's) |
//!
//! ```
//! use memdir_core::host::{FolderLayout, IndexKind, LayoutName};
//!
//! let open = FolderLayout::of(LayoutName::OpenClaw);
//! assert_eq!(open.core, "MEMORY.md");
//! assert_eq!(open.log_path("2026-11-30".parse().unwrap()), "memory/2026-11-30.md");
//! assert!(!open.is_note_path("memory/2026-11-30.md"));
//! assert_eq!(FolderLayout::of(LayoutName::ClaudeCode).index, IndexKind::HandWritten);
//! ```

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

/// The layouts memdir knows, as `--layout` and `[layout] name` spell them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LayoutName {
    /// memdir's own layout.
    #[default]
    Memdir,
    /// Claude Code's auto memory (`~/.claude/projects/<project>/memory/`).
    ClaudeCode,
    /// An OpenClaw workspace (`~/.openclaw/workspace`).
    #[serde(rename = "openclaw")]
    OpenClaw,
}

impl LayoutName {
    /// Every layout, in the order help text lists them.
    pub const ALL: [LayoutName; 3] = [
        LayoutName::Memdir,
        LayoutName::ClaudeCode,
        LayoutName::OpenClaw,
    ];

    /// The name as written on the command line and in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutName::Memdir => "memdir",
            LayoutName::ClaudeCode => "claude-code",
            LayoutName::OpenClaw => "openclaw",
        }
    }

    /// Reads a layout name; the error lists the ones there are.
    pub fn parse(s: &str) -> Result<LayoutName, String> {
        LayoutName::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown layout {s:?}: use memdir, claude-code or openclaw"))
    }
}

impl std::fmt::Display for LayoutName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who keeps the index of notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexKind {
    /// memdir generates it from the notes' frontmatter and refuses writes to it.
    Generated,
    /// The host's agent writes it; memdir loads it, lets it be written like any file, never
    /// regenerates it, and lint reports where it and the notes drifted apart.
    HandWritten,
    /// The layout has no index of notes.
    None,
}

/// Where each layer lives in one layout. All paths are relative to the memory folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FolderLayout {
    /// Which layout this is.
    pub name: LayoutName,
    /// The always-loaded file.
    pub core: &'static str,
    /// The index of notes, at the root.
    pub index_file: &'static str,
    /// Who keeps the index (or that there is none).
    pub index: IndexKind,
    /// The folder of daily logs, `<log_dir>/YYYY-MM-DD.md`.
    pub log_dir: &'static str,
    /// Where `memdir note new` writes: a folder, or `""` for the top level.
    pub notes_dir: &'static str,
    /// Running state.
    pub state: &'static str,
    /// Scratch notes.
    pub scratch: &'static str,
}

/// The always-loaded file of memdir's own layout (and Claude Code's).
pub const CORE_FILE: &str = "core.md";

/// Top-level folders whose files are never notes, in every layout (besides its log folder).
const NOT_NOTE_DIRS: [&str; 8] = [
    "log",
    "scratch",
    "archive",
    "offload",
    "sessions",
    "proposals",
    "consolidation",
    ".memdir",
];

/// OpenClaw's bootstrap files: the host injects them into its sessions itself.
pub const OPENCLAW_BOOTSTRAP: [&str; 6] = [
    "AGENTS.md",
    "SOUL.md",
    "USER.md",
    "TOOLS.md",
    "IDENTITY.md",
    "HEARTBEAT.md",
];

impl Default for FolderLayout {
    fn default() -> Self {
        FolderLayout::of(LayoutName::Memdir)
    }
}

impl FolderLayout {
    /// The layout called `name`.
    pub fn of(name: LayoutName) -> FolderLayout {
        let memdir = FolderLayout {
            name,
            core: CORE_FILE,
            index_file: crate::note::INDEX_FILE,
            index: IndexKind::Generated,
            log_dir: crate::log::LOG_DIR,
            notes_dir: crate::note::NOTES_DIR,
            state: crate::state::STATE_FILE,
            scratch: crate::scratch::SCRATCH_DIR,
        };
        match name {
            LayoutName::Memdir => memdir,
            LayoutName::ClaudeCode => FolderLayout {
                index: IndexKind::HandWritten,
                notes_dir: "",
                ..memdir
            },
            LayoutName::OpenClaw => FolderLayout {
                core: "MEMORY.md",
                index: IndexKind::None,
                log_dir: "memory",
                ..memdir
            },
        }
    }

    /// True when memdir writes the index and refuses other writes to it.
    pub fn index_generated(&self) -> bool {
        self.index == IndexKind::Generated
    }

    /// The index file, when the layout has one.
    pub fn index_path(&self) -> Option<&'static str> {
        (self.index != IndexKind::None).then_some(self.index_file)
    }

    /// The main log for `date`, e.g. `log/2026-11-30.md` or `memory/2026-11-30.md`.
    pub fn log_path(&self, date: Date) -> String {
        format!("{}/{}.md", self.log_dir, date.strftime("%Y-%m-%d"))
    }

    /// A non-main writer's log for `date`, e.g. `log/2026-11-30.sub1.md`; in OpenClaw's layout
    /// `memory/2026-11-30-sub1.md`, a slugged daily note, which OpenClaw loads with the day's.
    pub fn writer_log_path(&self, date: Date, writer: &str) -> String {
        let day = date.strftime("%Y-%m-%d");
        match self.name {
            LayoutName::OpenClaw => format!("{}/{day}-{writer}.md", self.log_dir),
            _ => format!("{}/{day}.{writer}.md", self.log_dir),
        }
    }

    /// The date of a log file, when `path` is one (`<log_dir>/YYYY-MM-DD[.writer].md`, and in
    /// OpenClaw's layout `memory/YYYY-MM-DD-<slug>.md` too).
    pub fn log_date(&self, path: &str) -> Option<Date> {
        let name = path.strip_prefix(self.log_dir)?.strip_prefix('/')?;
        if name.contains('/') {
            return None;
        }
        self.log_name_date(name)
    }

    /// The date in a log file's name (see [`FolderLayout::log_date`]).
    pub fn log_name_date(&self, name: &str) -> Option<Date> {
        crate::log::date_of_file_name(name).or_else(|| {
            self.dashed(name)
                .and_then(|_| name.get(..10)?.parse::<Date>().ok())
        })
    }

    /// The writer in a log file's name: `None` for the day's main log.
    pub fn log_name_writer<'a>(&self, name: &'a str) -> Option<&'a str> {
        crate::log::writer_of_file_name(name).or_else(|| self.dashed(name))
    }

    /// The slug of OpenClaw's `YYYY-MM-DD-<slug>.md`, in that layout only.
    fn dashed<'a>(&self, name: &'a str) -> Option<&'a str> {
        if self.name != LayoutName::OpenClaw {
            return None;
        }
        let stem = name.strip_suffix(".md")?;
        let slug = stem.get(10..)?.strip_prefix('-')?;
        (!slug.is_empty() && !slug.contains('.') && stem.get(..10)?.parse::<Date>().is_ok())
            .then_some(slug)
    }

    /// The path `memdir note new` writes for a name (`people/priya` → `notes/people/priya.md`,
    /// or `people/priya.md` where notes live at the top level).
    pub fn note_path(&self, name: &str) -> String {
        match self.notes_dir {
            "" => format!("{name}.md"),
            dir => format!("{dir}/{name}.md"),
        }
    }

    /// The root files that are never notes: core, the index, state.
    pub fn special_files(&self) -> [&'static str; 3] {
        [self.core, self.index_file, self.state]
    }

    /// True when `path` names a note: a `.md` file that is not core, the index or state at
    /// the root, not in a folder of logs, scratch, archive, offload, proposals or consolidation
    /// reports, and not hidden. In the OpenClaw layout the host's bootstrap files (`AGENTS.md`,
    /// `SOUL.md`, ...) are not notes either, and files in `memory/` other than the daily notes
    /// are notes.
    pub fn is_note_path(&self, path: &str) -> bool {
        if !path.ends_with(".md") || path.len() <= 3 || path.split('/').any(|c| c.starts_with('.'))
        {
            return false;
        }
        match path.split_once('/') {
            None => {
                let bootstrap =
                    self.name == LayoutName::OpenClaw && OPENCLAW_BOOTSTRAP.contains(&path);
                !(self.special_files().contains(&path) || bootstrap)
            }
            Some((top, _)) if top == self.log_dir && self.log_dir != "log" => {
                self.log_date(path).is_none()
            }
            Some((top, _)) => !NOT_NOTE_DIRS.contains(&top),
        }
    }

    /// True when `path` is a layer file an external source may not write: core, state, a
    /// generated index, or a log (logs take external lines only through `log`, labelled).
    pub fn is_trusted_only(&self, path: &str) -> bool {
        path == self.core
            || path == self.state
            || (path == self.index_file && self.index != IndexKind::None)
            || self.log_date(path).is_some()
            || path.split('/').next() == Some(self.log_dir) && self.log_dir == "log"
    }
}

/// What [`detect`] looks at: the top level of a folder and a little of what is in it.
#[derive(Debug, Clone, Default)]
pub struct Survey<'a> {
    /// The names at the top level (files and folders, folders without a trailing `/`).
    pub top: Vec<&'a str>,
    /// True when `memory/` holds at least one `YYYY-MM-DD.md` file.
    pub dated_memory_files: bool,
    /// True when `log/` holds at least one `YYYY-MM-DD.md` file.
    pub dated_log_files: bool,
    /// The start of `MEMORY.md`, when there is one.
    pub index_head: Option<&'a str>,
}

/// The layout a folder already has, for `memdir init --existing`: `Ok(None)` for an empty
/// folder (memdir's own layout will be made), an error naming both candidates when the signs
/// disagree, so the user chooses with `--layout`.
pub fn detect(s: &Survey<'_>) -> Result<Option<LayoutName>, String> {
    let has = |n: &str| s.top.contains(&n);
    let generated = s
        .index_head
        .is_some_and(|h| h.starts_with("# Memory index\n"));
    let mut signs: Vec<(LayoutName, String)> = Vec::new();
    if has("core.md") || s.dated_log_files || generated {
        let why = if has("core.md") {
            "core.md"
        } else if generated {
            "a generated MEMORY.md"
        } else {
            "log/YYYY-MM-DD.md files"
        };
        signs.push((LayoutName::Memdir, why.into()));
    }
    let bootstrap = OPENCLAW_BOOTSTRAP.iter().find(|b| has(b));
    if s.dated_memory_files || bootstrap.is_some() {
        let why = match bootstrap {
            Some(b) if !s.dated_memory_files => (*b).to_string(),
            _ => "memory/YYYY-MM-DD.md daily notes".to_string(),
        };
        signs.push((LayoutName::OpenClaw, why));
    }
    if has("MEMORY.md") && !generated && signs.is_empty() {
        signs.push((
            LayoutName::ClaudeCode,
            "a MEMORY.md index next to topic files".into(),
        ));
    }
    match signs.as_slice() {
        [] if s.top.iter().all(|n| n.starts_with('.')) => Ok(None),
        [] => Err(
            "cannot tell which layout this folder has: pass --layout memdir|claude-code|openclaw"
                .into(),
        ),
        [(one, _)] => Ok(Some(*one)),
        [(a, why_a), (b, why_b), ..] => Err(format!(
            "this folder looks like both {a} ({why_a}) and {b} ({why_b}): pass --layout {a} or --layout {b}"
        )),
    }
}

/// One link of a hand-written index: the 1-based line and the file it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexLink {
    /// The line of the index the link is on.
    pub line: usize,
    /// The link's text (`Title` of `[Title](file.md)`).
    pub title: String,
    /// What follows the link on its line, without the dash before it (the one-line hook).
    pub hook: String,
    /// The link target as a path relative to the folder (percent-escapes of spaces and
    /// parentheses decoded, a `./` prefix and an `#anchor` dropped).
    pub target: String,
}

/// The Markdown links to local `.md` files in a hand-written index such as Claude Code's
/// `MEMORY.md` (`- [Title](file.md) — one-line hook`). Links to URLs are not files.
pub fn index_links(text: &str) -> Vec<IndexLink> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let title = rest[..at]
                .rsplit_once('[')
                .map(|(_, t)| t.to_string())
                .unwrap_or_default();
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let raw = after[..end].trim();
            rest = &after[end..];
            let hook = rest[1..]
                .trim()
                .trim_start_matches(['—', '–', '-', ':'])
                .trim()
                .to_string();
            let raw = raw.split('#').next().unwrap_or("");
            if raw.contains("://") || raw.starts_with("mailto:") || !raw.ends_with(".md") {
                continue;
            }
            let target = raw
                .trim_start_matches("./")
                .replace("%20", " ")
                .replace("%28", "(")
                .replace("%29", ")");
            out.push(IndexLink {
                line: i + 1,
                title,
                hook,
                target,
            });
        }
    }
    out
}

/// Where a file of a host's folder goes when it is imported into a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// A note at this path of the memory.
    Note(String),
    /// A daily log at this path of the memory.
    Log(String),
    /// The memory's core.
    Core,
    /// Not imported, and why.
    Skip(&'static str),
}

impl FolderLayout {
    /// `rel` inside the folder notes are written to (`notes/` or the top level).
    pub fn in_notes(&self, rel: &str) -> String {
        match self.notes_dir {
            "" => rel.to_string(),
            dir => format!("{dir}/{rel}"),
        }
    }

    /// Where the file `rel` of a folder in this (host) layout goes in a memory laid out as
    /// `into`. Claude Code's topic files become notes and its `MEMORY.md` is left to memdir's own
    /// index; OpenClaw's `MEMORY.md` is core, its daily notes are logs of the writer `openclaw`,
    /// `memory/notes/` holds notes (where `memdir export --format openclaw` puts them), and its
    /// other Markdown files become notes under `openclaw/`.
    pub fn import_target(&self, rel: &str, into: &FolderLayout) -> Imported {
        if !rel.ends_with(".md") || rel.split('/').any(|c| c.starts_with('.')) {
            return Imported::Skip("not a Markdown file");
        }
        if rel == self.state {
            return Imported::Skip("running state stays with the folder it describes");
        }
        if rel == self.core {
            return Imported::Core;
        }
        if let Some(date) = self.log_date(rel) {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            return Imported::Log(match self.log_name_writer(name) {
                Some(w) => into.writer_log_path(date, &crate::chat::title_slug(w)),
                None if self.name == LayoutName::OpenClaw => into.writer_log_path(date, "openclaw"),
                None => into.log_path(date),
            });
        }
        match self.name {
            _ if rel == self.index_file && self.index != IndexKind::None => {
                Imported::Skip("an index: memdir's own lists the notes from their frontmatter")
            }
            LayoutName::OpenClaw => match rel.strip_prefix("memory/notes/") {
                Some(rest) => Imported::Note(into.in_notes(rest)),
                None => Imported::Note(into.in_notes(&format!("openclaw/{rel}"))),
            },
            _ if rel
                .split('/')
                .next()
                .is_some_and(|t| NOT_NOTE_DIRS.contains(&t)) =>
            {
                Imported::Skip("memdir's own folder")
            }
            _ => Imported::Note(into.in_notes(self.notes_relative(rel))),
        }
    }

    /// A note's path below the notes folder (`notes/a/b.md` → `a/b.md`); other paths as they are.
    pub fn notes_relative<'a>(&self, rel: &'a str) -> &'a str {
        match self.notes_dir {
            "" => rel,
            dir => rel
                .strip_prefix(dir)
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(rel),
        }
    }

    /// Where the file `rel` of a memory in this layout goes when it is exported to a folder in
    /// the layout `to`; `None` for what stays memdir's own (the generated index, scratch, the
    /// archive, proposals, gates, offloads, consolidation reports). Core goes to OpenClaw's
    /// `MEMORY.md`, or to the top of Claude Code's `MEMORY.md` (see [`claude_code_index`]).
    pub fn export_target(&self, rel: &str, to: LayoutName) -> Option<String> {
        let target = FolderLayout::of(to);
        if rel == self.core {
            return (to == LayoutName::OpenClaw).then(|| target.core.to_string());
        }
        if rel == self.state {
            return Some(target.state.to_string());
        }
        if let Some(date) = self.log_date(rel) {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            return Some(match self.log_name_writer(name) {
                Some(w) => target.writer_log_path(date, w),
                None => target.log_path(date),
            });
        }
        if !self.is_note_path(rel) {
            return None;
        }
        let inner = self.notes_relative(rel);
        Some(match to {
            LayoutName::OpenClaw => format!("memory/notes/{inner}"),
            _ => target.in_notes(inner),
        })
    }
}

/// Claude Code's `MEMORY.md` for an exported memory: core's text first (Claude Code loads this
/// file into every session), then one line per note, `- [name](path) — description`.
pub fn claude_code_index(core: &str, notes: &[(String, String, String)]) -> String {
    let mut out = String::from("# Memory\n\n");
    if !core.trim().is_empty() {
        out.push_str(core.trim_end());
        out.push_str("\n\n");
    }
    for (name, path, description) in notes {
        let name = name.replace('[', "\\[").replace(']', "\\]");
        let path = path
            .replace(' ', "%20")
            .replace('(', "%28")
            .replace(')', "%29");
        let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
        if description.is_empty() {
            out.push_str(&format!("- [{name}]({path})\n"));
        } else {
            out.push_str(&format!("- [{name}]({path}) — {description}\n"));
        }
    }
    out
}

/// `text` with a frontmatter block holding `name` and `description` put in front, when it has
/// none (a host's file read as a note, so memdir's index can list it); `None` when it has one.
pub fn with_frontmatter(text: &str, name: &str, description: &str) -> Option<String> {
    if text.starts_with("---\n") || text.starts_with("---\r\n") {
        return None;
    }
    let one = |s: &str| {
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        serde_json::to_string(&s).unwrap_or_default()
    };
    Some(format!(
        "---\nname: {}\ndescription: {}\n---\n{text}",
        one(name),
        one(description)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in LayoutName::ALL {
            assert_eq!(LayoutName::parse(l.as_str()), Ok(l));
        }
        assert!(
            LayoutName::parse("obsidian")
                .unwrap_err()
                .contains("claude-code")
        );
    }

    /// `MemPath::known` trusts these: every layer path of every layout is a memory path (and
    /// only the notes folder of a flat layout is the root).
    #[test]
    fn every_layer_path_parses() {
        use crate::path::MemPath;
        for l in LayoutName::ALL {
            let f = FolderLayout::of(l);
            for p in [f.core, f.index_file, f.log_dir, f.state, f.scratch] {
                let parsed = MemPath::parse(p).unwrap_or_else(|e| panic!("{l:?} {p:?}: {e}"));
                assert!(!parsed.is_root(), "{l:?} names the root for a layer");
            }
            assert!(MemPath::parse(f.notes_dir).is_ok(), "{l:?}");
        }
        for p in [
            CORE_FILE,
            crate::scratch::SCRATCH_DIR,
            crate::note::INDEX_FILE,
        ] {
            assert!(!MemPath::known(p).is_root(), "{p}");
        }
    }

    #[test]
    fn notes_per_layout() {
        let m = FolderLayout::of(LayoutName::Memdir);
        assert!(m.is_note_path("notes/a.md") && m.is_note_path("a.md"));
        assert!(!m.is_note_path("MEMORY.md") && !m.is_note_path("log/2026-11-30.md"));
        assert!(!m.is_note_path("log/other.md"));
        let c = FolderLayout::of(LayoutName::ClaudeCode);
        assert!(c.is_note_path("user_role.md"));
        assert!(!c.is_note_path("MEMORY.md"));
        assert_eq!(c.note_path("user-role"), "user-role.md");
        let o = FolderLayout::of(LayoutName::OpenClaw);
        assert!(!o.is_note_path("MEMORY.md") && !o.is_note_path("AGENTS.md"));
        assert!(!o.is_note_path("memory/2026-11-30.md"));
        assert!(o.is_note_path("memory/projects.md"));
        assert!(o.is_note_path("core.md"));
        assert_eq!(
            o.log_date("memory/2026-11-30.bot.md"),
            "2026-11-30".parse().ok()
        );
        assert_eq!(o.log_date("log/2026-11-30.md"), None);
        // OpenClaw's slugged daily notes are the day's too, and name their writer.
        assert_eq!(
            o.log_date("memory/2026-11-30-session-a1.md"),
            "2026-11-30".parse().ok()
        );
        assert_eq!(
            o.log_name_writer("2026-11-30-session-a1.md"),
            Some("session-a1")
        );
        assert_eq!(
            o.writer_log_path("2026-11-30".parse().unwrap(), "bot"),
            "memory/2026-11-30-bot.md"
        );
        assert!(!o.is_note_path("memory/2026-11-30-session-a1.md"));
        assert_eq!(m.log_date("log/2026-11-30-x.md"), None);
        assert!(o.is_trusted_only("MEMORY.md") && o.is_trusted_only("memory/2026-11-30.md"));
        assert!(!o.is_trusted_only("memory/projects.md"));
        assert!(c.is_trusted_only("MEMORY.md") && !c.is_trusted_only("user_role.md"));
    }

    #[test]
    fn detects_only_what_is_unambiguous() {
        let survey = |top: Vec<&'static str>, mem: bool, head: Option<&'static str>| Survey {
            top,
            dated_memory_files: mem,
            dated_log_files: false,
            index_head: head,
        };
        assert_eq!(detect(&survey(vec![], false, None)), Ok(None));
        assert_eq!(detect(&survey(vec![".git"], false, None)), Ok(None));
        assert_eq!(
            detect(&survey(
                vec!["MEMORY.md", "user_role.md"],
                false,
                Some("- [Role](user_role.md) — x\n")
            )),
            Ok(Some(LayoutName::ClaudeCode))
        );
        assert_eq!(
            detect(&survey(
                vec!["MEMORY.md", "memory"],
                true,
                Some("# Facts\n")
            )),
            Ok(Some(LayoutName::OpenClaw))
        );
        assert_eq!(
            detect(&survey(vec!["AGENTS.md"], false, None)),
            Ok(Some(LayoutName::OpenClaw))
        );
        assert_eq!(
            detect(&survey(
                vec!["MEMORY.md", "core.md"],
                false,
                Some("# Memory index\n\n")
            )),
            Ok(Some(LayoutName::Memdir))
        );
        let both = detect(&survey(vec!["core.md", "memory"], true, None)).unwrap_err();
        assert!(
            both.contains("--layout memdir or --layout openclaw"),
            "{both}"
        );
        assert!(detect(&survey(vec!["readme.txt"], false, None)).is_err());
    }

    #[test]
    fn links_of_a_hand_written_index() {
        let text = "# Memory\n- [Role](user_role.md) — senior dev\n- [Docs](https://x.dev/a.md) and [b](./sub/b%20c.md#top)\n";
        assert_eq!(
            index_links(text),
            vec![
                IndexLink {
                    line: 2,
                    title: "Role".into(),
                    hook: "senior dev".into(),
                    target: "user_role.md".into()
                },
                IndexLink {
                    line: 3,
                    title: "b".into(),
                    hook: String::new(),
                    target: "sub/b c.md".into()
                },
            ]
        );
    }

    #[test]
    fn import_and_export_targets() {
        let memdir = FolderLayout::default();
        let cc = FolderLayout::of(LayoutName::ClaudeCode);
        let oc = FolderLayout::of(LayoutName::OpenClaw);
        assert_eq!(
            cc.import_target("user_role.md", &memdir),
            Imported::Note("notes/user_role.md".into())
        );
        assert!(matches!(
            cc.import_target("MEMORY.md", &memdir),
            Imported::Skip(_)
        ));
        assert_eq!(oc.import_target("MEMORY.md", &memdir), Imported::Core);
        assert_eq!(
            oc.import_target("memory/2026-11-30.md", &memdir),
            Imported::Log("log/2026-11-30.openclaw.md".into())
        );
        assert_eq!(
            oc.import_target("memory/notes/a/b.md", &memdir),
            Imported::Note("notes/a/b.md".into())
        );
        assert_eq!(
            oc.import_target("USER.md", &memdir),
            Imported::Note("notes/openclaw/USER.md".into())
        );
        assert!(matches!(
            oc.import_target("memory/x.json", &memdir),
            Imported::Skip(_)
        ));
        // Export and import meet again at the same note path.
        for to in [LayoutName::ClaudeCode, LayoutName::OpenClaw] {
            let out = memdir.export_target("notes/people/priya.md", to).unwrap();
            let back = FolderLayout::of(to).import_target(&out, &memdir);
            assert_eq!(back, Imported::Note("notes/people/priya.md".into()), "{to}");
        }
        assert_eq!(
            memdir
                .export_target("core.md", LayoutName::OpenClaw)
                .as_deref(),
            Some("MEMORY.md")
        );
        assert_eq!(
            memdir.export_target("core.md", LayoutName::ClaudeCode),
            None
        );
        assert_eq!(
            memdir.export_target("MEMORY.md", LayoutName::ClaudeCode),
            None
        );
        assert_eq!(
            memdir.export_target("scratch/1-a.md", LayoutName::OpenClaw),
            None
        );
        assert_eq!(
            memdir
                .export_target("log/2026-11-30.bot.md", LayoutName::OpenClaw)
                .as_deref(),
            Some("memory/2026-11-30-bot.md")
        );
        assert_eq!(
            oc.import_target("memory/2026-11-30-session.md", &memdir),
            Imported::Log("log/2026-11-30.session.md".into())
        );
    }

    #[test]
    fn claude_code_index_lines_read_back() {
        let text = claude_code_index(
            "prefers tabs\n",
            &[("role".into(), "user role.md".into(), "senior\ndev".into())],
        );
        assert_eq!(
            text,
            "# Memory\n\nprefers tabs\n\n- [role](user%20role.md) — senior dev\n"
        );
        let links = index_links(&text);
        assert_eq!(links[0].target, "user role.md");
        assert_eq!(links[0].hook, "senior dev");
        assert_eq!(with_frontmatter("---\nname: a\n---\n", "a", "b"), None);
        assert_eq!(
            with_frontmatter("body\n", "a", "x: y").unwrap(),
            "---\nname: \"a\"\ndescription: \"x: y\"\n---\nbody\n"
        );
    }
}
