//! The texts memdir hands to agents: server instructions and the save-before-compaction turn.

/// What an MCP client shows the model about this server (the `instructions` of `initialize`).
pub const INSTRUCTIONS: &str = "\
memdir is your long-term memory, kept as plain Markdown files in layers:
- core.md: always loaded and capped in size; only durable facts every session needs. Edit it with memory_edit (replace, don't pile up).
- log/YYYY-MM-DD.md: today's append-only log. Record decisions, facts learned and open threads with memory_log, one line each.
- scratch/: short-lived notes that expire (memory_scratch with a ttl such as 2h).
- everything else (notes/, offload/, archive/): read with memory_read, find with memory_search, write with memory_write.
Start a session with memory_context. Park large tool outputs with memory_offload and read them back by line range. \
Before your context is compacted, save what matters (prompt save-before-compaction). \
Paths are relative to the memory folder; /memories/... also works, and the `memory` tool speaks the Anthropic memory tool protocol.";

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
