#!/usr/bin/env bash
# The short fuzz run (.ci/run): builds every target once, then runs each for a fixed time over
# its checked-in seeds (which include every crash found so far) and the corpus it has grown.
# Exits non-zero, naming the targets, when any target crashes, hangs or runs out of memory.
#
#   fuzz/run-short.sh                 # every target, MEMDIR_FUZZ_SECONDS (default 15) each
#   fuzz/run-short.sh note ledger     # only these
#   MEMDIR_FUZZ_SECONDS=300 MEMDIR_FUZZ_RUNS=10000000 fuzz/run-short.sh   # the long run
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). Runs on the stable toolchain: without a
# sanitizer (`--sanitizer none`: the crates forbid unsafe code, and AddressSanitizer needs
# nightly's -Zsanitizer), with debug assertions and overflow checks on (`-a`).
set -uo pipefail
cd "$(dirname "$0")"

SECONDS_EACH="${MEMDIR_FUZZ_SECONDS:-15}"
# Its own target dir: these builds use other compiler flags than the workspace's.
unset CARGO_TARGET_DIR
TARGET_DIR="${MEMDIR_FUZZ_TARGET_DIR:-$PWD/target}"
# `MEMDIR_FUZZ_FEATURES=` (empty) builds only the twelve parser targets, about a minute cold.
FEATURES="${MEMDIR_FUZZ_FEATURES-engine}"
FLAGS=(--sanitizer none -a --target-dir "$TARGET_DIR")
if [ -n "$FEATURES" ]; then
  FLAGS+=(--features "$FEATURES")
fi

dict_of() {
  case "$1" in
    log_entry | log_file) echo log ;;
    import_chatgpt | import_claude) echo chat_json ;;
    import_host) echo host ;;
    regex_search) echo regex ;;
    *) echo "$1" ;;
  esac
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi

echo "== fuzz: building ${#targets[@]} targets"
cargo fuzz build "${FLAGS[@]}" || exit 1

failed=()
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="$(mktemp)"
  start=$(date +%s)
  cargo fuzz run "${FLAGS[@]}" "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$SECONDS_EACH" -runs="${MEMDIR_FUZZ_RUNS:--1}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict="dicts/$(dict_of "$t").dict" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')"
  cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n1)"
  echo "$t: rc $rc, ${runs:-?} runs, ${cov:-no coverage line}, $(( $(date +%s) - start )) s"
  if [ "$rc" -ne 0 ]; then
    failed+=("$t")
    grep -v -E "^ +[0-9]+: |^ +at " "$log" | grep -E -A14 "panicked at|ERROR|error|Test unit written" | head -n 40
  fi
  rm -f "$log"
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs under fuzz/artifacts/<target>/)"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash"
