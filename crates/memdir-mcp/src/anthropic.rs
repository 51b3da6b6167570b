//! The Anthropic memory tool (`memory_20250818`): `view`, `create`, `str_replace`, `insert`,
//! `delete` and `rename` on `/memories/...`, with the return and error strings of the official
//! "Memory tool" documentation page, verbatim.
//!
//! `/memories` is the memory root. Every path must start with it, is parsed by [`MemPath`] (no
//! `..`, plain or percent-encoded) and reaches the files only through the engine, so the folder
//! store's confinement applies too.
//!
//! Where the documentation is silent the Python SDK's helper is followed (the edit snippet, the
//! path-refusal messages, `, `-joined line numbers). Where the SDK helpers and the docs disagree,
//! the docs win:
//! - the directory header says "excluding hidden items and node_modules" and skips both (the
//!   Python helper says only "excluding hidden items" and lists `node_modules`);
//! - the `insert` range error is "…within the range of lines of the file: [0, n]" with no final
//!   period (Python: "…within the range [0, n].");
//! - sizes always carry one decimal from 1K up, as in the docs' `4.0K` (Python prints `4K`);
//! - a multi-line `old_str` is matched against the whole file (the TypeScript helper compares it
//!   line by line, so it never matches there).
//!
//! Two choices the docs leave open: a file's lines are its newline-terminated lines (a final
//! newline does not add an empty last line, unlike the helpers' `split("\n")`), and `view` shows
//! at most [`VIEW_CHAR_CAP`] characters of a file, then says which `view_range` shows the rest.

use crate::ToolText;
use memdir::{EntryKind, Error, Memory, Precondition, StoreError};
use memdir_core::path::{MEMORIES_PREFIX, MemPath, PathError};
use serde_json::Value;

/// The tool's type, as declared in a Messages API request.
pub const TOOL_TYPE: &str = "memory_20250818";
/// The tool's name; the API requires exactly this.
pub const TOOL_NAME: &str = "memory";
/// Files with more lines than this are refused by `view`, as the docs recommend.
pub const MAX_LINES: usize = 999_999;
/// The most characters of file content one `view` returns; Claude's tool description says
/// longer files are truncated at this size, and it pages with `view_range`.
pub const VIEW_CHAR_CAP: usize = 16_000;
/// How many levels below the viewed folder a directory listing goes.
const LIST_DEPTH: usize = 2;

/// The six commands.
pub const COMMANDS: [&str; 6] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename",
];

/// Runs one tool call. `input` is the `input` object of Claude's `tool_use` block.
pub fn run(mem: &Memory, input: &Value) -> ToolText {
    match dispatch(mem, input) {
        Ok(text) => ToolText::ok(text),
        Err(text) => ToolText::error(text),
    }
}

type Reply = Result<String, String>;

fn dispatch(mem: &Memory, input: &Value) -> Reply {
    let Some(obj) = input.as_object() else {
        return Err("Error: the tool input must be a JSON object with a `command` field".into());
    };
    let command = match obj.get("command") {
        Some(Value::String(c)) => c.as_str(),
        _ => {
            return Err(format!(
                "Error: missing `command`: use one of {}",
                COMMANDS.join(", ")
            ));
        }
    };
    let args = Args { obj, command };
    match command {
        "view" => view(mem, &args),
        "create" => create(mem, &args),
        "str_replace" => str_replace(mem, &args),
        "insert" => insert(mem, &args),
        "delete" => delete(mem, &args),
        "rename" => rename(mem, &args),
        other => Err(format!(
            "Error: Unknown command: '{other}'. Valid commands are: {}",
            COMMANDS.join(", ")
        )),
    }
}

/// The fields of one call, with errors that name the field and the command.
struct Args<'a> {
    obj: &'a serde_json::Map<String, Value>,
    command: &'a str,
}

