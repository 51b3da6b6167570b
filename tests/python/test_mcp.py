"""memdir's MCP server driven by the official MCP Python SDK, over stdio (`memdir mcp`) and
streamable HTTP (`memdir serve`): list tools, call every tool including the error paths, read
resources, get the prompt, and check that the CLI and both transports give the same answers."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from conftest import TOKEN, clean_env, memdir_bin

TOOLS = [
    "memory_context",
    "memory_search",
    "memory_read",
    "memory_links",
    "memory_recent",
    "memory_write",
    "memory_edit",
    "memory_log",
    "memory_scratch",
    "memory_offload",
    "gate_request",
    "gate_status",
    "memory",
]


@contextlib.asynccontextmanager
async def stdio_client(root: Path, mode: str = "auto") -> AsyncIterator[Client]:
    params = StdioServerParameters(command=memdir_bin(), args=["mcp"], env=clean_env(root))
    async with Client(params, mode=mode) as c:
        yield c


@contextlib.asynccontextmanager
async def http_client(url: str, token: str | None = TOKEN) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            yield c


def run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


def text(result) -> str:
    assert len(result.content) == 1, result
    return result.content[0].text


async def ok(c: Client, name: str, args: dict) -> str:
    r = await c.call_tool(name, args)
    assert not r.is_error, f"{name} {args}: {text(r)}"
    return text(r)


async def err(c: Client, name: str, args: dict) -> str:
    r = await c.call_tool(name, args)
    assert r.is_error, f"{name} {args} should fail: {text(r)}"
    return text(r)


async def exercise(c: Client, root: Path) -> None:
    """Every tool, its success and its error paths, against a fresh folder."""
    listed = await c.list_tools()
    names = [t.name for t in listed.tools]
    assert names == TOOLS
    by_name = {t.name: t for t in listed.tools}
    for name in ["memory_context", "memory_search", "memory_read"]:
        assert by_name[name].annotations.read_only_hint is True, name
    for t in listed.tools:
        assert t.annotations.open_world_hint is False, t.name
        assert t.description and len(t.description) > 40, t.name
    assert by_name["memory"].annotations.destructive_hint is True
    assert by_name["memory_write"].annotations.destructive_hint is True
    assert by_name["memory_log"].annotations.destructive_hint is False
    assert set(by_name["memory_search"].input_schema["properties"]) == {
        "pattern", "mode", "regex", "since", "until", "path", "limit", "files"}
    assert set(by_name["memory_read"].input_schema["properties"]) == {"path", "start_line", "end_line"}
    assert set(by_name["memory_write"].input_schema["properties"]) == {"path", "content", "reason"}
    assert set(by_name["memory_edit"].input_schema["properties"]) == {
        "path", "old", "new", "expected_count", "append", "prepend", "section", "reason"}
    assert set(by_name["memory_links"].input_schema["properties"]) == {"name", "depth"}
    assert set(by_name["memory_recent"].input_schema["properties"]) == {"since", "path", "writer", "limit"}
    assert set(by_name["memory_log"].input_schema["properties"]) == {"text"}
    assert set(by_name["memory_scratch"].input_schema["properties"]) == {"name", "body", "ttl"}
    assert set(by_name["memory_offload"].input_schema["properties"]) == {"content", "label"}
    assert {"command", "path", "view_range", "file_text", "old_str", "new_str", "insert_line",
            "insert_text", "old_path", "new_path"} <= set(by_name["memory"].input_schema["properties"])

    # memory_log, memory_context
    assert await ok(c, "memory_log", {"text": "chose PostgreSQL over SQLite: concurrent writers"}) == \
        "logged to log/2026-11-30.md: - 09:15 chose PostgreSQL over SQLite: concurrent writers"
    assert "log text is empty" in await err(c, "memory_log", {"text": "   "})
    ctx = await ok(c, "memory_context", {})
    assert "## Core memory (core.md)" in ctx and "chose PostgreSQL" in ctx

    # memory_write, memory_read (ranges, cap, paging), memory_edit
    assert await ok(c, "memory_write", {"path": "notes/db.md", "content": "# DB\nengine: postgres\nport: 5432\n",
                                         "reason": "record the choice"}) == "wrote notes/db.md (3 lines, 33 bytes)"
    assert (root / "notes/db.md").read_text() == "# DB\nengine: postgres\nport: 5432\n"
    assert await ok(c, "memory_read", {"path": "notes/db.md"}) == "# DB\nengine: postgres\nport: 5432\n"
    assert await ok(c, "memory_read", {"path": "/memories/notes/db.md", "start_line": 2, "end_line": 2}) == \
        "engine: postgres\n[notes/db.md: showed lines 2-2 of 3; more with start_line=3]"
    assert "leaves the memory folder" in await err(c, "memory_read", {"path": "../../etc/passwd"})
    assert "leaves the memory folder" in await err(c, "memory_read", {"path": "/memories/%2e%2e/x"})
    assert "does not exist" in await err(c, "memory_read", {"path": "notes/none.md"})
    assert "missing field `path`" in await err(c, "memory_read", {})
    assert "past the end" in await err(c, "memory_read", {"path": "notes/db.md", "start_line": 99})
    big = "".join(f"row {i:05d} {'x' * 40}\n" for i in range(1000))
    await ok(c, "memory_write", {"path": "notes/big.md", "content": big})
    first = await ok(c, "memory_read", {"path": "notes/big.md"})
    assert len(first) < 16500 and "cut at 16000 characters; continue with start_line=" in first
    nxt = int(first.rsplit("start_line=", 1)[1].rstrip("]"))
    second = await ok(c, "memory_read", {"path": "notes/big.md", "start_line": nxt})
    assert second.startswith(f"row {nxt - 1:05d}")
    assert await ok(c, "memory_edit", {"path": "notes/db.md", "old": "port: 5432", "new": "port: 6432"}) == \
        "edited notes/db.md: replaced the one occurrence"
    assert "not found" in await err(c, "memory_edit", {"path": "notes/db.md", "old": "port: 5432", "new": "x"})
    await ok(c, "memory_write", {"path": "notes/twice.md", "content": "a\na\n"})
    assert "occurs 2 times" in await err(c, "memory_edit", {"path": "notes/twice.md", "old": "a", "new": "b"})

    # Cap exceeded: core.md refuses a write over its line cap, and says what to do.
    over = await err(c, "memory_write", {"path": "core.md", "content": "fact\n" * 101})
    assert "over its cap" in over and "remove a line first" in over
    assert (root / "core.md").read_text() == ""

    # memory_scratch
    s = await ok(c, "memory_scratch", {"name": "deploy-plan", "body": "canary first", "ttl": "2h"})
    assert s.startswith("wrote scratch/") and s.endswith("-deploy-plan.md; it shows in memory_context until it expires (ttl 2h)")
    assert "canary first" in await ok(c, "memory_context", {})
    await err(c, "memory_scratch", {"name": "Bad Name!", "body": "x"})
    await err(c, "memory_scratch", {"name": "ok", "body": "x", "ttl": "soon"})

    # memory_offload, then read it back by its reference.
    output = "".join(f"test t{i} ... ok\n" for i in range(500)) + "test result: ok. 500 passed\n"
    ref = await ok(c, "memory_offload", {"content": output, "label": "cargo test"})
    assert ref.startswith(f"offloaded {len(output)} bytes (501 lines) to offload/2026-11-30/091500-cargo-test.md\n")
    assert "first line: test t0 ... ok" in ref and "last line: test result: ok. 500 passed" in ref
    assert (root / "offload/2026-11-30/091500-cargo-test.md").read_text() == output
    back = await ok(c, "memory_read", {"path": "offload/2026-11-30/091500-cargo-test.md", "start_line": 501})
    assert back.startswith("test result: ok. 500 passed")
    ref2 = await ok(c, "memory_offload", {"content": "again", "label": "cargo test"})
    assert "091500-cargo-test-2.md" in ref2
    assert "empty" in await err(c, "memory_offload", {"content": "  \n"})

    # memory_search: grep, ranked, filters, and its errors.
    hits = await ok(c, "memory_search", {"pattern": "postgres"})
    assert "log/2026-11-30.md:1:- 09:15 chose PostgreSQL over SQLite: concurrent writers" in hits
    assert "notes/db.md:2:engine: postgres" in hits
    only_notes = await ok(c, "memory_search", {"pattern": "postgres", "path": "notes/**"})
    assert "log/" not in only_notes and "notes/db.md:2" in only_notes
    ranked = await ok(c, "memory_search", {"pattern": "which database did we choose", "mode": "ranked", "limit": 3})
    # At most 3 result lines, then a "... N more" line when there were more.
    assert len([l for l in ranked.splitlines() if not l.startswith("... ")]) <= 3
    assert (await ok(c, "memory_search", {"pattern": "zebra-unicorn"})).startswith("no matches")
    old = await ok(c, "memory_search", {"pattern": "postgres", "until": "2026-11-01"})
    assert "log/" not in old
    assert "YYYY-MM-DD" in await err(c, "memory_search", {"pattern": "x", "since": "last week"})
    await err(c, "memory_search", {"pattern": "(unclosed", "regex": True})
    await err(c, "memory_search", {"pattern": "x", "mode": "fuzzy"})
    many = await ok(c, "memory_search", {"pattern": "row"})
    assert "more matches left out" in many.splitlines()[-1]

    # The Anthropic memory tool over MCP.
    view = await ok(c, "memory", {"command": "view", "path": "/memories"})
    assert view.startswith("Here're the files and directories up to 2 levels deep in /memories, "
                           "excluding hidden items and node_modules:\n")
    assert await ok(c, "memory", {"command": "create", "path": "/memories/todo.txt", "file_text": "a\n"}) == \
        "File created successfully at: /memories/todo.txt"
    assert await err(c, "memory", {"command": "delete", "path": "/memories"}) == \
        "Error: Cannot delete the /memories directory itself"
    assert await err(c, "memory", {"command": "view", "path": "/memories/../../etc/passwd"}) == \
        "Error: Path /memories/../../etc/passwd would escape /memories directory"

    # An unknown tool is a protocol error, not a tool result.
    with pytest.raises(MCPError, match="unknown tool"):
        await c.call_tool("memory_fly", {})

    # Resources and the prompt.
    res = await c.list_resources()
    uris = [str(r.uri) for r in res.resources]
    assert "memdir://core" in uris and "memdir://log/today" in uris
    today = await c.read_resource("memdir://log/today")
    assert "chose PostgreSQL" in today.contents[0].text
    (root / "MEMORY.md").write_text("- notes/db.md: the database choice\n")
    res = await c.list_resources()
    assert "memdir://index" in [str(r.uri) for r in res.resources]
    index = await c.read_resource("memdir://index")
    assert index.contents[0].text == "- notes/db.md: the database choice\n"
    with pytest.raises(MCPError):
        await c.read_resource("memdir://nothing")
    prompts = await c.list_prompts()
    assert [p.name for p in prompts.prompts] == ["save-before-compaction"]
    prompt = await c.get_prompt("save-before-compaction")
    assert "memory_log" in prompt.messages[0].content.text

    # Trust: writes through MCP are labelled `agent` and no argument raises that; an agent's
    # change to core was not made, so it is an error result naming the proposal.
    await ok(c, "memory_log", {"text": "labelled by the transport"})
    trailer = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%(trailers:key=Memdir-Source,valueonly)"],
                             capture_output=True, text=True, check=True).stdout
    assert trailer.strip() == "agent"
    assert "unknown field `source`" in await err(c, "memory_log", {"text": "x", "source": "user"})
    gated = await err(c, "memory_write", {"path": "core.md", "content": "likes tea\n"})
    assert "saved as proposal" in gated
    assert (root / "core.md").read_text() == ""


def test_stdio_lists_and_calls_every_tool(root: Path):
    async def go():
        async with stdio_client(root) as c:
            await exercise(c, root)
    run(go)


def test_stdio_ranked_search_with_phrases_filters_and_files(root: Path):
    """Ranked search as people type it: a quoted phrase, -word, frontmatter filters, and results
    grouped one per file with the number of files that matched."""
    notes = {
        "notes/retry.md": "---\nname: payment-retry-policy\ndescription: retries\ntype: project\n"
                          "tags: [billing, payments]\n---\nthe retry queue never retries a captured payment\n"
                          "a payment retry waits an hour\n",
        "notes/refund.md": "---\nname: refund-flow\ndescription: refunds\ntype: project\ntags: [billing]\n"
                           "---\na refund payment is retried by hand\n",
        "notes/me.md": "---\nname: me\ndescription: about me\ntype: user\n---\nI retry my payment passwords\n",
    }

    async def go() -> None:
        async with stdio_client(root) as c:
            for path, content in notes.items():
                await ok(c, "memory_write", {"path": path, "content": content})
            ranked = {"mode": "ranked"}
            # A phrase: its words in that order (stemmed), not just somewhere on the line.
            hits = await ok(c, "memory_search", {**ranked, "pattern": '"captured payment"'})
            assert hits.splitlines() == ["notes/retry.md:7:the retry queue never retries a captured payment"]
            hits = await ok(c, "memory_search", {**ranked, "pattern": '"payment retries"'})
            # Stemmed: "payment-retry-policy" (line 2) and "payment retry" (line 8), not line 7.
            assert sorted(":".join(l.split(":")[0:2]) for l in hits.splitlines()) == \
                ["notes/refund.md:7", "notes/retry.md:2", "notes/retry.md:8"]
            # -word leaves out lines with the word.
            hits = await ok(c, "memory_search", {**ranked, "pattern": "payment -refund -passwords"})
            assert "refund.md" not in hits and "me.md" not in hits and "notes/retry.md" in hits
            # Frontmatter filters, alone or with words.
            hits = await ok(c, "memory_search", {**ranked, "pattern": "payment type:project tag:billing"})
            assert {l.split(":")[0] for l in hits.splitlines()} == {"notes/retry.md", "notes/refund.md"}
            hits = await ok(c, "memory_search", {**ranked, "pattern": "name:refund-flow"})
            assert hits.splitlines() == ["notes/refund.md:7:a refund payment is retried by hand"]
            none = await ok(c, "memory_search", {**ranked, "pattern": "payment type:reference"})
            assert none.startswith("no matches")
            # One line per file, best first, with the total.
            grouped = await ok(c, "memory_search", {**ranked, "pattern": "payment retry", "files": True})
            lines = grouped.splitlines()
            # memory_write keeps MEMORY.md, which lists the retry note, so it matches too.
            files = [l.split(":")[0] for l in lines[:-1]]
            assert len(files) == 4 and set(files) == set(notes) | {"MEMORY.md"}, grouped
            assert lines[-1] == "4 files matched"
            grouped = await ok(c, "memory_search", {**ranked, "pattern": "payment retry", "files": True, "limit": 1})
            lines = grouped.splitlines()
            assert len(lines) == 2 and lines[0].startswith("notes/retry.md:"), grouped
            assert lines[-1].startswith("4 files matched, 1 shown"), grouped
            assert "mode=ranked" in await err(c, "memory_search", {"pattern": "payment", "files": True})
            assert "besides -exclusions" in await err(c, "memory_search", {**ranked, "pattern": "-payment"})

    run(go)


def test_stdio_with_the_legacy_initialize_handshake(root: Path):
    async def go():
        async with stdio_client(root, mode="legacy") as c:
            assert c.protocol_version == "2025-11-25"
            assert c.server_info.name == "memdir"
            assert "memdir is your long-term memory" in (c.instructions or "")
            assert await ok(c, "memory_log", {"text": "legacy handshake works"})
    run(go)


def test_http_lists_and_calls_every_tool(served, root: Path):
    async def go():
        async with http_client(served.url) as c:
            await exercise(c, root)
    run(go)
    assert TOKEN not in served.stderr()


def test_http_refuses_a_missing_or_wrong_token(served):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    hdrs = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    r = httpx2.post(served.url, json=init, headers=hdrs)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    r = httpx2.post(served.url, json=init, headers=hdrs | {"Authorization": "Bearer wrong"})
    assert r.status_code == 401
    r = httpx2.post(served.url, json=init, headers=hdrs | {"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200
    assert TOKEN not in served.stderr()


def test_http_checks_the_origin(served):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    hdrs = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "Authorization": f"Bearer {TOKEN}"}
    r = httpx2.post(served.url, json=init, headers=hdrs | {"Origin": "http://evil.example"})
    assert r.status_code == 403
    r = httpx2.post(served.url, json=init, headers=hdrs | {"Origin": "http://localhost:5173"})
    assert r.status_code == 200


def test_http_sigterm_with_a_client_connected_exits_promptly(served):
    """Issue 13, item 11: while a client's SSE stream was open, SIGTERM left the server running."""
    took = {}

    async def go():
        # The client may complain as the server goes away under it; what matters is the exit.
        with contextlib.suppress(Exception):
            async with http_client(served.url) as c:
                await c.list_tools()
                await anyio.sleep(0.5)  # the client's standalone GET stream is open by now
                served.proc.terminate()
                start = time.monotonic()
                await anyio.to_thread.run_sync(lambda: served.proc.wait(timeout=20))
                took["seconds"] = time.monotonic() - start
    run(go)
    assert "seconds" in took, "memdir serve was still running 20 s after SIGTERM"
    assert took["seconds"] < 12, took


