"""A small local stand-in for the Anthropic Messages API: it answers `POST /v1/messages` with
scripted assistant turns, one per request, and keeps every request body so a test can check the
tool results the SDK's runner sent back. Loopback only; it stops when the test ends."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List


def tool_use_turn(n: int, name: str, input: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "id": f"msg_{n:03d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": f"toolu_{n:03d}", "name": name, "input": input}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def final_turn(n: int, text: str) -> Dict[str, Any]:
    return {
        "id": f"msg_{n:03d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


class StandIn:
    """Replays ``turns`` (tool calls as ``(name, input)``), then a final text turn."""

    def __init__(self, calls: List[tuple]) -> None:
        self.responses = [tool_use_turn(i, name, inp) for i, (name, inp) in enumerate(calls)]
        self.responses.append(final_turn(len(calls), "done"))
        self.requests: List[Dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if self.path.split("?")[0] != "/v1/messages" or not stand_in.responses:
                    self.send_error(404)
                    return
                stand_in.requests.append(body)
                data = json.dumps(stand_in.responses.pop(0)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def tool_results(self) -> List[Dict[str, Any]]:
        """The tool_result blocks the runner sent, in order: request n+1 answers turn n."""
        results = []
        for req in self.requests[1:]:
            last = req["messages"][-1]
            assert last["role"] == "user", last
            results.extend(b for b in last["content"] if b.get("type") == "tool_result")
        return results
