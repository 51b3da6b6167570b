"""`Service`: memdir's tools over a `memdir serve` service's REST API.

``POST {url}/v1/tools/{name}`` with the tool's arguments as the JSON body answers
``{"text": ..., "is_error": ...}``, the same text as ``memdir tool``; ``GET
{url}/v1/files/{path}`` answers a file's bytes. The bearer token picks the tenant: a token
reaches its own memory and nothing else.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional, Tuple

from ._tools import MemdirError, Tools


class Service(Tools):
    """memdir's tools on one tenant's memory in a ``memdir serve`` service.

    Args:
        url: the service's base URL, e.g. ``http://127.0.0.1:8707`` (a trailing ``/`` or
            ``/mcp`` is ignored).
        token: the tenant's bearer token (``memdir tenant add`` printed it).
        timeout: seconds to wait for one answer.

    Every method returns the tool's text and raises :class:`MemdirError` with the tool's own
    text when memdir refuses; an HTTP failure (a bad token, a rate limit, the service down)
    raises :class:`MemdirError` with the service's words and ``status`` set::

        svc = memdir.Service("http://127.0.0.1:8707", token)
        svc.log("deployed v2")
    """

    def __init__(self, url: str, token: Optional[str] = None, *, timeout: float = 60.0) -> None:
        base = url.rstrip("/")
        if base.endswith("/mcp"):
            base = base[: -len("/mcp")]
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = base
        self._token = token
        self._timeout = timeout

    def __repr__(self) -> str:  # never the token
        return f"Service({self.url!r})"

    def _open(self, req: urllib.request.Request) -> Tuple[int, bytes]:
        if self._token:
            req.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            body = e.read()
            text = _error_text(body) or f"HTTP {e.code} {e.reason}"
            if e.code == 429 and e.headers.get("Retry-After"):
                text += f" (retry after {e.headers['Retry-After']} s)"
            raise MemdirError(text, status=e.code) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise MemdirError(f"cannot reach the memdir service at {self.url}: {reason}") from None

    def call_raw(self, tool: str, arguments: Optional[Dict[str, Any]] = None) -> Tuple[str, bool]:
        data = json.dumps(arguments or {}).encode("utf-8")
        req = urllib.request.Request(
            f"{self.url}/v1/tools/{urllib.parse.quote(tool, safe='')}",
            data=data,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            _, body = self._open(req)
        except MemdirError as e:
            e.tool = tool
            raise
        try:
            answer = json.loads(body)
            return str(answer["text"]), bool(answer["is_error"])
        except (ValueError, KeyError, TypeError):
            raise MemdirError(f"the service answered {tool} with something that is not a tool result",
                              tool=tool) from None

    def file(self, path: str) -> bytes:
        """The bytes of the file at ``path`` in the tenant's memory."""
        req = urllib.request.Request(f"{self.url}/v1/files/{urllib.parse.quote(path.lstrip('/'))}")
        return self._open(req)[1]


def _error_text(body: bytes) -> str:
    """The service's words for a failed request: a JSON error's text, or the plain body."""
    try:
        answer = json.loads(body)
        text = answer.get("text") if isinstance(answer, dict) else None
        if isinstance(text, str):
            return text
    except ValueError:
        pass
    return body.decode("utf-8", "replace").strip()
