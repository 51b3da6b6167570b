"""memdir for the Anthropic Python SDK's tool runner.

:class:`MemdirMemoryTool` is the SDK's memory tool (``memory_20250818``) with memdir behind it:
every command goes to memdir's ``memory`` tool, so the model gets memdir's answers (the official
strings), and memory gets memdir's path confinement, caps, provenance, history and stores.
:func:`beta_tools` gives memdir's search and context tools as SDK function tools for the same
runner::

    import anthropic, memdir.anthropic

    memory = memdir.anthropic.MemdirMemoryTool(root="./agent-memory")
    runner = anthropic.Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=1024,
        tools=[memory, *memdir.anthropic.beta_tools(memory.client)],
        messages=[{"role": "user", "content": "What did we decide about retries?"}],
    )
    for message in runner:
        print(message.content)

This module imports ``anthropic``; the rest of the ``memdir`` package does not.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Union

from anthropic import beta_tool
from anthropic.lib.tools import BetaFunctionTool
from anthropic.tools import BetaAbstractMemoryTool, ToolError

from ._memory import Memory
from ._tools import MemdirError, Tools

if TYPE_CHECKING:
    from anthropic.types.beta import (
        BetaCacheControlEphemeralParam,
        BetaMemoryTool20250818Command,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )

__all__ = ["MemdirMemoryTool", "beta_tools", "memory_context_tool", "memory_search_tool"]


def _answer(client: Tools, tool: str, arguments: Dict[str, Any]) -> str:
    """memdir's answer as a tool result: the text, or a ``ToolError`` carrying the text of a
    refusal (the runner sends it with ``is_error: true`` and nothing added)."""
    try:
        text, is_error = client.call_raw(tool, arguments)
    except MemdirError as e:
        raise ToolError(e.text) from None
    if is_error:
        raise ToolError(text)
    return text


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """The Anthropic memory tool (``memory_20250818``) over a memdir memory.

    Args:
        root: the memory folder (``/memories`` is this folder).
        store: or where the memory lives: a folder or ``postgres://HOST/DB?tenant=NAME``.
        client: or a client to use as it is: a :class:`memdir.Memory` or :class:`memdir.Service`
            (then :meth:`close` leaves it open).
        cache_control: passed to the tool's declaration.
        **memory_options: further :class:`memdir.Memory` options (``binary``, ``writer``,
            ``source``, ``env``, ``timeout``).

    Each command's answer is memdir's text; a refusal (a path outside ``/memories``, core.md
    over its cap, a missing file, an ambiguous ``str_replace``) raises the SDK's ``ToolError``
    with memdir's text, which the tool runner sends back with ``is_error: true``.
    """

    def __init__(
        self,
        root: Union[str, "os.PathLike[str]", None] = None,
        *,
        store: Optional[str] = None,
        client: Optional[Tools] = None,
        cache_control: Optional["BetaCacheControlEphemeralParam"] = None,
        **memory_options: Any,
    ) -> None:
        super().__init__(cache_control=cache_control)
        if client is not None and (root is not None or store is not None or memory_options):
            raise ValueError("give client, or root/store and Memory options, not both")
        self._owned = client is None
        self.client: Tools = client if client is not None else Memory(root, store=store, **memory_options)

    def execute(self, command: "BetaMemoryTool20250818Command") -> str:
        """Hands every command, an unknown one too, to memdir: memdir checks the arguments and
        says what is wrong in the words the model acts on."""
        return self._run(command)

    def _run(self, command: Any) -> str:
        arguments = command.to_dict() if hasattr(command, "to_dict") else dict(command)
        return _answer(self.client, "memory", arguments)

    def view(self, command: "BetaMemoryTool20250818ViewCommand") -> str:
        """A folder two levels deep, or a file with line numbers (``view_range`` for a part)."""
        return self._run(command)

    def create(self, command: "BetaMemoryTool20250818CreateCommand") -> str:
        """A new file (never over an existing one)."""
        return self._run(command)

    def str_replace(self, command: "BetaMemoryTool20250818StrReplaceCommand") -> str:
        """Replaces a text that occurs exactly once."""
        return self._run(command)

    def insert(self, command: "BetaMemoryTool20250818InsertCommand") -> str:
        """Inserts text after a line (0: at the top)."""
        return self._run(command)

    def delete(self, command: "BetaMemoryTool20250818DeleteCommand") -> str:
        """Deletes a file or folder (never ``/memories`` itself)."""
        return self._run(command)

    def rename(self, command: "BetaMemoryTool20250818RenameCommand") -> str:
        """Moves a file or folder (never over an existing one)."""
        return self._run(command)

    def close(self) -> None:
        """Ends the memdir process this tool started (a client given to it stays open)."""
        if self._owned:
            self.client.close()

    def __enter__(self) -> "MemdirMemoryTool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# memdir's own declarations of the two tools (`memdir tool --list`; a test holds them equal), so
# the model sees the same description and schema as over MCP.
_SEARCH_DESCRIPTION = (
    "Finds lines in memory files. mode=grep (default) returns lines containing the pattern "
    "(case-insensitive literal; regex=true for a regular expression) in path order; mode=ranked "
    "returns the best lines for a question in natural language; there \"a quoted phrase\" must "
    "appear in order, -word leaves out lines with the word, and type:project, tag:billing or "
    "name:payment-retry-policy keep only notes with that frontmatter (a filter alone lists those "
    "notes). files=true returns one line per file (its best) and how many files matched, to see "
    "which notes matter before reading. Narrow with path (a glob such as log/** or notes/*.md), "
    "since/until (YYYY-MM-DD, for dated files such as logs) and limit. Results are path:line:text; "
    "open a hit with memory_read using start_line."
)
_SEARCH_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "The text, regular expression or question to look for."},
        "mode": {
            "type": "string",
            "enum": ["grep", "ranked", "semantic", "hybrid"],
            "description": "grep (default): exact lines containing the pattern. ranked: best lines for a "
            "natural-language question. semantic / hybrid: by meaning (hybrid adds ranked words); they need "
            "an embedding model set up, else the call says so.",
        },
        "regex": {"type": "boolean", "description": "grep mode: treat pattern as a regular expression (default false)."},
        "since": {"type": "string", "description": "Only dated files (logs) from this day on, YYYY-MM-DD."},
        "until": {"type": "string", "description": "Only dated files (logs) up to this day, YYYY-MM-DD."},
        "path": {"type": "string", "description": "Only files whose path matches this glob, e.g. notes/** or log/2026-11-*.md."},
        "limit": {"type": "integer", "minimum": 1, "description": "The most result lines to return (files, with files=true)."},
        "files": {
            "type": "boolean",
            "description": "ranked, semantic and hybrid modes: one result per file, its best line, and the number "
            "of files that matched (default false).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}
_CONTEXT_DESCRIPTION = (
    "Returns what you should know at the start of a session: core.md, yesterday's and today's log, "
    "live scratch notes, and where the rest is. Call it first in a new session or after your context "
    "was compacted."
)
_CONTEXT_SCHEMA: Dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _client_of(source: Union[Tools, MemdirMemoryTool]) -> Tools:
    return source.client if isinstance(source, MemdirMemoryTool) else source


def memory_search_tool(client: Union[Tools, MemdirMemoryTool]) -> BetaFunctionTool[Any]:
    """memdir's ``memory_search`` as an SDK function tool on ``client``'s memory."""
    target = _client_of(client)

    def memory_search(**arguments: Any) -> str:
        return _answer(target, "memory_search", arguments)

    return beta_tool(memory_search, name="memory_search", description=_SEARCH_DESCRIPTION,
                     input_schema=_SEARCH_SCHEMA)


def memory_context_tool(client: Union[Tools, MemdirMemoryTool]) -> BetaFunctionTool[Any]:
    """memdir's ``memory_context`` as an SDK function tool on ``client``'s memory."""
    target = _client_of(client)

    def memory_context(**arguments: Any) -> str:
        return _answer(target, "memory_context", arguments)

    return beta_tool(memory_context, name="memory_context", description=_CONTEXT_DESCRIPTION,
                     input_schema=_CONTEXT_SCHEMA)


def beta_tools(client: Union[Tools, MemdirMemoryTool]) -> List[BetaFunctionTool[Any]]:
    """memdir's ``memory_context`` and ``memory_search`` as SDK function tools, for the tool
    runner beside :class:`MemdirMemoryTool` (give it the memory tool, or a client)."""
    return [memory_context_tool(client), memory_search_tool(client)]


def _declarations() -> Mapping[str, Mapping[str, Any]]:
    """The declarations above by tool name (for the test that holds them equal to memdir's)."""
    return {
        "memory_search": {"description": _SEARCH_DESCRIPTION, "input_schema": _SEARCH_SCHEMA},
        "memory_context": {"description": _CONTEXT_DESCRIPTION, "input_schema": _CONTEXT_SCHEMA},
    }
