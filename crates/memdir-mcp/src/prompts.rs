//! The texts memdir hands to agents: the usage guide (also the server instructions) and the
//! save-before-compaction turn.

/// The usage guide for agents: the layers, when to log vs note vs core, how to find things.
/// One text, kept in `guide.md`; the README carries the same text (a test holds them equal),
/// the server sends it as its instructions and serves it as the resource [`GUIDE_URI`].
pub const GUIDE: &str = include_str!("guide.md");

/// The resource URI of [`GUIDE`].
pub const GUIDE_URI: &str = "memdir://guide";

/// What an MCP client shows the model about this server (the `instructions` of `initialize`):
/// the guide itself, so a model that never reads resources still gets it.
pub const INSTRUCTIONS: &str = GUIDE;

/// The instructions for a memory in `layout`: [`INSTRUCTIONS`], and for a host's layout a last
/// paragraph that says where its files differ from the guide's (core, the index, the logs).
pub fn instructions_for(layout: &memdir_core::host::FolderLayout) -> String {
    use memdir_core::host::IndexKind;
    if layout.name == memdir_core::host::LayoutName::Memdir {
        return INSTRUCTIONS.to_string();
    }
    let index = match layout.index {
        IndexKind::Generated => format!("{} is generated from the notes", layout.index_file),
        IndexKind::HandWritten => format!(
            "{} is the index you keep by hand: add a line `- [Title](file.md) — hook` for each note you write",
            layout.index_file
        ),
        IndexKind::None => "there is no index of notes".to_string(),
    };
    let notes = match layout.notes_dir {
        "" => "notes are topic files at the top level".to_string(),
        dir => format!("new notes go under {dir}/"),
    };
    let core = match layout.core {
        memdir_core::host::CORE_FILE => String::new(),
        other => format!("where the guide says core.md, use {other} (core); "),
    };
    format!(
        "{INSTRUCTIONS}\n\nThis memory is a folder in the {} layout: {core}{index}; daily logs are {}/YYYY-MM-DD.md; {notes}.\n",
        layout.name, layout.log_dir
    )
}

/// The silent turn an agent runs just before its context is compacted or cleared.
pub const FLUSH: &str = "\
Your context is about to be compacted: anything not written to memory now will be lost.
Write down what matters, with the memory tools, before anything else:
- decisions made, facts learned, and open threads: memory_log, one short line each;
- durable facts every future session needs (who the user is, how the project works): memory_edit on core.md, replacing stale lines, since core.md is capped;
- work in progress for the next hours: memory_scratch with a ttl;
- large outputs you may need again verbatim: memory_offload, then log the path it returns.
Save only what is not already in memory, and be specific (names, numbers, paths, dates).
This turn is silent: do not address the user. When done, or if nothing needs saving, reply with only: saved";

/// The name of the MCP prompt that carries [`FLUSH`].
pub const FLUSH_PROMPT_NAME: &str = "save-before-compaction";

#[cfg(test)]
mod tests {
    use super::*;

    /// The README shows the guide word for word between its markers, so the two never drift.
    #[test]
    fn the_readme_carries_the_guide() {
        let readme = include_str!("../../../README.md");
        let start = "<!-- agent guide: crates/memdir-mcp/src/guide.md -->\n";
        let end = "<!-- end of agent guide -->";
        let from = readme.find(start).map(|i| i + start.len());
        let to = readme.find(end);
        assert!(
            from.is_some() && to.is_some(),
            "README.md lacks the guide markers"
        );
        let shown = &readme[from.unwrap_or(0)..to.unwrap_or(0)];
        assert_eq!(
            shown, GUIDE,
            "README.md's agent guide differs from guide.md: copy it over"
        );
        assert!(GUIDE.contains("memdir is your long-term memory"));
        for tool in crate::tools::names() {
            if tool.starts_with("memory_") {
                assert!(
                    GUIDE.contains(&format!("`{tool}`")),
                    "the guide does not mention {tool}"
                );
            }
        }
    }

    #[test]
    fn host_layouts_get_a_paragraph_of_their_own() {
        use memdir_core::host::{FolderLayout, LayoutName};
        assert_eq!(instructions_for(&FolderLayout::default()), INSTRUCTIONS);
        let oc = instructions_for(&FolderLayout::of(LayoutName::OpenClaw));
        assert!(oc.starts_with(INSTRUCTIONS));
        assert!(oc.ends_with(
            "This memory is a folder in the openclaw layout: where the guide says core.md, use MEMORY.md (core); there is no index of notes; daily logs are memory/YYYY-MM-DD.md; new notes go under notes/.\n"
        ), "{oc}");
        let cc = instructions_for(&FolderLayout::of(LayoutName::ClaudeCode));
        assert!(
            cc.contains("MEMORY.md is the index you keep by hand"),
            "{cc}"
        );
        assert!(
            cc.contains("notes are topic files at the top level"),
            "{cc}"
        );
    }
}
