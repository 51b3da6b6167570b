#!/usr/bin/env bash
# Times the foundation's hot commands on a generated year of memory (365 daily logs of ~40 lines,
# 2,000 notes): `context` beside `cat` of the same files (what a hand-rolled loader would do), and
# one `log` append and one `write`, each with and without git provenance, and a listed note
# written, deleted and moved.
#
#   bench/layers.sh                # builds the release binary, 20 runs each
#   RUNS=50 bench/layers.sh
#   MEMDIR=/path/to/memdir bench/layers.sh
#
# Prints one line per command (see bench/lib.sh). Needs bash, python3 and GNU awk.
set -euo pipefail

RUNS=${RUNS:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MEMDIR_NOW=2026-11-30T09:15:00Z TZ=UTC

# A year: core, 365 logs ending today, 2,000 notes in 40 folders.
make_year() {
  python3 - "$1" <<'PY'
import datetime, os, random, sys
root = sys.argv[1]
rnd = random.Random(11)
words = ("deploy canary postgres index cache queue owner review budget latency incident "
         "migration schema backup token session priya alex refund ledger retry").split()
os.makedirs(os.path.join(root, "log"), exist_ok=True)
with open(os.path.join(root, "core.md"), "w") as f:
    for i in range(60):
        f.write(f"- {' '.join(rnd.choice(words) for _ in range(10))}\n")
end = datetime.date(2026, 11, 30)
for d in range(365):
    day = end - datetime.timedelta(days=d)
    with open(os.path.join(root, "log", f"{day}.md"), "w") as f:
        for i in range(40):
            f.write(f"- {8 + i // 4:02d}:{(i * 7) % 60:02d} {' '.join(rnd.choice(words) for _ in range(14))}\n")
for i in range(2000):
    d = os.path.join(root, "notes", f"area-{i % 40:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"note-{i:04d}.md"), "w") as f:
        f.write(f"---\nname: note-{i:04d}\ndescription: {' '.join(rnd.choice(words) for _ in range(6))}\n"
                f"type: project\n---\n{' '.join(rnd.choice(words) for _ in range(90))}\n")
PY
}

for kind in git nogit; do
  root=$work/$kind
  if [[ $kind == git ]]; then "$MEMDIR" --root "$root" init >/dev/null; else "$MEMDIR" --root "$root" init --no-git >/dev/null; fi
  make_year "$root"
  # Through memdir, so with git the generated files are committed (as a hand edit) first.
  "$MEMDIR" --root "$root" index >/dev/null
done

root=$work/git
echo "a year: 365 logs + 2,000 notes, $(du -sh --exclude=.git "$root" | cut -f1) on disk, $RUNS runs each, $(nproc) cores, load $(cut -d" " -f1-3 /proc/loadavg)"
BASELINE=cat
time_it cat cat "$root/core.md" "$root/MEMORY.md" "$root/log/2026-11-29.md" "$root/log/2026-11-30.md"
time_it "memdir context" "$MEMDIR" --root "$root" context
time_it "memdir context --json" "$MEMDIR" --root "$root" context --json
time_it "memdir log (no git)" "$MEMDIR" --root "$work/nogit" log "benchmark entry"
time_it "memdir log (git commit)" "$MEMDIR" --root "$root" log "benchmark entry"
time_it "memdir write (no git)" "$MEMDIR" --root "$work/nogit" write notes/probe.md "probe"
time_it "memdir write (git commit)" "$MEMDIR" --root "$root" write notes/probe.md "probe"
# A listed note in a folder of 50 (the index lists 40 folders: it is past its cap), then the
# same note deleted or moved; each pair is two memdir processes.
note=$'---\nname: probe\ndescription: a probe note\ntype: project\n---\nbody\n'
time_it "memdir write a listed note (no git)" "$MEMDIR" --root "$work/nogit" write notes/area-00/probe.md "$note"
time_it "write + rm of a note (no git)" bash -c "'$MEMDIR' --root '$work/nogit' write notes/area-00/gone.md '$note' && '$MEMDIR' --root '$work/nogit' rm notes/area-00/gone.md"
time_it "mv a note and back (no git)" bash -c "'$MEMDIR' --root '$work/nogit' mv notes/area-00/probe.md notes/area-01/probe.md && '$MEMDIR' --root '$work/nogit' mv notes/area-01/probe.md notes/area-00/probe.md"
time_it "echo >> file (baseline append)" bash -c "echo '- 09:15 x' >> '$root/log/2026-11-30.md'"
