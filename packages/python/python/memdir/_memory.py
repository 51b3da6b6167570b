"""`Memory`: memdir's tools over one long-lived `memdir mcp` child process.

The child speaks MCP over stdin/stdout: one JSON-RPC message per line. It is started on the
first call (with the `initialize` handshake), reused by every call after it, started again when
it has died, and ended with :meth:`Memory.close`, the ``with`` block, or when the object is
collected. Starting `memdir` costs milliseconds (opening the memory, warming search); a
long-lived child pays that once, and keeps the memory's files warm between searches.

One thread reads the child's stdout into a queue, so a call can wait with a timeout; another
keeps the last lines of its stderr, to say why it died. Calls from several threads are
serialised by a lock.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import queue
import subprocess
import threading
import time
import weakref
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Tuple, Union

from ._bin import find_memdir_bin
from ._tools import MemdirError, Tools

#: The MCP revision this client speaks (the handshake-based one memdir serves).
PROTOCOL_VERSION = "2025-11-25"

_EOF = object()


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("memdir")
    except Exception:  # not installed (run from a source tree)
        return "0"


class _Child:
    """One running `memdir mcp`: its pipes, the reader threads, and how to end it."""

    def __init__(self, argv: List[str], env: Dict[str, str]) -> None:
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        except OSError as e:
            raise MemdirError(f"cannot start {argv[0]}: {e.strerror or e}") from e
        self.messages: "queue.Queue[Any]" = queue.Queue()
        self.stderr: Deque[str] = collections.deque(maxlen=20)
        self.write_lock = threading.Lock()
        self._out = threading.Thread(target=self._read_stdout, name="memdir-mcp-stdout", daemon=True)
        self._err = threading.Thread(target=self._read_stderr, name="memdir-mcp-stderr", daemon=True)
        self._out.start()
        self._err.start()

    def _read_stdout(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            for line in stdout:
                line = line.strip()
                if not line:
                    continue
                try:
                    self.messages.put(json.loads(line))
                except ValueError:
                    # The protocol forbids anything else on stdout; keep it for the error message.
                    self.stderr.append("stdout: " + line.decode("utf-8", "replace"))
        except (OSError, ValueError):
            pass  # the pipe was closed under the reader: the child is being ended
        finally:
            self.messages.put(_EOF)

    def _read_stderr(self) -> None:
        stderr = self.proc.stderr
        assert stderr is not None
        try:
            for line in stderr:
                self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
        except (OSError, ValueError):
            pass  # closed under the reader, as above

    def send(self, message: Dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        stdin = self.proc.stdin
        assert stdin is not None
        with self.write_lock:
            stdin.write(data)
            stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def why(self) -> str:
        """Why the child is gone, from its exit code and last stderr lines."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self._err.join(timeout=2)
        tail = "; ".join(line for line in self.stderr if line.strip())
        what = "memdir mcp exited" + (f" with code {code}" if code is not None else "")
        return f"{what}: {tail}" if tail else what

    def close(self, grace: float = 5.0) -> None:
        """Closes stdin (the server's signal to finish), then waits, then terminates, then kills."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # The readers end at the pipes' end of file. A pipe is closed only once its reader has
        # ended: closing it under a read frees the descriptor number for the next child's pipe,
        # and the old reader would then steal that child's answers.
        for reader, stream in ((self._out, self.proc.stdout), (self._err, self.proc.stderr)):
            reader.join(timeout=grace)
            if stream is not None and not reader.is_alive():
                try:
                    stream.close()
                except OSError:
                    pass


class Memory(Tools):
    """memdir's tools on one memory, through one long-lived ``memdir mcp`` child process.

    Args:
        root: the memory folder (created with its layout if it does not exist).
        store: where the memory lives instead: a folder, or ``postgres://HOST/DB?tenant=NAME``.
        binary: the ``memdir`` binary; default: the one this wheel installed, else ``memdir``
            on ``PATH`` (``$MEMDIR_BIN`` overrides).
        writer: who is writing, recorded in history (``--writer``).
        source: the provenance label of changes: ``agent`` (the default of ``memdir mcp``),
            ``user`` or ``external``.
        env: extra environment variables for the child (over this process's environment).
        timeout: seconds to wait for one answer before the child is ended and
            :class:`MemdirError` raised; ``None`` waits as long as it takes.

    Every method returns the tool's text and raises :class:`MemdirError` with the tool's own
    text when memdir refuses. Use it as a context manager, or call :meth:`close`::

        with memdir.Memory(root="./agent-memory") as mem:
            mem.log("deployed v2 to staging")
            print(mem.search("deployed"))
    """

    def __init__(
        self,
        root: Union[str, "os.PathLike[str]", None] = None,
        *,
        store: Optional[str] = None,
        binary: Optional[str] = None,
        writer: Optional[str] = None,
        source: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> None:
        if root is not None and store is not None:
            raise ValueError("give root or store, not both")
        self._binary = binary
        self._flags: List[str] = []
        if root is not None:
            self._flags += ["--root", os.fspath(root)]
        if store is not None:
            self._flags += ["--store", store]
        if writer is not None:
            self._flags += ["--writer", writer]
        if source is not None:
            self._flags += ["--source", source]
        self._env = dict(env or {})
        self._timeout = timeout
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._child: Optional[_Child] = None
        # Ends the child when this object is collected without close(); detached on close.
        self._detach_finalizer: Optional[Callable[[], object]] = None
        self._closed = False
        #: How many ``memdir mcp`` processes this object has started.
        self.starts = 0
        #: What the server said about itself in the handshake (``serverInfo``, ``instructions``).
        self.server_info: Dict[str, Any] = {}

    # -- the process ---------------------------------------------------------------------------

    @property
    def pid(self) -> Optional[int]:
        """The running child's process id, or ``None`` before the first call and after close."""
        child = self._child
        return child.proc.pid if child is not None and child.alive() else None

    def _start(self) -> _Child:
        argv = [find_memdir_bin(self._binary), *self._flags, "mcp"]
        env = {**os.environ, **self._env}
        child = _Child(argv, env)
        self.starts += 1
        self._child = child
        self._detach_finalizer = weakref.finalize(self, child.close).detach
        try:
            result = self._roundtrip(child, "initialize", {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "memdir-python", "version": _version()},
            })
            self.server_info = result
            child.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        except (_Died, OSError) as e:
            text = e.text if isinstance(e, _Died) else child.why()
            self._discard()
            raise MemdirError(text) from None
        except BaseException:
            self._discard()
            raise
        return child

    def _discard(self) -> None:
        """Ends the current child, if any (a later call starts a new one)."""
        child, self._child = self._child, None
        if self._detach_finalizer is not None:
            self._detach_finalizer()
            self._detach_finalizer = None
        if child is not None:
            child.close(grace=2.0)

    def _ensure(self) -> _Child:
        if self._closed:
            raise MemdirError("this Memory is closed")
        child = self._child
        if child is not None and child.alive():
            return child
        if child is not None:
            self._discard()
        return self._start()

    def close(self) -> None:
        """Ends the child process (it finishes what it was doing first). Idempotent; a closed
        object refuses further calls."""
        with self._lock:
            self._closed = True
            self._discard()

    # -- JSON-RPC ------------------------------------------------------------------------------

    def _roundtrip(self, child: _Child, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Sends one request and waits for its answer, answering what the server asks meanwhile."""
        rid = next(self._ids)
        try:
            child.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        except OSError:
            raise _Died(child.why(), unsent=True) from None
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                msg = child.messages.get(timeout=wait)
            except queue.Empty:
                self._discard()
                raise MemdirError(f"memdir mcp did not answer {method} within {self._timeout} s; it was ended")
            if msg is _EOF:
                raise _Died(child.why(), unsent=False)
            if not isinstance(msg, dict):
                continue
            if "method" in msg:
                if "id" in msg:  # a request from the server: ping is the only one we know
                    reply: Dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
                    if msg["method"] == "ping":
                        reply["result"] = {}
                    else:
                        reply["error"] = {"code": -32601, "message": f"method not found: {msg['method']}"}
                    try:
                        child.send(reply)
                    except OSError:
                        pass
                continue  # notifications (logging, list changes) need no answer
            if msg.get("id") != rid:
                continue  # the late answer to a request given up on
            if "error" in msg:
                err = msg["error"] if isinstance(msg["error"], dict) else {}
                raise MemdirError(str(err.get("message", msg["error"])))
            result = msg.get("result")
            return result if isinstance(result, dict) else {}

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Sends one MCP request (``tools/list``, ``resources/read``, ...) and returns its result.

        A child that died is started again, once, for a request that it had not received.

        Raises:
            MemdirError: a JSON-RPC error's message, or why the child died.
        """
        with self._lock:
            child = self._ensure()
            try:
                return self._roundtrip(child, method, params or {})
            except _Died as died:
                if not died.unsent:
                    self._discard()
                    raise MemdirError(f"{died.text} (while answering {method})") from None
            # The request never reached the child: a new one may take it, once.
            self._discard()
            child = self._ensure()
            try:
                return self._roundtrip(child, method, params or {})
            except _Died as died:
                self._discard()
                raise MemdirError(f"{died.text} (while answering {method})") from None

    def call_raw(self, tool: str, arguments: Optional[Dict[str, Any]] = None) -> Tuple[str, bool]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments or {}})
        texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict) and c.get("type") == "text"]
        return "\n".join(texts), bool(result.get("isError"))

    def list_tools(self) -> List[Dict[str, Any]]:
        """Every tool with its name, description, input schema and annotations (``tools/list``)."""
        tools = self.request("tools/list").get("tools", [])
        return tools if isinstance(tools, list) else []


class _Died(Exception):
    """The child went away during a request; ``unsent`` when it never received it."""

    def __init__(self, text: str, *, unsent: bool) -> None:
        super().__init__(text)
        self.text = text
        self.unsent = unsent
