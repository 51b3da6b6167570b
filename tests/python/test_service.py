"""The official MCP Python SDK against a multi-tenant `memdir serve`: each tenant's token reaches
its own memory over /mcp, and the same tool layer answers over REST."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import NOW, memdir_bin
from test_mcp import exercise, http_client, ok, run


def env(home: Path, store: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "MEMDIR_STORE": str(store),
        "MEMDIR_NOW": NOW,
        "TZ": "UTC",
    }


@pytest.fixture
def service(tmp_path: Path):
    store = tmp_path / "service"
    e = env(tmp_path, store)
    tokens = {}
    for name in ("alice", "bob"):
        out = subprocess.run([memdir_bin(), "tenant", "add", name], env=e, check=True, capture_output=True, text=True)
        tokens[name] = out.stdout.strip()
    err_path = tmp_path / "serve.stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([memdir_bin(), "serve", "--listen", "127.0.0.1:0"], env=e | {"MEMDIR_LOG": "info"},
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    base = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and base is None:
        m = re.search(r"memory on (http://\S+) ", err_path.read_text())
        if m:
            base = m.group(1)
        else:
            time.sleep(0.05)
    assert base, err_path.read_text()
    yield base, tokens, store, err_path
    proc.terminate()
    proc.wait(timeout=15)


def test_sdk_over_http_reaches_the_tenant_of_its_token(service):
    base, tokens, store, err_path = service

    async def go():
        async with http_client(f"{base}/mcp", tokens["alice"]) as c:
            await exercise(c, store / "tenants" / "alice")
            await ok(c, "memory_log", {"text": "alice-only 9d1c"})
        async with http_client(f"{base}/mcp", tokens["bob"]) as c:
            found = await ok(c, "memory_search", {"pattern": "9d1c"})
            assert found.startswith("no matches"), found
            assert "alice-only" not in found, found

    run(go)
    # REST gives the same tool layer.
    req = urllib.request.Request(f"{base}/v1/tools/memory_search", data=json.dumps({"pattern": "9d1c"}).encode(),
                                 headers={"Authorization": f"Bearer {tokens['alice']}"}, method="POST")
    body = json.load(urllib.request.urlopen(req))
    assert body["is_error"] is False and "9d1c" in body["text"], body
    logs = err_path.read_text()
    assert tokens["alice"] not in logs and tokens["bob"] not in logs
    assert "9d1c" not in logs
