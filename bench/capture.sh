#!/usr/bin/env bash
# Times the SessionEnd hook (`memdir hook session-end`) on a generated 5 MB Claude Code
# transcript: the first save of the whole session into a fresh memory (git on), the save that
# finds nothing new, and the save of the last 10% after an earlier save took the rest. Claude
# Code gives SessionEnd hooks 1.5 s.
#
#   bench/capture.sh               # builds the release binary, 10 runs each
#   RUNS=20 MB=10 bench/capture.sh
#   MEMDIR=/path/to/memdir bench/capture.sh
#
# Prints one line per case (see bench/lib.sh). Needs bash, python3 and GNU awk.
set -euo pipefail

RUNS=${RUNS:-10}
MB=${MB:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export MEMDIR_NOW=2026-11-30T09:15:00Z TZ=UTC HOME=$work

# Rounds of a prompt, a reply with a tool call, and a tool result; every tenth result is a
# 6 KB build log (offloaded), the rest one line.
python3 - "$work/t.jsonl" "$MB" <<'PY'
import json, sys
path, mb = sys.argv[1], float(sys.argv[2])
sid = "5f2c1a9e-3b7d-4c21-9e0f-2a8b6c4d1e77"
def ts(s): return f"2026-11-30T{8 + s // 3600 % 12:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000Z"
n, i = 0, 0
with open(path, "w") as f:
    while n < mb * (1 << 20):
        res = (f"line {i} of a long build log\n" * 200) if i % 10 == 0 else f"ok: {i} tests passed"
        for v in (
            {"type": "user", "sessionId": sid, "timestamp": ts(i * 4),
             "message": {"role": "user", "content": f"step {i}: run the tests for module m{i}"}},
            {"type": "assistant", "sessionId": sid, "timestamp": ts(i * 4 + 1),
             "message": {"role": "assistant", "content": [
                 {"type": "text", "text": f"Running the tests of m{i} now."},
                 {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"cargo test -p m{i}"}}]}},
            {"type": "user", "sessionId": sid, "timestamp": ts(i * 4 + 2),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": res}]}},
        ):
            line = json.dumps(v) + "\n"
            n += len(line)
            f.write(line)
        i += 1
PY
lines=$(wc -l <"$work/t.jsonl")
head -n $((lines * 9 / 10)) "$work/t.jsonl" >"$work/part.jsonl"
echo "transcript: $(du -h "$work/t.jsonl" | cut -f1), $lines lines"
input() {
  printf '{"session_id":"5f2c1a9e-3b7d-4c21-9e0f-2a8b6c4d1e77","transcript_path":"%s","cwd":"/w","hook_event_name":"SessionEnd","reason":"logout"}' "$1"
}
input "$work/t.jsonl" >"$work/in-all"
input "$work/part.jsonl" >"$work/in-part"

"$MEMDIR" --root "$work/fresh" init >/dev/null
cp -a "$work/fresh" "$work/partly"
MEMDIR_ROOT="$work/partly" "$MEMDIR" hook session-end <"$work/in-part" >/dev/null
cp -a "$work/fresh" "$work/done"
MEMDIR_ROOT="$work/done" "$MEMDIR" hook session-end <"$work/in-all" >/dev/null

BASELINE=copy
time_it copy bash -c "rm -rf '$work/m' && cp -a '$work/fresh' '$work/m' && cat '$work/t.jsonl' >/dev/null"
time_it "session-end, whole session" bash -c "rm -rf '$work/m' && cp -a '$work/fresh' '$work/m' && MEMDIR_ROOT='$work/m' '$MEMDIR' hook session-end <'$work/in-all'"
time_it "session-end, last 10%" bash -c "rm -rf '$work/m' && cp -a '$work/partly' '$work/m' && MEMDIR_ROOT='$work/m' '$MEMDIR' hook session-end <'$work/in-all'"
time_it "session-end, nothing new" bash -c "MEMDIR_ROOT='$work/done' '$MEMDIR' hook session-end <'$work/in-all'"
