"""The tool methods both clients share, and the error they raise.

memdir's tool layer answers every call with a text and an error flag; a refusal (a path outside
memory, core.md over its cap, an ambiguous edit) is an error result whose text says what to do.
The methods here return the text of an answer and raise :class:`MemdirError` with the text of a
refusal, so a caller never has to look at a flag.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, TypeVar, Union


class MemdirError(Exception):
    """A call memdir refused or could not answer.

    Attributes:
        text: memdir's own words (for a tool's error result, the result's text, verbatim), which
            say what went wrong and what to do.
        tool: the tool that was called, or ``None`` when no tool ran (the process could not be
            started, the connection failed).
        status: the HTTP status of a :class:`memdir.Service` answer, else ``None``.
    """

    def __init__(self, text: str, *, tool: Optional[str] = None, status: Optional[int] = None) -> None:
        super().__init__(text)
        self.text = text
        self.tool = tool
        self.status = status


_T = TypeVar("_T", bound="Tools")

SearchMode = Literal["grep", "ranked", "semantic", "hybrid"]


class GateDecision(TypedDict, total=False):
    """A gate's answer: ``decision`` is ``"allowed"`` (with a single-use ``token``),
    ``"denied"`` (with the ``rule`` that says why) or ``"pending"`` (with the ``id`` to ask
    :meth:`Tools.gate_status` about)."""

    decision: Literal["allowed", "denied", "pending"]
    token: str
    rule: str
    id: str


def _args(**kwargs: Any) -> Dict[str, Any]:
    """The arguments that were given: memdir's tools take no nulls."""
    return {k: v for k, v in kwargs.items() if v is not None}


