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

# shellcheck source=bench/year.sh
source "$here/bench/year.sh"

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
