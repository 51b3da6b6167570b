"""Fixtures for the memdir package's tests, which run against the INSTALLED package: the wheel
built with maturin and installed into a fresh venv (`.ci/run` does this), so `memdir` is the
wheel's binary and `import memdir` the wheel's module. Nothing here reaches into the source tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import sysconfig
import time
import uuid
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest

NOW = "2026-11-30T09:15:00Z"

try:
    import memdir  # noqa: F401
except ImportError:  # pragma: no cover
    pytest.exit(
        "the memdir package is not installed in this Python: build the wheel (maturin build) and pip "
        "install it into a venv, then run pytest with that venv's Python (.ci/run does this)",
        returncode=4,
    )


def wheel_bin() -> str:
    """The `memdir` the wheel installed next to this Python."""
    path = Path(sysconfig.get_path("scripts")) / "memdir"
    assert path.is_file(), f"the wheel did not install {path}"
    return str(path)


def child_env(home: Path) -> Dict[str, str]:
    """An environment for a memdir child: a fixed clock, UTC, a private HOME and cache."""
    return {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "MEMDIR_NOW": NOW,
        "TZ": "UTC",
    }


@pytest.fixture
def env(tmp_path: Path) -> Dict[str, str]:
    return child_env(tmp_path / "home")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A memory folder that does not exist yet (`memdir mcp` creates it)."""
    return tmp_path / "mem"


def run_memdir(args, env: Dict[str, str], input: str = "") -> subprocess.CompletedProcess:
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    return subprocess.run([wheel_bin(), *args], input=input, env=full, capture_output=True, text=True)


def _pg_server() -> str:
    return os.environ.get("MEMDIR_TEST_PG", "postgres://postgres@127.0.0.1:5432")


def _skip_or_fail(why: str) -> None:
    if os.environ.get("MEMDIR_REQUIRE_PG") == "1":
        pytest.fail(f"PostgreSQL is required (MEMDIR_REQUIRE_PG=1): {why}")
    pytest.skip(f"no PostgreSQL: {why}; set MEMDIR_REQUIRE_PG=1 to fail instead")


@pytest.fixture
def pg_database() -> Iterator[str]:
    """A throwaway database on the test server: its URL (no tenant)."""
    if not shutil.which("createdb") or not shutil.which("dropdb"):
        _skip_or_fail("createdb/dropdb are not installed (apt-get install postgresql-client)")
    server = _pg_server()
    m = re.match(r"postgres(?:ql)?://(?:([^@/:]+)@)?([^/:]+)(?::(\d+))?/?$", server)
    if not m:
        pytest.fail(f"MEMDIR_TEST_PG is not postgres://[user@]host[:port]: {server}")
    user, host, port = m.group(1) or "postgres", m.group(2), m.group(3) or "5432"
    name = f"memdir_pytest_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    conn = ["-h", host, "-p", port, "-U", user]
    made = subprocess.run(["createdb", *conn, "--template=template0", name], capture_output=True, text=True)
    if made.returncode != 0:
        _skip_or_fail(f"createdb at {server} said: {made.stderr.strip()}")
    try:
        yield f"{server}/{name}"
    finally:
        subprocess.run(["dropdb", *conn, "--force", "--if-exists", name], capture_output=True)


def start_service(store: str, env: Dict[str, str], log: Path) -> Tuple[subprocess.Popen, str]:
    """`memdir --store STORE serve` on a free loopback port: the process and its base URL."""
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env, "MEMDIR_LOG": "info"}
    with open(log, "w") as err:
        proc = subprocess.Popen([wheel_bin(), "--store", store, "serve", "--listen", "127.0.0.1:0"],
                                env=full, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"memory on (http://\S+) ", log.read_text())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"memdir serve did not start: {log.read_text()}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def service(pg_database: str, tmp_path: Path, env: Dict[str, str]) -> Iterator[Tuple[str, Dict[str, str]]]:
    """A `memdir serve` on PostgreSQL with two tenants: (base URL, {tenant: token})."""
    tokens = {}
    for name in ("alice", "bob"):
        out = run_memdir(["--store", pg_database, "tenant", "add", name, "--principal", name], env)
        assert out.returncode == 0, out.stderr
        tokens[name] = out.stdout.strip()
    proc, url = start_service(pg_database, env, tmp_path / "serve.log")
    try:
        yield url, tokens
    finally:
        stop(proc)


