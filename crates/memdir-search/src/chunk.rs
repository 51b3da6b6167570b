//! How files are cut into the pieces the vector index embeds.
//!
//! - Dated files (`log/`, `archive/`): one chunk per non-blank line, since a log line is one
//!   event. The embedded text drops the list marker, the clock time and a short bracketed id
//!   (`- 13:56 [D1:3] Caroline: text` embeds as `Caroline: text`): they carry no meaning a
//!   sentence encoder can use, and the date is kept apart for filters.
//! - Every other text file (notes, `core.md`, `state.md`): one chunk per heading section. A
//!   section longer than [`MAX_CHUNK_BYTES`] is cut into windows of whole lines that overlap by
//!   [`OVERLAP_LINES`] line, and every window is embedded with its heading trail (`# Flat >
//!   ## Rent`) in front, so a window deep in a section still knows what it is about.
//!
//! A hit on a chunk points at its first line with words on it (not a frontmatter fence), so the
//! agent can open the file there.

use memdir_core::tokenize::split_line;

/// The most bytes of text one section chunk holds (about 250 word pieces, the encoder's limit).
pub(crate) const MAX_CHUNK_BYTES: usize = 1000;

/// Lines shared by consecutive windows of a long section.
pub(crate) const OVERLAP_LINES: usize = 1;

/// Names the chunking rules; the index records it and pauses vector search when it changes.
pub(crate) const CHUNKING: &str = "v1;log=line;other=heading;max=1000;overlap=1";

/// One piece of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The line a hit points at, from 1: the chunk's first line that is neither blank nor a
    /// `---` fence (unless it has no other).
    pub line: u64,
    /// The text shown for a hit: that line.
    pub shown: String,
    /// The text given to the embedder.
    pub embed: String,
}

/// Cuts a file's text into chunks; `dated` selects the per-line rule of logs.
pub(crate) fn chunks(text: &str, dated: bool) -> Vec<Chunk> {
    if dated {
        line_chunks(text)
    } else {
        section_chunks(text)
    }
}

fn line_chunks(text: &str) -> Vec<Chunk> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let fields = split_line(l);
            let embed = if fields.speaker.is_empty() {
                fields.body.to_string()
            } else {
                format!("{}: {}", fields.speaker, fields.body)
            };
            Chunk {
                line: i as u64 + 1,
                shown: l.to_string(),
                embed,
            }
        })
        .collect()
}

/// The heading level of a Markdown ATX heading line (`## x` is 2), if it is one.
fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    let rest = &line[hashes..];
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with(' '))).then_some(hashes)
}

fn section_chunks(text: &str) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    // Sections: (heading trail, first line index, end line index exclusive).
    let mut trail: Vec<(usize, String)> = Vec::new();
    let mut sections: Vec<(String, usize, usize)> = Vec::new();
    let mut start = 0;
    let mut in_fence = false;
    let mut current = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let Some(level) = heading_level(line).filter(|_| !in_fence) else {
            continue;
        };
        if i > start {
            sections.push((current.clone(), start, i));
        }
        trail.retain(|(l, _)| *l < level);
        trail.push((level, line.trim().to_string()));
        current = trail
            .iter()
            .map(|(_, h)| h.as_str())
            .collect::<Vec<_>>()
            .join(" > ");
        start = i;
    }
    if lines.len() > start {
        sections.push((current, start, lines.len()));
    }
    let mut out = Vec::new();
    for (trail, from, to) in sections {
        let mut i = from;
        while i < to {
            // Grow a window of whole lines up to the size limit (always at least one line).
            let mut end = i;
            let mut size = 0;
            while end < to && (end == i || size + lines[end].len() < MAX_CHUNK_BYTES) {
                size += lines[end].len() + 1;
                end += 1;
            }
            let body: Vec<&str> = lines[i..end]
                .iter()
                .copied()
                .filter(|l| !l.trim().is_empty())
                .collect();
            let is_only_heading = body.len() == 1 && heading_level(body[0]).is_some();
            // A heading whose section goes on in the next window is not a chunk on its own.
            let heading_then_more = is_only_heading && end < to;
            if !body.is_empty() && !heading_then_more {
                // The line a hit points at: the first with words on it, so a hit on a note's
                // frontmatter shows `description: ...`, not its opening `---`.
                let window = &lines[i..end];
                let first = window
                    .iter()
                    .position(|l| !l.trim().is_empty() && l.trim() != "---")
                    .or_else(|| window.iter().position(|l| !l.trim().is_empty()))
                    .unwrap_or(0)
                    + i;
                let text = body.join("\n");
                let embed = if trail.is_empty() || heading_level(lines[i]).is_some() {
                    text
                } else {
                    format!("{trail}\n{text}")
                };
                out.push(Chunk {
                    line: first as u64 + 1,
                    shown: lines[first].to_string(),
                    embed,
                });
            }
            if end >= to {
                break;
            }
            i = (end - OVERLAP_LINES).max(i + 1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, dated: bool, want: &[(u64, &str)]) {
        let got: Vec<(u64, String)> = chunks(text, dated)
            .into_iter()
            .map(|c| (c.line, c.embed))
            .collect();
        let want: Vec<(u64, String)> = want.iter().map(|(l, e)| (*l, e.to_string())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn logs_are_cut_by_line_without_time_and_id() {
        check(
            "- 13:56 [D1:3] Caroline: I moved into a flat\n\n- 14:00 bought a lamp\n",
            true,
            &[(1, "Caroline: I moved into a flat"), (3, "bought a lamp")],
        );
    }

    #[test]
    fn notes_are_cut_by_heading() {
        check(
            "---\nname: home\n---\n# Home\nintro\n## Flat\nrent is 900\n\n## Car\nblue\n",
            false,
            &[
                (2, "---\nname: home\n---"),
                (4, "# Home\nintro"),
                (6, "## Flat\nrent is 900"),
                (9, "## Car\nblue"),
            ],
        );
    }

    #[test]
    fn a_hit_on_frontmatter_points_at_its_first_field() {
        let got = chunks("---\ndescription: rent and car\n---\n# Home\n", false);
        assert_eq!(
            (got[0].line, got[0].shown.as_str()),
            (2, "description: rent and car")
        );
        let got = chunks("---\n---\n", false);
        assert_eq!((got[0].line, got[0].shown.as_str()), (1, "---"));
    }

    #[test]
    fn headings_inside_code_fences_do_not_cut() {
        check(
            "# A\n```\n# not a heading\n```\n",
            false,
            &[(1, "# A\n```\n# not a heading\n```")],
        );
    }

    #[test]
    fn long_sections_become_overlapping_windows_with_their_trail() {
        let line = "x".repeat(400);
        let text = format!("# Big\n{line}\n{line}\n{line}\n");
        let got = chunks(&text, false);
        assert_eq!(got.iter().map(|c| c.line).collect::<Vec<_>>(), vec![1, 3]);
        assert!(got[1].embed.starts_with("# Big\n"), "{:?}", got[1].embed);
        assert!(got.iter().all(|c| c.embed.len() <= MAX_CHUNK_BYTES + 10));
    }

    #[test]
    fn one_huge_line_is_still_one_chunk() {
        let text = "y".repeat(5000);
        assert_eq!(chunks(&text, false).len(), 1);
        assert!(chunks("", false).is_empty());
        assert!(chunks("\n\n", true).is_empty());
    }
}
