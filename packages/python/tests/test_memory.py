"""`memdir.Memory` against a temp memory, through the installed wheel's binary: every method,
the tool's own text in `MemdirError`, one reused child, restart after death, close."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import pytest

import memdir
from conftest import run_memdir, wheel_bin

POLICY = """[payment]
targets = ["acme-*", "landlord"]
max_amount = 100
daily_amount = 150
approval_above = 50
"""


def test_the_package_and_binary_are_the_installed_wheel():
    site = Path(sysconfig.get_path("purelib")).resolve()
    assert Path(memdir.__file__).resolve().is_relative_to(site), memdir.__file__
    assert (Path(memdir.__file__).parent / "py.typed").is_file()
    assert memdir.find_memdir_bin() == wheel_bin()
    out = subprocess.run([wheel_bin(), "--version"], capture_output=True, text=True, check=True)
    from importlib.metadata import version

    assert out.stdout.strip() == f"memdir {version('memdir')}", out.stdout
    # `python -m memdir` runs the same binary.
    out = subprocess.run([sys.executable, "-m", "memdir", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"memdir {version('memdir')}"


def test_every_method_against_a_temp_memory(root: Path, env):
    with memdir.Memory(root=root, env=env) as mem:
        assert mem.pid is None, "started before the first call"
        assert "core.md" in mem.context()
        assert root.joinpath("core.md").is_file(), "memdir mcp creates the memory folder"

        assert mem.write("notes/coffee.md", "---\nname: coffee\ndescription: how the user takes coffee\n---\nBlack, no sugar. See [[tea]].\n",
                         reason="user said so") == "wrote notes/coffee.md (5 lines, 90 bytes)"
        mem.write("notes/tea.md", "---\nname: tea\ndescription: tea\n---\nGreen tea in the afternoon.\n")
        assert root.joinpath("notes/coffee.md").read_text().endswith("Black, no sugar. See [[tea]].\n")

        assert mem.read("notes/coffee.md").splitlines()[-1] == "Black, no sugar. See [[tea]]."
        assert "Black" in mem.read("coffee"), "a note's name resolves like a link"
        assert mem.read("notes/coffee.md", start_line=5, end_line=5) == "Black, no sugar. See [[tea]].\n[notes/coffee.md: showed lines 5-5 of 5]"

        hits = mem.search("sugar")
        assert hits.splitlines()[0] == "notes/coffee.md:5:Black, no sugar. See [[tea]].", hits
        assert mem.search("green tea afternoon", mode="ranked", limit=1).startswith("notes/tea.md:")
        assert mem.search("nothing-like-this-anywhere").startswith("no matches")
        assert mem.search("s.gar", regex=True, path="notes/**").startswith("notes/coffee.md:5:")

        assert mem.links("coffee").splitlines()[1] == "- depth 1 (linked from notes/coffee.md): notes/tea.md (tea) — tea"

        assert mem.edit("notes/coffee.md", old="no sugar", new="one sugar") == "edited notes/coffee.md: replaced the one occurrence"
        assert mem.edit("notes/coffee.md", append="- decaf after 4pm") == "edited notes/coffee.md: appended 1 line"
        text = root.joinpath("notes/coffee.md").read_text()
        assert "one sugar" in text and text.endswith("- decaf after 4pm\n"), text

        assert mem.log("chose PostgreSQL over SQLite") == "logged to log/2026-11-30.md: - 09:15 chose PostgreSQL over SQLite"
        assert "09:15 chose PostgreSQL" in root.joinpath("log/2026-11-30.md").read_text()

        assert mem.scratch("deploy-plan", "step 1: tag", ttl="2h").endswith("-deploy-plan.md; it shows in memory_context until it expires (ttl 2h)")
        assert "step 1: tag" in mem.context()

        ref = mem.offload("line\n" * 500, label="long output")
        assert ref.startswith("offloaded 2500 bytes (500 lines) to offload/2026-11-30/091500-long-output.md\n"), ref
        assert root.joinpath("offload/2026-11-30/091500-long-output.md").read_text() == "line\n" * 500

        recent = mem.recent(since="today").splitlines()
        assert recent[0] == "changes (history), newest first:" and "main: edit notes/coffee.md" in recent[4], recent

        # The Anthropic memory tool through the same child, with the official strings.
        assert mem.memory("create", path="/memories/todo.txt", file_text="a\nb\n") == "File created successfully at: /memories/todo.txt"
        assert mem.memory("view", path="/memories/todo.txt") == "Here's the content of /memories/todo.txt with line numbers:\n     1\ta\n     2\tb"

        names = [t["name"] for t in mem.list_tools()]
        assert names[:2] == ["memory_context", "memory_search"] and "memory" in names
        assert mem.starts == 1


def test_refusals_carry_the_tools_own_text(root: Path, env):
    with memdir.Memory(root=root, env=env) as mem:
        mem.context()
        for tool, args in [
            ("memory_write", {"path": "../outside.md", "content": "x"}),
            ("memory_read", {"path": "notes/missing.md"}),
            ("memory_edit", {"path": "core.md", "old": "no such text anywhere", "new": "x"}),
            ("memory", {"command": "create", "path": "/etc/passwd", "file_text": "x"}),
            ("memory_search", {"pattern": "x", "mode": "sideways"}),
        ]:
            with pytest.raises(memdir.MemdirError) as caught:
                mem.call(tool, args)
            # The same words `memdir tool` prints for the same call, and its exit 1.
            cli = run_memdir(["--root", str(root), "tool", tool], env, input=json.dumps(args))
            assert cli.returncode == 1, cli
            assert caught.value.text == cli.stdout.removesuffix("\n"), (caught.value.text, cli.stdout)
            assert caught.value.tool == tool and str(caught.value) == caught.value.text
        assert not (root.parent / "outside.md").exists()

        # No tool ran: an unknown tool is a protocol error, still a MemdirError with memdir's words.
        with pytest.raises(memdir.MemdirError, match="memory_nope"):
            mem.call("memory_nope", {})
        # The child survived all of it.
        assert mem.starts == 1 and mem.log("still here").startswith("logged")


def test_gates_answer_allowed_denied_and_pending(root: Path, env):
    with memdir.Memory(root=root, env=env) as mem:
        mem.context()
        root.joinpath("gates.toml").write_text(POLICY)
        allowed = mem.gate_request("payment", "landlord", "rent", amount=40)
        assert allowed["decision"] == "allowed" and allowed["token"].startswith("gt_"), allowed
        denied = mem.gate_request("payment", "mallory", "x", amount=1)
        assert denied["decision"] == "denied" and denied["rule"].startswith("targets:"), denied
        pending = mem.gate_request("payment", "acme-power", "bill", amount="60")
        assert pending["decision"] == "pending"
        assert mem.gate_status(pending["id"]) == {"decision": "pending", "id": pending["id"]}
        with pytest.raises(memdir.MemdirError) as caught:
            mem.gate_request("payment", "landlord", "x", amount="lots")
        assert "amount" in caught.value.text


def test_a_dead_child_is_started_again(root: Path, env):
    mem = memdir.Memory(root=root, env=env)
    try:
        mem.log("first")
        first = mem.pid
        os.kill(first, signal.SIGKILL)
        for _ in range(100):
            if mem._child is not None and not mem._child.alive():
                break
            time.sleep(0.01)
        assert mem.log("second").startswith("logged")
        assert mem.starts == 2 and mem.pid not in (None, first)
        assert "second" in root.joinpath("log/2026-11-30.md").read_text()
    finally:
        mem.close()


def test_close_and_collection_end_the_child(root: Path, env):
    mem = memdir.Memory(root=root, env=env)
    mem.context()
    pid = mem.pid
    mem.close()
    assert not _alive(pid)
    with pytest.raises(memdir.MemdirError, match="closed"):
        mem.context()
    mem.close()  # idempotent

    other = memdir.Memory(root=root, env=env)
    other.context()
    pid = other.pid
    del other
    gc.collect()
    assert not _alive(pid), "a collected Memory leaves its child running"


def test_many_memories_open_and_close_cleanly(root: Path, env):
    """Closing ends the child and its reader threads without an exception in either (pytest
    turns an exception in a thread into an error: pyproject.toml). Closing a pipe under its
    reader once let that reader steal the next child's answer: the next call hung."""
    before = set(threading.enumerate())
    for i in range(100):
        mem = memdir.Memory(root=root, env=env, timeout=20)
        mem.log(f"round {i}")
        pid = mem.pid
        mem.close()
        assert not _alive(pid)
    left = [t for t in set(threading.enumerate()) - before if t.name.startswith("memdir-mcp")]
    assert not left, left


