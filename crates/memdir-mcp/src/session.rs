//! Saving an agent session's transcript into memory: the hooks (`pre-compact`, `session-end`)
//! and `memdir import --from` a transcript folder all come here.
//!
//! The transcript is streamed line by line, never read whole; each complete line is parsed and
//! rendered by [`memdir_core::transcript`]. The file it lands in is named after the session's
//! first timestamp, so every save of one session finds the same file, and the file says how many
//! transcript lines it holds, so a later save renders only the lines after them
//! (hosts only ever append to a transcript). A last line without its newline is still being
//! written by the host and is left for the next save. A line that is not JSON is skipped with a
//! warning; it never stops the save.
//!
//! Tool results too long to inline go, all of one save together, into one offload file (labelled
//! `source: external`, as `memdir offload` labels external output), and the session file points
//! to their line ranges. One save is at most three changes: that offload file, the session file
//! (created only if absent, appended to only at the version that was read, so two saves of one
//! session never interleave and neither holds a lock while it parses), and the caller's log line.
//! A later save appends its turns and a line with the new count ([`render_progress`]): it
//! writes only the new bytes, never the file again.

use memdir::{Error, Memory, Precondition, Version};
use memdir_core::note::mark_external;
use memdir_core::transcript::{
    Block, Header, Parsed, Turn, is_big_result, line_timestamp, offload_reference,
    parse_claude_line, parse_codex_line, parse_header, render_header, render_progress, render_turn,
    saved_lines, session_path, short_id,
};
use std::io::BufRead;

/// Lines read before the first timestamp at most; a transcript with none is named by the clock.
const MAX_UNDATED_LINES: usize = 1_000;

/// Which host wrote the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code (`~/.claude/projects/<project>/<session>.jsonl`).
    ClaudeCode,
    /// Codex CLI (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
}

impl Host {
    /// The name in a session file's frontmatter.
    pub fn as_str(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
        }
    }

    fn parse(self, line: &str) -> Parsed {
        match self {
            Host::ClaudeCode => parse_claude_line(line),
            Host::Codex => parse_codex_line(line),
        }
    }
}

/// What a save did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The session file, e.g. `sessions/2026-11-30/090012-5f2c1a9e.md`.
    pub path: String,
    /// Turns added by this save (0: the file was already up to date, and nothing was written).
    pub new_turns: usize,
    /// True when this save created the file.
    pub created: bool,
    /// The offload file holding this save's long tool results, if there were any.
    pub offload: Option<String>,
    /// Lines skipped because they were not transcript lines, one message each.
    pub warnings: Vec<String>,
}

/// Where a session's file is and what it holds so far.
struct Target {
    path: String,
    day: jiff::civil::Date,
    /// The file's text and version, when it exists.
    existing: Option<(String, Version)>,
    /// Transcript lines the file already holds.
    skip: usize,
}