def test_serve_refuses_a_public_address_without_a_token(root: Path):
    p = subprocess.run([memdir_bin(), "serve", "--listen", "0.0.0.0:0"], env=clean_env(root),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "without a token" in p.stderr


READ_ONLY_CALLS = [
    ("memory_context", {}),
    ("memory_read", {"path": "notes/db.md"}),
    ("memory_read", {"path": "notes/db.md", "start_line": 2}),
    ("memory_read", {"path": "../escape"}),
    ("memory_search", {"pattern": "postgres"}),
    ("memory_search", {"pattern": "database engine", "mode": "ranked"}),
    ("memory", {"command": "view", "path": "/memories"}),
    ("memory", {"command": "view", "path": "/memories/notes/db.md", "view_range": [2, -1]}),
    ("memory", {"command": "view", "path": "/memories/missing.md"}),
]


def cli_call(root: Path, name: str, args: dict) -> tuple[str, bool]:
    p = subprocess.run([memdir_bin(), "tool", name], input=json.dumps(args), env=clean_env(root),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode in (0, 1), p.stderr
    return p.stdout.removesuffix("\n"), p.returncode == 1


def test_cli_stdio_and_http_give_the_same_answers(served, root: Path):
    (root / "notes").mkdir()
    (root / "notes/db.md").write_text("# DB\nengine: postgres\n")
    (root / "log/2026-11-30.md").write_text("- 09:00 chose postgres as the database engine\n")
    expected = [cli_call(root, n, a) for n, a in READ_ONLY_CALLS]
    assert any(is_err for _, is_err in expected) and not all(is_err for _, is_err in expected)

    async def answers(c: Client) -> list[tuple[str, bool]]:
        out = []
        for n, a in READ_ONLY_CALLS:
            r = await c.call_tool(n, a)
            out.append((text(r), bool(r.is_error)))
        return out

    async def go():
        async with stdio_client(root) as c:
            assert await answers(c) == expected
        async with http_client(served.url) as c:
            assert await answers(c) == expected
    run(go)