impl Args<'_> {
    fn str(&self, field: &str) -> Result<&str, String> {
        match self.obj.get(field) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(format!(
                "Error: `{field}` must be a string for command `{}`",
                self.command
            )),
            None => Err(format!(
                "Error: missing required parameter `{field}` for command `{}`",
                self.command
            )),
        }
    }

    fn opt_str(&self, field: &str) -> Result<Option<&str>, String> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.str(field).map(Some),
        }
    }

    fn int(&self, field: &str) -> Result<i64, String> {
        match self.obj.get(field) {
            Some(v) => v.as_i64().ok_or_else(|| {
                format!(
                    "Error: `{field}` must be an integer for command `{}`",
                    self.command
                )
            }),
            None => Err(format!(
                "Error: missing required parameter `{field}` for command `{}`",
                self.command
            )),
        }
    }
}

/// A `/memories/...` path: as given (for messages) and parsed (for the engine).
struct Target<'a> {
    shown: &'a str,
    path: MemPath,
}

fn target(shown: &str) -> Result<Target<'_>, String> {
    let rest = shown.strip_prefix(MEMORIES_PREFIX);
    if !rest.is_some_and(|r| r.is_empty() || r.starts_with('/')) {
        return Err(format!(
            "Error: Path must start with /memories, got: {shown}"
        ));
    }
    if shown.contains('\\') {
        return Err(format!(
            "Error: Path {shown} would escape /memories directory"
        ));
    }
    match MemPath::parse(shown) {
        Ok(path) => Ok(Target { shown, path }),
        Err(PathError::Reserved(_)) => Err(format!(
            "Error: Path {shown} is reserved: .memdir/ and .git/ are not part of memory"
        )),
        Err(PathError::Escape(_) | PathError::Nul(_)) => Err(format!(
            "Error: Path {shown} would escape /memories directory"
        )),
        Err(PathError::Empty) => Err(format!("Error: Path {shown} names no file")),
        Err(e @ PathError::Unusable(_)) => Err(format!("Error: Path {shown} is refused: {e}")),
    }
}

/// The canonical `/memories/...` form of a parsed path, used in listings.
fn display(p: &MemPath) -> String {
    if p.is_root() {
        MEMORIES_PREFIX.to_string()
    } else {
        format!("{MEMORIES_PREFIX}/{p}")
    }
}

/// Any engine failure that has no message of its own in the contract.
fn engine(e: impl Into<Error>) -> String {
    let e: Error = e.into();
    match e {
        // The contract's symlink message only for a real escape; a path that runs through a
        // file or a folder moved into itself is also an invalid path, and says so itself.
        Error::Store(StoreError::InvalidPath(ref m)) if m.contains("outside the memory folder") => {
            format!("Error: Path would escape /memories directory via symlink ({e})")
        }
        other => format!("Error: {other}"),
    }
}

fn kind_of(mem: &Memory, p: &MemPath) -> Result<Option<EntryKind>, String> {
    mem.store()
        .stat(p)
        .map(|e| e.map(|e| e.kind))
        .map_err(engine)
}

/// Reads a file as text, or `None` when there is no file there (a folder counts as none).
fn read_text(mem: &Memory, t: &Target<'_>) -> Result<Option<String>, String> {
    if kind_of(mem, &t.path)? != Some(EntryKind::File) {
        return Ok(None);
    }
    match mem.read(t.path.as_str()) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("Error: Unsupported file type for {}", t.shown)),
        Err(e) if e.kind() == memdir::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(engine(e)),
    }
}

/// Splits text into lines the way the tool counts them: a final newline ends the last line
/// rather than starting an empty one.
fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

fn numbered(lines: &[&str], first: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{:>6}\t{line}", i + first));
    }
    out
}

fn view(mem: &Memory, a: &Args<'_>) -> Reply {
    let t = target(a.str("path")?)?;
    let not_found = || {
        format!(
            "The path {} does not exist. Please provide a valid path.",
            t.shown
        )
    };
    match kind_of(mem, &t.path)? {
        None => Err(not_found()),
        Some(EntryKind::Dir) => list_dir(mem, &t),
        Some(EntryKind::File) => {
            let text = read_text(mem, &t)?.ok_or_else(not_found)?;
            let range = match a.obj.get("view_range") {
                None | Some(Value::Null) => None,
                Some(v) => Some(parse_range(v)?),
            };
            view_file(&t, &text, range)
        }
    }
}

