"""`memdir.Service` against a real `memdir serve` on PostgreSQL: the same methods as `Memory`,
each tenant's token reaching its own memory, and HTTP failures as `MemdirError` with a status."""

from __future__ import annotations

import json

import pytest

import memdir


def test_service_methods_on_postgresql(service):
    url, tokens = service
    alice = memdir.Service(url, tokens["alice"])
    assert tokens["alice"] not in repr(alice)

    assert "core.md" in alice.context()
    assert alice.write("notes/coffee.md", "---\nname: coffee\ndescription: coffee\n---\nBlack, no sugar.\n") == "wrote notes/coffee.md (5 lines, 58 bytes)"
    assert alice.read("coffee").splitlines()[-1] == "Black, no sugar."
    assert alice.search("sugar").splitlines()[0] == "notes/coffee.md:5:Black, no sugar."
    assert alice.search("black coffee", mode="ranked", limit=1).startswith("notes/coffee.md:")
    assert "notes/coffee.md" in alice.edit("notes/coffee.md", old="no sugar", new="one sugar")
    assert alice.log("deployed v2 9d1c") == "logged to log/2026-11-30.md: - 09:15 deployed v2 9d1c"
    assert alice.scratch("plan", "step 1", ttl="1h").endswith("-plan.md; it shows in memory_context until it expires (ttl 1h)")
    assert "offload/2026-11-30/" in alice.offload("x\n" * 100, label="dump")
    assert "coffee" in alice.links("coffee")
    assert "notes/coffee.md" in alice.recent()
    assert alice.memory("view", path="/memories/notes/coffee.md").startswith(
        "Here's the content of /memories/notes/coffee.md with line numbers:\n")
    assert b"one sugar" in alice.file("notes/coffee.md")

    with pytest.raises(memdir.MemdirError) as caught:
        alice.write("../escape.md", "x")
    assert caught.value.tool == "memory_write" and caught.value.status is None
    assert "escape" in caught.value.text or "outside" in caught.value.text, caught.value.text

    # The other tenant sees none of it.
    bob = memdir.Service(url + "/mcp", tokens["bob"])
    assert bob.search("9d1c").startswith("no matches")
    with pytest.raises(memdir.MemdirError) as caught:
        bob.file("notes/coffee.md")
    assert caught.value.status == 404


def test_service_failures_say_what_happened(service):
    url, tokens = service
    with pytest.raises(memdir.MemdirError) as caught:
        memdir.Service(url, "mdt_wrong").log("x")
    assert caught.value.status == 401 and "bearer token" in caught.value.text
    with pytest.raises(memdir.MemdirError) as caught:
        memdir.Service(url, tokens["alice"]).call("memory_nope", {})
    assert caught.value.status == 404 and "unknown tool" in caught.value.text
    with pytest.raises(memdir.MemdirError) as caught:
        memdir.Service("http://127.0.0.1:9", tokens["alice"], timeout=5).log("x")
    assert caught.value.text.startswith("cannot reach the memdir service at http://127.0.0.1:9")
    with pytest.raises(ValueError):
        memdir.Service("ftp://x", "t")


def test_memory_and_service_answer_alike(service, tmp_path, env):
    """The same calls through a local `memdir mcp` and the service give the same text."""
    url, tokens = service
    svc = memdir.Service(url, tokens["bob"])
    with memdir.Memory(root=tmp_path / "local", env=env) as mem:
        for client in (svc, mem):
            client.write("notes/x.md", "one\ntwo\n")
        for tool, args in [("memory_search", {"pattern": "two"}), ("memory_read", {"path": "notes/x.md"}),
                           ("memory", {"command": "view", "path": "/memories/notes/x.md", "view_range": [2, -1]})]:
            assert svc.call_raw(tool, args) == mem.call_raw(tool, args), (tool, json.dumps(args))