fn target(mem: &Memory, start: jiff::Timestamp, session: &str) -> Result<Target, Error> {
    let tz = mem.clock().now().time_zone().clone();
    let path = session_path(start, &tz, session);
    let day = start.to_zoned_datetime(tz).date();
    let existing = match mem.read(&path) {
        Ok(bytes) => Some(bytes),
        Err(Error::Store(memdir::StoreError::NotFound(_))) => None,
        Err(e) => return Err(e),
    };
    let Some(bytes) = existing else {
        return Ok(Target {
            path,
            day,
            existing: None,
            skip: 0,
        });
    };
    let version = Version::of(&bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let skip = match parse_header(&text) {
        Some((h, _)) if h.session == memdir_core::text::one_line(session) => saved_lines(&text, &h),
        _ => {
            return Err(Error::Invalid(format!(
                "{path} exists but is not memdir's transcript of session {session}: move it away, then save again"
            )));
        }
    };
    Ok(Target {
        path,
        day,
        existing: Some((text, version)),
        skip,
    })
}

/// The session file of `session`, when a save has made one: found from the transcript's first
/// timestamp, as the save names it. Reads only up to that line.
pub fn saved_path(
    mem: &Memory,
    transcript: impl BufRead,
    session: &str,
) -> Result<Option<String>, Error> {
    for line in transcript.lines().take(MAX_UNDATED_LINES) {
        let line = line.map_err(|e| Error::Invalid(format!("cannot read the transcript: {e}")))?;
        if let Some(start) = line_timestamp(&line) {
            let t = target(mem, start, session)?;
            return Ok(t.existing.is_some().then_some(t.path));
        }
    }
    Ok(None)
}

/// Long tool results of one save, gathered into one offload file's text.
struct Parked {
    path: Option<String>,
    text: String,
    /// Lines of `text` so far.
    lines: usize,
}

impl Parked {
    fn new() -> Parked {
        Parked {
            path: None,
            text: String::new(),
            lines: 0,
        }
    }

    /// Parks a result and returns the line that stands for it.
    fn park(
        &mut self,
        mem: &Memory,
        session: &str,
        host: Host,
        at: Option<jiff::Timestamp>,
        text: &str,
    ) -> Result<String, Error> {
        let path = match &self.path {
            Some(p) => p.clone(),
            None => {
                let p = free_offload_path(mem, session)?;
                // The file starts as an external offload does: a frontmatter, then a title.
                self.text = mark_external(&format!(
                    "# Tool output of agent session {} ({})\n\n",
                    short_id(session),
                    host.as_str()
                ));
                self.lines = self.text.lines().count();
                self.path = Some(p.clone());
                p
            }
        };
        let when = at
            .map(|t| mem.clock().local(t))
            .unwrap_or_else(|| "undated".into());
        let body = memdir_core::text::scrub(text);
        let body = body.trim_end();
        self.text.push_str(&format!("## tool result, {when}\n\n"));
        let from = self.lines + 3;
        let n = body.lines().count().max(1);
        self.text.push_str(body);
        self.text.push_str("\n\n");
        self.lines += 2 + n + 1;
        Ok(offload_reference(&path, from, from + n - 1, body.len()))
    }
}

/// `offload/<today>/<HHMMSS>-session-<short-id>.md`, or with `-2`, `-3`, ... when taken.
fn free_offload_path(mem: &Memory, session: &str) -> Result<String, Error> {
    let now = mem.clock().now();
    let stem = format!(
        "{}/{}/{}-session-{}",
        crate::offload::OFFLOAD_DIR,
        now.strftime("%Y-%m-%d"),
        now.strftime("%H%M%S"),
        short_id(session)
    );
    for n in 1.. {
        let p = if n == 1 {
            format!("{stem}.md")
        } else {
            format!("{stem}-{n}.md")
        };
        if mem.version(&p)?.is_none() {
            return Ok(p);
        }
    }
    Err(Error::Invalid("no free offload name".into()))
}

/// Saves the transcript read from `transcript` (a host's JSONL, streamed) into `sessions/`,
/// adding only the turns after those a previous save of `session` took. `cwd` is the session's
/// working folder, shown in the file's frontmatter.
pub fn save(
    mem: &Memory,
    mut transcript: impl BufRead,
    host: Host,
    session: &str,
    cwd: &str,
) -> Result<Saved, Error> {
    let mut pending: Vec<String> = Vec::new();
    let mut target: Option<Target> = None;
    let mut parked = Parked::new();
    let mut rendered = String::new();
    let mut warnings = Vec::new();
    let (mut lines, mut turns) = (0usize, 0usize);
    let mut buf = Vec::new();
    let mut render = |t: &Target, no: usize, line: &str, rendered: &mut String| {
        if no <= t.skip || line.trim().is_empty() {
            return Ok::<usize, Error>(0);
        }
        match host.parse(line) {
            Parsed::Turn(turn) => {
                let turn = park_big(mem, &mut parked, session, host, turn)?;
                let tz = mem.clock().now().time_zone().clone();
                rendered.push_str(&render_turn(&turn, &tz, t.day));
                Ok(1)
            }
            Parsed::Skip => Ok(0),
            Parsed::Malformed(why) => {
                warnings.push(format!("transcript line {no} skipped: {why}"));
                Ok(0)
            }
        }
    };
    loop {
        buf.clear();
        let n = transcript
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::Invalid(format!("cannot read the transcript: {e}")))?;
        // A last line without its newline is still being written: the next save takes it.
        if n == 0 || buf.last() != Some(&b'\n') {
            break;
        }
        lines += 1;
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        match &target {
            Some(t) => turns += render(t, lines, line, &mut rendered)?,
            None => {
                let start = line_timestamp(line).or_else(|| {
                    (pending.len() + 1 >= MAX_UNDATED_LINES).then(|| mem.clock().now().timestamp())
                });
                pending.push(line.to_string());
                if let Some(start) = start {
                    let t = self::target(mem, start, session)?;
                    for (i, l) in pending.drain(..).enumerate() {
                        turns += render(&t, i + 1, &l, &mut rendered)?;
                    }
                    target = Some(t);
                }
            }
        }
    }
    let t = match target {
        Some(t) => t,
        None => {
            let t = self::target(mem, mem.clock().now().timestamp(), session)?;
            for (i, l) in pending.drain(..).enumerate() {
                turns += render(&t, i + 1, &l, &mut rendered)?;
            }
            t
        }
    };
    let mut saved = Saved {
        path: t.path.clone(),
        new_turns: turns,
        created: t.existing.is_none(),
        offload: None,
        warnings,
    };
    if turns == 0 {
        saved.created = false;
        return Ok(saved);
    }
    if let Some(p) = &parked.path {
        never_gated(
            mem.with_precondition(Precondition::Absent)
                .write(p, &parked.text)?,
        )?;
        saved.offload = Some(p.clone());
    }
    let header = Header {
        host: host.as_str().into(),
        session: session.into(),
        cwd: cwd.into(),
        lines,
    };
    match &t.existing {
        None => {
            let text = render_header(&header) + &rendered;
            never_gated(
                mem.with_precondition(Precondition::Absent)
                    .write(&t.path, &text)?,
            )?;
        }
        Some((old, version)) => {
            // Only the new turns and the line saying how far the file now goes are written:
            // every byte already in the file stays as it was.
            let mut text = String::new();
            if !old.ends_with("\n\n") {
                text.push('\n');
            }
            text.push_str(&rendered);
            text.push_str(&render_progress(lines));
            mem.with_precondition(Precondition::Matches(version.clone()))
                .append(&t.path, &text)?;
        }
    }
    Ok(saved)
}

/// The turn with each long tool result parked in the offload file and a pointer in its place.
fn park_big(
    mem: &Memory,
    parked: &mut Parked,
    session: &str,
    host: Host,
    mut turn: Turn,
) -> Result<Turn, Error> {
    for b in &mut turn.blocks {
        if is_big_result(b)
            && let Block::ToolResult { text, error } = b
        {
            let reference = parked.park(mem, session, host, turn.at, text)?;
            *b = Block::Offloaded {
                reference,
                error: *error,
            };
        }
    }
    Ok(turn)
}

/// A session's files live under `sessions/` (and offloads under the offload folder), never in
/// core, so their writes are not gated; were one saved as a proposal, it was not made.
fn never_gated(o: memdir::Outcome) -> Result<(), Error> {
    o.done().map_err(Error::Conflict)
}
