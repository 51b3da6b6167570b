"""Finding the `memdir` binary: the one this wheel installed, else one on PATH."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import List, Optional


def _exe() -> str:
    return "memdir" + (sysconfig.get_config_var("EXE") or "")


def _candidates() -> List[str]:
    """The scripts folders a pip install of this wheel may have put `memdir` in, most likely
    first: this interpreter's (a venv's `bin/`), the user scheme's (`pip install --user`), and the
    base interpreter's."""
    dirs: List[str] = []
    scheme = sysconfig.get_preferred_scheme("user")
    for path in (
        sysconfig.get_path("scripts"),
        sysconfig.get_path("scripts", scheme=scheme),
        sysconfig.get_path("scripts", vars={"base": sys.base_prefix, "platbase": sys.base_prefix}),
    ):
        if path and path not in dirs:
            dirs.append(path)
    return dirs


def find_memdir_bin(binary: Optional[str] = None) -> str:
    """The path of the `memdir` binary to run.

    In order: ``binary`` when given, ``$MEMDIR_BIN`` when set, the binary this package's wheel
    installed (next to the Python interpreter's scripts), then ``memdir`` on ``PATH``.

    Raises:
        FileNotFoundError: when none of them exists, with what to do about it.
    """
    if binary:
        return binary
    env = os.environ.get("MEMDIR_BIN")
    if env:
        return env
    for folder in _candidates():
        path = os.path.join(folder, _exe())
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which("memdir")
    if found:
        return found
    raise FileNotFoundError(
        "memdir binary not found: install the memdir wheel (pip install memdir), put memdir on "
        "PATH, or pass binary=/path/to/memdir"
    )