def test_close_leaves_a_pipe_open_while_its_reader_still_reads(root: Path, env, tmp_path: Path):
    """A process the child left behind holds its stdout open past close(): the pipe must not be
    closed under the reader (its descriptor would go to the next child's pipe)."""
    wrapper = tmp_path / "memdir-with-straggler"
    wrapper.write_text(f'#!/bin/sh\n(sleep 5) &\nexec "{wheel_bin()}" "$@"\n')
    wrapper.chmod(0o755)
    mem = memdir.Memory(root=root, env=env, binary=str(wrapper))
    mem.context()
    child = mem._child
    assert child is not None
    started = time.monotonic()
    mem.close()
    assert time.monotonic() - started < 10
    assert child.proc.stdout is not None and not child.proc.stdout.closed, "closed under its reader"
    child._out.join(timeout=10)
    assert not child._out.is_alive(), "the reader never saw the end of the pipe"
    # A reader that raised would fail this test (pytest: an exception in a thread is an error).
    assert child.messages.get_nowait() is not None


def test_a_bad_store_says_why(tmp_path: Path, env):
    mem = memdir.Memory(store="postgres://127.0.0.1:1/nope?tenant=a b", env=env, timeout=30)
    with pytest.raises(memdir.MemdirError) as caught:
        mem.context()
    assert caught.value.text.startswith("memdir mcp exited with code"), caught.value.text
    assert "memdir:" in caught.value.text
    with pytest.raises(memdir.MemdirError, match="cannot start"):
        memdir.Memory(root=tmp_path / "m", binary=str(tmp_path / "no-such-memdir")).context()


def test_calls_from_several_threads_share_one_child(root: Path, env):
    with memdir.Memory(root=root, env=env) as mem:
        errors = []

        def work(n: int) -> None:
            try:
                for i in range(20):
                    assert mem.log(f"thread {n} entry {i}").startswith("logged")
            except Exception as e:  # surfaced below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        log = root.joinpath("log/2026-11-30.md").read_text()
        assert sum(1 for line in log.splitlines() if " thread " in line) == 80
        assert mem.starts == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too: it only waits to be reaped.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
