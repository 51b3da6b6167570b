"""The child process is reused: 1,000 `search` calls start exactly one `memdir mcp`."""

from __future__ import annotations

import os
from pathlib import Path

import memdir
from conftest import wheel_bin


def _children_running_mcp() -> list:
    """Processes whose parent is this one and whose command line ends in `mcp`."""
    found = []
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = stat.rsplit(")", 1)[1].split()[1]
        if ppid == me and b"mcp" in argv:
            found.append(int(entry))
    return found


def test_a_thousand_searches_start_one_process(root: Path, env, tmp_path: Path):
    # A wrapper that records every start of the binary, then becomes it: the count covers
    # processes that started and exited, not only those alive at the end.
    starts = tmp_path / "starts"
    wrapper = tmp_path / "memdir-counting"
    wrapper.write_text(f'#!/bin/sh\necho "$$ $*" >> "{starts}"\nexec "{wheel_bin()}" "$@"\n')
    wrapper.chmod(0o755)
    with memdir.Memory(root=root, env=env, binary=str(wrapper)) as mem:
        mem.write("notes/a.md", "alpha beta gamma\n")
        for i in range(1000):
            hits = mem.search("beta")
            assert hits.startswith("notes/a.md:1:"), (i, hits)
        assert len(_children_running_mcp()) == 1
        assert mem.starts == 1
    lines = starts.read_text().splitlines()
    assert len(lines) == 1 and lines[0].endswith(" mcp"), lines
    assert _children_running_mcp() == []
