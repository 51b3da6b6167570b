#!/usr/bin/env bash
# Times `memdir index` and `memdir lint` on a generated folder of N notes (default 10,000), with
# `grep -r` over the same files as a side-by-side baseline (reading every note once).
#
#   bench/notes.sh                 # builds the release binary, 10,000 notes, 10 runs each
#   N=2000 RUNS=5 bench/notes.sh
#   MEMDIR=/path/to/memdir bench/notes.sh
#   GIT=0 bench/notes.sh           # without git history (`memdir init --no-git`)
#
# Prints one line per command: min and median wall time and median CPU time in milliseconds, and
# the wall median's ratio to grep's. Needs bash, python3 (to generate the notes) and GNU awk.
set -euo pipefail

N=${N:-10000}
RUNS=${RUNS:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/mem
export MEMDIR_ROOT=$root MEMDIR_NOW=2026-11-30T09:15:00Z TZ=UTC
# GIT=0 measures the files alone; by default the folder has git history, as `memdir init` makes it.
if [[ "${GIT:-1}" == 0 ]]; then "$MEMDIR" init --no-git >/dev/null; else "$MEMDIR" init >/dev/null; fi

# N notes in 100 folders, four types, three links each (one with an alias), about 600 bytes each.
# The index cap is raised so that lint measures a clean folder rather than reporting the cap.
python3 - "$root" "$N" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(7)
types = ["user", "feedback", "project", "reference"]
words = ("payment retry refund ledger deploy canary postgres index cache queue owner review "
         "budget latency incident migration schema backup token session").split()
for i in range(n):
    d = os.path.join(root, "notes", f"topic-{i % 100:02d}")
    os.makedirs(d, exist_ok=True)
    links = [f"note-{rnd.randrange(n):05d}" for _ in range(3)]
    body = " ".join(rnd.choice(words) for _ in range(70))
    with open(os.path.join(d, f"note-{i:05d}.md"), "w") as f:
        f.write(f"---\nname: note-{i:05d}\ndescription: {' '.join(rnd.choice(words) for _ in range(8))}\n"
                f"type: {types[i % 4]}\ncreated: 2026-11-{1 + i % 29:02d}\ntags: [{rnd.choice(words)}]\n---\n"
                f"{body}\n\nRelated: [[{links[0]}]], [[{links[1]}|see also]], [[{links[2]}]]\n")
with open(os.path.join(root, ".memdir", "config.toml"), "w") as f:
    f.write("[index]\nmax_lines = 50000\nmax_bytes = 10000000\n")
PY


echo "$N notes, $(du -sh "$root/notes" | cut -f1) on disk, $RUNS runs each, $(nproc) cores, load $(cut -d" " -f1-3 /proc/loadavg)"
time_it grep grep -r -c '\[\[' "$root/notes"
rm -f "$root/MEMORY.md"
time_it "memdir index" "$MEMDIR" index
time_it "memdir lint" "$MEMDIR" lint
time_it "memdir context" "$MEMDIR" context
time_it "memdir note new --force (a write)" "$MEMDIR" note new bench-probe -d "one more note" --force "body"
"$MEMDIR" lint >/dev/null && echo "lint: clean" || echo "lint: findings (exit $?)"