fn parse_range(v: &Value) -> Result<(i64, i64), String> {
    let bad = || {
        "Error: `view_range` must be two integers [start_line, end_line]; use -1 as end_line for the end of the file"
            .to_string()
    };
    let arr = v.as_array().ok_or_else(bad)?;
    match arr.as_slice() {
        [s, e] => Ok((s.as_i64().ok_or_else(bad)?, e.as_i64().ok_or_else(bad)?)),
        _ => Err(bad()),
    }
}

fn view_file(t: &Target<'_>, text: &str, range: Option<(i64, i64)>) -> Reply {
    let lines = split_lines(text);
    let n = lines.len();
    if n > MAX_LINES {
        return Err(format!(
            "File {} exceeds maximum line limit of 999,999 lines.",
            t.shown
        ));
    }
    let (start, end) = match range {
        None => (1, n),
        Some((s, e)) => {
            let range_shown = format!("[{s}, {e}]");
            if s < 1 || (s as u64) > n.max(1) as u64 {
                return Err(format!(
                    "Error: Invalid `view_range` parameter: {range_shown}. Its first element `{s}` should be within the range of lines of the file: [1, {n}]"
                ));
            }
            let end = if e == -1 {
                n
            } else if e < s {
                return Err(format!(
                    "Error: Invalid `view_range` parameter: {range_shown}. Its second element `{e}` should be -1 or at least its first element `{s}`"
                ));
            } else {
                (e as u64).min(n as u64) as usize
            };
            (s as usize, end)
        }
    };
    let header = format!("Here's the content of {} with line numbers:", t.shown);
    if n == 0 {
        return Ok(header);
    }
    let wanted = &lines[start - 1..end];
    // Whole lines up to the character cap; a first line longer than the cap is cut.
    let mut chars = 0usize;
    let mut shown: Vec<&str> = Vec::new();
    let mut cut_line = None;
    for line in wanted {
        let c = line.chars().count() + 1;
        if chars + c > VIEW_CHAR_CAP {
            if shown.is_empty() {
                let keep: usize = line
                    .char_indices()
                    .nth(VIEW_CHAR_CAP)
                    .map_or(line.len(), |(i, _)| i);
                shown.push(&line[..keep]);
                cut_line = Some(start);
            }
            break;
        }
        chars += c;
        shown.push(line);
    }
    let mut out = format!("{header}\n{}", numbered(&shown, start));
    let last = start + shown.len() - 1;
    if let Some(l) = cut_line {
        out.push_str(&format!(
            "\n[line {l} is longer than {VIEW_CHAR_CAP} characters and was cut; the file has {n} lines]"
        ));
    } else if last < end {
        out.push_str(&format!(
            "\n[truncated at {VIEW_CHAR_CAP} characters: showed lines {start}-{last} of {n}; view the rest with \"view_range\": [{}, {}]]",
            last + 1,
            if end == n { -1 } else { end as i64 }
        ));
    }
    Ok(out)
}

/// Sizes as the docs show them: bytes below 1K (`512B`), then one decimal (`4.0K`, `1.2M`).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["K", "M", "G", "T"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1}{}", UNITS[unit])
}

fn hidden(name: &str) -> bool {
    name.starts_with('.') || name == "node_modules"
}

