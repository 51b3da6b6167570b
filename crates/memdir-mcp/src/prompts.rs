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
}
