#!/usr/bin/env bash
# Times two memdir binaries side by side on the same generated year of memory (365 daily logs
# of 40 lines, 2,000 notes): search in every mode, context, log and write. Each command runs
# for A, then B, then A, ... (RUNS times each, after a warm-up of both), so both see the same
# load; a restructuring that should change nothing (issue 32) is checked by the ratios.
#
#   bench/ab.sh OLD_BINARY NEW_BINARY            # 20 runs each
#   RUNS=40 MEMDIR_MODEL_DIR=/models/all-MiniLM-L6-v2 bench/ab.sh old new   # with hybrid
#
# Prints one line per command: the median wall and CPU (user + system) time of each binary
# and B's CPU median over A's. Needs bash, python3 and GNU awk.
set -euo pipefail

A=${1:?usage: bench/ab.sh OLD_BINARY NEW_BINARY}
B=${2:?usage: bench/ab.sh OLD_BINARY NEW_BINARY}
RUNS=${RUNS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MEMDIR_NOW=2026-11-30T09:15:00Z TZ=UTC

here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/year.sh
source "$here/bench/year.sh"
export EXTRA_WORDS="kubernetes upgrade rollback"

# One folder per binary (each keeps its own indexes), with and without git.
for who in a b; do
  bin=$A; [[ $who == b ]] && bin=$B
  "$bin" --root "$work/$who" init --no-git >/dev/null
  make_year "$work/$who"
  "$bin" --root "$work/$who" index >/dev/null
  "$bin" --root "$work/$who-git" init >/dev/null
  "$bin" --root "$work/$who-git" write notes/seed.md "seed" >/dev/null
done

# ab NAME ARGS... : runs `BIN --root FOLDER ARGS...` for A and B in turn; {git} in NAME picks
# the folder with git. Output goes to a pipe that is read to the end, as a harness would.
TIMEFORMAT='%3R %3U %3S'
ab() {
  local name=$1; shift
  local suffix=""
  [[ $name == *"(git)"* ]] && suffix="-git"
  local ta tb
  ta=$(mktemp); tb=$(mktemp)
  "$A" --root "$work/a$suffix" "$@" 2>/dev/null | cat >/dev/null || true
  "$B" --root "$work/b$suffix" "$@" 2>/dev/null | cat >/dev/null || true
  for _ in $(seq "$RUNS"); do
    { time { "$A" --root "$work/a$suffix" "$@" 2>/dev/null | cat >/dev/null; } ; } 2>>"$ta" || true
    { time { "$B" --root "$work/b$suffix" "$@" 2>/dev/null | cat >/dev/null; } ; } 2>>"$tb" || true
  done
  med() { awk '{print $1 * 1000, ($2 + $3) * 1000}' "$1" | awk '
    {w[NR]=$1; c[NR]=$2}
    END { n = asort(w); m = asort(c)
      mw = (n % 2) ? w[(n+1)/2] : (w[n/2] + w[n/2+1]) / 2
      mc = (m % 2) ? c[(m+1)/2] : (c[m/2] + c[m/2+1]) / 2
      printf "%.1f %.1f", mw, mc }'; }
  read -r wa ca <<<"$(med "$ta")"
  read -r wb cb <<<"$(med "$tb")"
  rm -f "$ta" "$tb"
  printf '| %s | %s / %s ms | %s / %s ms | %s |\n' "$name" "$wa" "$ca" "$wb" "$cb" \
    "$(awk -v a="$ca" -v b="$cb" 'BEGIN{ if (a > 0) printf "%.2fx", b / a; else print "-" }')"
}

echo "a year: 365 logs + 2,000 notes, $RUNS runs each, $(nproc) cores, load $(cut -d" " -f1-3 /proc/loadavg)"
echo "| command | A wall / CPU median | B wall / CPU median | B/A CPU |"
echo "|---|---:|---:|---:|"
ab "search (grep) \`kubernetes upgrade\`" search "kubernetes upgrade"
ab "search (grep) \`rollback\`" search rollback
ab "search --mode ranked" search --mode ranked "why did the rollback of the kubernetes upgrade fail"
if [[ -n "${MEMDIR_MODEL_DIR:-}" ]]; then
  ab "search --mode hybrid" search --mode hybrid "why did the rollback of the kubernetes upgrade fail"
fi
ab "context" context
ab "context --json" context --json
ab "log (no git)" log "benchmark entry"
ab "log (git)" log "benchmark entry"
ab "write a note (no git)" write notes/probe.md "probe"
ab "write a note (git)" write notes/probe.md "probe"