fn list_dir(mem: &Memory, t: &Target<'_>) -> Reply {
    // (path, is_dir, size) for every visible item up to LIST_DEPTH levels down.
    let mut items: Vec<(MemPath, bool, u64)> = Vec::new();
    let mut stack = vec![(t.path.clone(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        for e in mem.store().list(&dir).map_err(engine)? {
            if e.path.file_name().is_none_or(hidden) {
                continue;
            }
            let is_dir = e.kind == EntryKind::Dir;
            if is_dir && depth + 1 < LIST_DEPTH {
                stack.push((e.path.clone(), depth + 1));
            }
            let size = if is_dir {
                tree_size(mem, &e.path)?
            } else {
                e.size
            };
            items.push((e.path, is_dir, size));
        }
    }
    items.sort_by(|a, b| a.0.cmp(&b.0));
    let total = tree_size(mem, &t.path)?;
    let shown = match t.shown.trim_end_matches('/') {
        "" => MEMORIES_PREFIX,
        s => s,
    };
    let mut out = format!(
        "Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items and node_modules:\n{}\t{}",
        human_size(total),
        display(&t.path)
    );
    for (p, is_dir, size) in items {
        out.push_str(&format!(
            "\n{}\t{}{}",
            human_size(size),
            display(&p),
            if is_dir { "/" } else { "" }
        ));
    }
    Ok(out)
}

/// The bytes of every visible file under `dir`.
fn tree_size(mem: &Memory, dir: &MemPath) -> Result<u64, String> {
    let files = mem.store().walk(dir).map_err(engine)?;
    Ok(files
        .iter()
        .filter(|e| {
            e.path
                .as_str()
                .strip_prefix(dir.as_str())
                .unwrap_or("")
                .split('/')
                .all(|c| c.is_empty() || !hidden(c))
        })
        .map(|e| e.size)
        .sum())
}

/// Writes a file through the engine, so the memory tool gets what every other front end gets:
/// core's cap and gate (an agent's change becomes a proposal), the index hook, and a git commit.
/// `current` is the text the change was computed from; if the file moved on meanwhile, the write
/// is refused as a conflict instead of losing the other change.
fn write_checked(
    mem: &Memory,
    p: &MemPath,
    current: Option<&str>,
    new: &str,
) -> Result<(), String> {
    let base = current.map(|c| memdir::Version::of(c.as_bytes()).to_string());
    mem.with_base(base.as_deref())
        .write(p.as_str(), new)
        .map_err(engine)
        .and_then(made)
}

/// A gated change to core saved as a proposal is an error for the model: it was not made.
fn made(o: memdir::Outcome) -> Result<(), String> {
    o.done().map_err(|message| format!("Error: {message}"))
}

fn create(mem: &Memory, a: &Args<'_>) -> Reply {
    let t = target(a.str("path")?)?;
    let text = a.str("file_text")?;
    if t.path.is_root() {
        return Err(format!("Error: File {} already exists", t.shown));
    }
    if kind_of(mem, &t.path)?.is_some() {
        return Err(format!("Error: File {} already exists", t.shown));
    }
    // "Create only" is checked by the store with the write: a file made meanwhile is kept.
    match mem
        .with_precondition(Precondition::Absent)
        .write(t.path.as_str(), text)
    {
        Err(Error::Store(StoreError::Conflict(_))) => {
            Err(format!("Error: File {} already exists", t.shown))
        }
        other => other.map_err(engine).and_then(made),
    }?;
    Ok(format!("File created successfully at: {}", t.shown))
}

/// The 1-based line on which byte offset `at` of `text` falls.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn str_replace(mem: &Memory, a: &Args<'_>) -> Reply {
    let t = target(a.str("path")?)?;
    let old = a.str("old_str")?;
    let new = a.opt_str("new_str")?.unwrap_or("");
    let text = read_text(mem, &t)?.ok_or_else(|| {
        format!(
            "Error: The path {} does not exist. Please provide a valid path.",
            t.shown
        )
    })?;
    if old.is_empty() {
        return Err(format!(
            "No replacement was performed, old_str `` did not appear verbatim in {}.",
            t.shown
        ));
    }
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    match starts.as_slice() {
        [] => Err(format!(
            "No replacement was performed, old_str `{old}` did not appear verbatim in {}.",
            t.shown
        )),
        [at] => {
            let at = *at;
            let updated = format!("{}{new}{}", &text[..at], &text[at + old.len()..]);
            write_checked(mem, &t.path, Some(&text), &updated)?;
            let first = line_of(&updated, at);
            let last = first + new.matches('\n').count();
            let lines = split_lines(&updated);
            let from = first.saturating_sub(2).max(1);
            let to = (last + 2).min(lines.len());
            let snippet = if lines.is_empty() || from > to {
                String::new()
            } else {
                numbered(&lines[from - 1..to], from)
            };
            Ok(format!(
                "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}"
            ))
        }
        many => {
            let lines: Vec<String> = many
                .iter()
                .map(|&i| line_of(&text, i).to_string())
                .collect();
            Err(format!(
                "No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {}. Please ensure it is unique",
                lines.join(", ")
            ))
        }
    }
}

fn insert(mem: &Memory, a: &Args<'_>) -> Reply {
    let t = target(a.str("path")?)?;
    let at = a.int("insert_line")?;
    let new = a.str("insert_text")?;
    let text =
        read_text(mem, &t)?.ok_or_else(|| format!("Error: The path {} does not exist", t.shown))?;
    let lines = split_lines(&text);
    let n = lines.len();
    if at < 0 || at as u64 > n as u64 {
        return Err(format!(
            "Error: Invalid `insert_line` parameter: {at}. It should be within the range of lines of the file: [0, {n}]"
        ));
    }
    let at = at as usize;
    let mut out = String::with_capacity(text.len() + new.len() + 2);
    for line in &lines[..at] {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(new);
    if !new.ends_with('\n') {
        out.push('\n');
    }
    for line in &lines[at..] {
        out.push_str(line);
        out.push('\n');
    }
    // Keep a file that did not end with a newline that way.
    if !text.is_empty() && !text.ends_with('\n') && at < n {
        out.pop();
    }
    write_checked(mem, &t.path, Some(&text), &out)?;
    Ok(format!("The file {} has been edited.", t.shown))
}

fn delete(mem: &Memory, a: &Args<'_>) -> Reply {
    let t = target(a.str("path")?)?;
    if t.path.is_root() {
        return Err("Error: Cannot delete the /memories directory itself".into());
    }
    if kind_of(mem, &t.path)?.is_none() {
        return Err(format!("Error: The path {} does not exist", t.shown));
    }
    match mem.rm(t.path.as_str()) {
        Ok(()) => Ok(format!("Successfully deleted {}", t.shown)),
        Err(e) if e.kind() == memdir::ErrorKind::NotFound => {
            Err(format!("Error: The path {} does not exist", t.shown))
        }
        Err(e) => Err(engine(e)),
    }
}

fn rename(mem: &Memory, a: &Args<'_>) -> Reply {
    let from = target(a.str("old_path")?)?;
    let to = target(a.str("new_path")?)?;
    if from.path.is_root() {
        return Err("Error: Cannot rename the /memories directory itself".into());
    }
    if kind_of(mem, &from.path)?.is_none() {
        return Err(format!("Error: The path {} does not exist", from.shown));
    }
    if to.path.is_root() || kind_of(mem, &to.path)?.is_some() {
        return Err(format!(
            "Error: The destination {} already exists",
            to.shown
        ));
    }
    if to.path.starts_with(&from.path) {
        return Err(format!(
            "Error: Cannot rename {} into itself ({})",
            from.shown, to.shown
        ));
    }
    match mem.mv(from.path.as_str(), to.path.as_str()) {
        Ok(()) => Ok(format!(
            "Successfully renamed {} to {}",
            from.shown, to.shown
        )),
        Err(e) if e.kind() == memdir::ErrorKind::Conflict => Err(format!(
            "Error: The destination {} already exists",
            to.shown
        )),
        Err(e) if e.kind() == memdir::ErrorKind::NotFound => {
            Err(format!("Error: The path {} does not exist", from.shown))
        }
        Err(e) => Err(engine(e)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_docs_examples() {
        assert_eq!(human_size(0), "0B");
        assert_eq!(human_size(1023), "1023B");
        assert_eq!(human_size(4096), "4.0K");
        assert_eq!(human_size(1536), "1.5K");
        assert_eq!(human_size(5 * 1024 * 1024 + 200 * 1024), "5.2M");
    }

    #[test]
    fn lines_ignore_one_final_newline() {
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("a\nb\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\nb"), vec!["a", "b"]);
        assert_eq!(split_lines("a\n\n"), vec!["a", ""]);
        assert_eq!(numbered(&["x", "y"], 9), "     9\tx\n    10\ty");
    }
}
