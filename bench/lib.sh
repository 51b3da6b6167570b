# Shared helpers for the shell benchmarks. Source it after setting RUNS and `here` (the repo).
#
# MEMDIR: the binary to time; when unset, the release build of this checkout (built now).
if [[ -z "${MEMDIR:-}" ]]; then
  target=${CARGO_TARGET_DIR:-$here/target}
  (cd "$here" && cargo build --release -q -p memdir-cli)
  MEMDIR=$target/release/memdir
fi
#
# time_it NAME CMD... : runs CMD RUNS times (after one warm-up) and prints the min and median wall
# time and the median CPU time (user + system), in milliseconds. CPU time is the steadier number
# on a busy machine. When a command named $BASELINE (default: grep) ran before, later lines also
# print their wall median's ratio to it.
declare -A median
TIMEFORMAT='%3R %3U %3S'
BASELINE=${BASELINE:-grep}
time_it() {
  local name=$1; shift
  "$@" >/dev/null 2>&1 || true
  local tf
  tf=$(mktemp)
  for _ in $(seq "$RUNS"); do
    { time "$@" >/dev/null 2>&1 ; } 2>>"$tf" || true
  done
  local stats
  stats=$(awk '{print $1 * 1000, ($2 + $3) * 1000}' "$tf" | sort -n | awk '
    {w[NR]=$1; c[NR]=$2}
    END {
      n = asort(c)
      mw = (NR % 2) ? w[(NR+1)/2] : (w[NR/2] + w[NR/2+1]) / 2
      mc = (n % 2) ? c[(n+1)/2] : (c[n/2] + c[n/2+1]) / 2
      printf "%.1f %.1f %.1f", w[1], mw, mc }')
  rm -f "$tf"
  read -r mn md cpu <<<"$stats"
  median[$name]=$md
  local ratio=""
  if [[ -n "${median[$BASELINE]:-}" && "$name" != "$BASELINE" ]]; then
    ratio=$(awk -v a="$md" -v b="${median[$BASELINE]}" -v n="$BASELINE" 'BEGIN{printf "  (%.1fx %s)", a / b, n}')
  fi
  printf '%-34s wall min %7.1f  median %7.1f ms   cpu median %7.1f ms%s\n' "$name" "$mn" "$md" "$cpu" "$ratio"
}