class Tools:
    """memdir's tools as methods. Subclasses supply :meth:`call_raw`."""

    def call_raw(self, tool: str, arguments: Optional[Dict[str, Any]] = None) -> Tuple[str, bool]:
        """Calls ``tool`` with ``arguments`` and returns ``(text, is_error)`` as memdir answered.

        Raises:
            MemdirError: only when no tool answered (an unknown tool name, a dead process or
                connection); a tool's refusal is returned with ``is_error`` set.
        """
        raise NotImplementedError

    def close(self) -> None:
        """Releases what the client holds; a stateless client holds nothing."""

    def __enter__(self: "_T") -> "_T":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, tool: str, arguments: Optional[Dict[str, Any]] = None) -> str:
        """Calls ``tool`` with ``arguments`` (a dict of the tool's JSON arguments) and returns the
        answer's text.

        Raises:
            MemdirError: when memdir refused (the error result's text) or no tool answered.
        """
        text, is_error = self.call_raw(tool, arguments)
        if is_error:
            raise MemdirError(text, tool=tool)
        return text

    def context(self) -> str:
        """What an agent should know at the start of a session: core.md, the index, state, the
        recent log days, live scratch notes and where the rest is."""
        return self.call("memory_context", {})

    def search(
        self,
        pattern: str,
        *,
        mode: Optional[SearchMode] = None,
        regex: Optional[bool] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        path: Optional[str] = None,
        limit: Optional[int] = None,
        files: Optional[bool] = None,
    ) -> str:
        """Lines of memory matching ``pattern``, one ``path:line:text`` hit per line (or a
        ``no matches`` line).

        Args:
            pattern: the text, regular expression or question.
            mode: ``grep`` (default: lines containing the pattern), ``ranked`` (the best lines for
                a question), ``semantic`` or ``hybrid`` (by meaning; need an embedding model).
            regex: grep mode: treat ``pattern`` as a regular expression.
            since: only dated files (logs) from this day on, ``YYYY-MM-DD``.
            until: only dated files up to this day, ``YYYY-MM-DD``.
            path: only files whose path matches this glob, e.g. ``notes/**``.
            limit: the most result lines.
            files: ranked, semantic and hybrid modes: one line per file.
        """
        return self.call(
            "memory_search",
            _args(pattern=pattern, mode=mode, regex=regex, since=since, until=until, path=path,
                  limit=limit, files=files),
        )

    def read(self, path: str, *, start_line: Optional[int] = None, end_line: Optional[int] = None) -> str:
        """A file's text (cut at 16,000 characters with a note saying how to go on) or a folder's
        listing. ``path`` may also be a note's name (``payment-retry-policy`` or
        ``[[payment-retry-policy]]``); ``start_line``/``end_line`` (1-based, inclusive) read a
        part."""
        return self.call("memory_read", _args(path=path, start_line=start_line, end_line=end_line))

    def links(self, name: str, *, depth: Optional[int] = None) -> str:
        """A note with the notes it links to and that link to it, each with its description, up
        to ``depth`` steps (default 1, at most 3)."""
        return self.call("memory_links", _args(name=name, depth=depth))

    def recent(
        self,
        *,
        since: Optional[str] = None,
        path: Optional[str] = None,
        writer: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> str:
        """What changed, who changed it and why, newest first. ``since`` takes ``today``,
        ``3d``, ``6h``, ``last week`` or ``YYYY-MM-DD``."""
        return self.call("memory_recent", _args(since=since, path=path, writer=writer, limit=limit))

    def write(self, path: str, content: str, *, reason: Optional[str] = None) -> str:
        """Creates or replaces the file at ``path`` with ``content`` (core.md's cap applies)."""
        return self.call("memory_write", _args(path=path, content=content, reason=reason))

    def edit(
        self,
        path: str,
        *,
        append: Optional[str] = None,
        prepend: Optional[str] = None,
        section: Optional[str] = None,
        old: Optional[str] = None,
        new: Optional[str] = None,
        expected_count: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> str:
        """One atomic change to the file at ``path``: give ``append``, ``prepend``,
        ``section`` + ``new`` (replace the body under a heading) or ``old`` + ``new`` (replace a
        text that occurs exactly once, or ``expected_count`` times)."""
        return self.call(
            "memory_edit",
            _args(path=path, append=append, prepend=prepend, section=section, old=old, new=new,
                  expected_count=expected_count, reason=reason),
        )

    def log(self, text: str) -> str:
        """Appends ``- HH:MM text`` to today's log."""
        return self.call("memory_log", {"text": text})

    def scratch(self, name: str, body: str, *, ttl: Optional[str] = None) -> str:
        """Writes a scratch note that shows in :meth:`context` until it expires (``ttl`` such as
        ``30m`` or ``2h``; default 60 minutes)."""
        return self.call("memory_scratch", _args(name=name, body=body, ttl=ttl))

    def offload(self, content: str, *, label: Optional[str] = None) -> str:
        """Parks a large text under ``offload/`` and returns a short reference to keep instead."""
        return self.call("memory_offload", _args(content=content, label=label))

    def gate_request(
        self, kind: str, target: str, reason: str, *, amount: Union[int, float, str, None] = None
    ) -> GateDecision:
        """Asks the gate before an irreversible action. A denial is an answer, not an error: it
        comes back as ``{"decision": "denied", "rule": ...}``.

        Raises:
            MemdirError: when the request itself is wrong (an unknown kind, a bad amount).
        """
        return self._gate("gate_request", _args(kind=kind, target=target, amount=amount, reason=reason))

    def gate_status(self, id: str) -> GateDecision:
        """Where a pending gate request stands; the token once a person approved it."""
        return self._gate("gate_status", {"id": id})

    def _gate(self, tool: str, arguments: Dict[str, Any]) -> GateDecision:
        text, is_error = self.call_raw(tool, arguments)
        first = text.split("\n", 1)[0]
        try:
            answer = json.loads(first)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and answer.get("decision") in ("allowed", "denied", "pending"):
            return answer  # type: ignore[return-value]
        raise MemdirError(text, tool=tool) if is_error else MemdirError(
            f"{tool} answered something that is not a decision: {text}", tool=tool)

    def memory(self, command: str, **arguments: Any) -> str:
        """The Anthropic memory tool (``memory_20250818``): ``command`` is ``view``, ``create``,
        ``str_replace``, ``insert``, ``delete`` or ``rename``, with that command's arguments
        (paths under ``/memories``). Returns the tool's text, the official strings."""
        return self.call("memory", _args(command=command, **arguments))


__all__: List[str] = ["GateDecision", "MemdirError", "SearchMode", "Tools"]
