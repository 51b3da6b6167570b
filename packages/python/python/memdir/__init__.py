"""memdir: long-term memory for AI agents, as plain files.

This package ships the ``memdir`` binary (on ``PATH`` after ``pip install memdir``) and two
clients with one set of methods, one per memdir tool:

- :class:`Memory` reaches a memory folder (or a PostgreSQL tenant) through one long-lived
  ``memdir mcp`` child process, started on the first call and reused by every call after it.
- :class:`Service` reaches a tenant of a ``memdir serve`` service over its REST API.

Both return the tool's text and raise :class:`MemdirError` carrying the tool's own text when
memdir refuses::

    import memdir

    with memdir.Memory(root="./agent-memory") as mem:
        mem.log("chose PostgreSQL over SQLite: need concurrent writers")
        print(mem.search("PostgreSQL"))

:mod:`memdir.anthropic` plugs memdir into the Anthropic SDK's tool runner (it imports
``anthropic``; nothing else here does).
"""

from ._bin import find_memdir_bin
from ._memory import PROTOCOL_VERSION, Memory
from ._service import Service
from ._tools import GateDecision, MemdirError, SearchMode, Tools

__all__ = [
    "GateDecision",
    "MemdirError",
    "Memory",
    "PROTOCOL_VERSION",
    "SearchMode",
    "Service",
    "Tools",
    "find_memdir_bin",
]
