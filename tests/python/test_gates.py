"""Gates over MCP, with the official Python SDK: gate_request answers allowed, denied or
pending in the documented JSON shape, and no tool over stdio or HTTP can change gates.toml or
the ledger, even when the server was started with MEMDIR_SOURCE=user."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import clean_env, memdir_bin
from test_mcp import err, http_client, ok, run

POLICY = """[payment]
targets = ["acme-*", "landlord"]
max_amount = 100
daily_amount = 150
approval_above = 50
"""


async def gates(c: Client, root: Path) -> None:
    listed = {t.name: t for t in (await c.list_tools()).tools}
    assert set(listed["gate_request"].input_schema["required"]) == {"kind", "target", "reason"}
    assert listed["gate_status"].annotations.read_only_hint is True

    allowed = await ok(c, "gate_request", {"kind": "payment", "target": "landlord", "amount": 40, "reason": "rent"})
    first = json.loads(allowed.splitlines()[0])
    assert first["decision"] == "allowed" and first["token"].startswith("gt_"), allowed
    denied = await err(c, "gate_request", {"kind": "payment", "target": "mallory", "amount": 1, "reason": "x"})
    rule = json.loads(denied.splitlines()[0])["rule"]
    assert rule.startswith("targets:"), denied
    pending = await ok(c, "gate_request", {"kind": "payment", "target": "acme-power", "amount": "60", "reason": "bill"})
    pid = json.loads(pending.splitlines()[0])["id"]
    status = await ok(c, "gate_status", {"id": pid})
    assert json.loads(status.splitlines()[0]) == {"decision": "pending", "id": pid}
    assert "1 request(s) wait" in await ok(c, "memory_context", {})

    policy = (root / "gates.toml").read_text()
    for path in ["gates.toml", "/memories/gates.toml", "./gates.toml", "GATES.toml", "gates/ledger/2026-11-30.jsonl"]:
        await err(c, "memory_write", {"path": path, "content": "[payment]\ntargets = [\"*\"]\n"})
        await err(c, "memory_edit", {"path": path, "old": "landlord", "new": "*"})
        mem = "/memories/" + path.removeprefix("/memories/").removeprefix("./").lstrip("/")
        await err(c, "memory", {"command": "str_replace", "path": mem, "old_str": "landlord", "new_str": "*"})
        await err(c, "memory", {"command": "delete", "path": mem})
        await err(c, "memory", {"command": "rename", "old_path": mem, "new_path": "/memories/moved"})
    assert (root / "gates.toml").read_text() == policy
    assert not (root / "GATES.toml").exists() and not (root / "moved").exists()
    lines = (root / "gates/ledger/2026-11-30.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(l)["source"] == "agent" for l in lines)


def test_gates_over_stdio_even_with_source_user(root: Path):
    (root / "gates.toml").write_text(POLICY)
    params = StdioServerParameters(command=memdir_bin(), args=["mcp"], env=clean_env(root) | {"MEMDIR_SOURCE": "agent"})

    async def go():
        async with Client(params) as c:
            await gates(c, root)
    run(go)

    # Started as the user, the MCP surface still cannot touch the policy.
    params = StdioServerParameters(command=memdir_bin(), args=["mcp"], env=clean_env(root) | {"MEMDIR_SOURCE": "user"})

    async def as_user():
        async with Client(params) as c:
            assert "policy" in await err(c, "memory_write", {"path": "gates.toml", "content": "x"})
    run(as_user)
    assert (root / "gates.toml").read_text() == POLICY


def test_gates_over_http(served, root: Path):
    (root / "gates.toml").write_text(POLICY)

    async def go():
        async with http_client(served.url) as c:
            await gates(c, root)
    run(go)
