"""``python -m memdir ARGS`` runs the ``memdir`` binary this package installed."""

import os
import subprocess
import sys

from ._bin import find_memdir_bin


def _main() -> "int":
    binary = find_memdir_bin()
    if os.name == "posix":
        os.execv(binary, [binary, *sys.argv[1:]])
    return subprocess.call([binary, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(_main())
