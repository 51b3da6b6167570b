"""Shared fixtures: the memdir binary, fresh memory folders, a running `memdir serve`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

NOW = "2026-11-30T09:15:00Z"
TOKEN = "test-token-7f3a9c1e5b2d4f6a8c0e"


def memdir_bin() -> str:
    """The binary under test: $MEMDIR_BIN, else cargo's debug build."""
    if os.environ.get("MEMDIR_BIN"):
        return os.environ["MEMDIR_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path(__file__).resolve().parents[2] / "target")
    path = Path(target) / "debug" / "memdir"
    if not path.exists():
        found = shutil.which("memdir")
        if found:
            return found
        pytest.fail(f"memdir binary not found at {path}: build it (cargo build -p memdir-cli) or set MEMDIR_BIN")
    return str(path)


def clean_env(root: Path) -> dict[str, str]:
    """A clean environment: the root, a fixed clock, UTC, nothing else of the caller's."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root.parent),
        "MEMDIR_ROOT": str(root),
        "MEMDIR_NOW": NOW,
        "TZ": "UTC",
    }


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "mem"
    subprocess.run([memdir_bin(), "init"], env=clean_env(r), check=True, capture_output=True)
    return r


class Served:
    """A running `memdir serve` with its URL and captured stderr."""

    def __init__(self, proc: subprocess.Popen, url: str, stderr_path: Path):
        self.proc = proc
        self.url = url
        self.stderr_path = stderr_path

    def stderr(self) -> str:
        return self.stderr_path.read_text()


@pytest.fixture
def served(root: Path, tmp_path: Path):
    """`memdir serve` on a free loopback port, with a bearer token from MEMDIR_TOKEN."""
    env = clean_env(root) | {"MEMDIR_TOKEN": TOKEN, "MEMDIR_LOG": "debug"}
    err_path = tmp_path / "serve.stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [memdir_bin(), "serve", "--listen", "127.0.0.1:0", "--allow-origin", "http://localhost:5173"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    url = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and url is None:
        m = re.search(r"serving MCP on (http://\S+/mcp)", err_path.read_text())
        if m:
            url = m.group(1)
            break
        if proc.poll() is not None:
            pytest.fail(f"memdir serve exited early: {err_path.read_text()}")
        time.sleep(0.05)
    if url is None:
        proc.kill()
        pytest.fail(f"memdir serve did not start: {err_path.read_text()}")
    yield Served(proc, url, err_path)
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
