#!/usr/bin/env bash
# Per-operation latency of the same memory on each store: a folder (with git, as `init` makes
# it) and PostgreSQL (a tenant of a throwaway database on the local server), through the
# release binary, one process per operation as an agent's hook or a shell would run it.
# The memory is ~10 MB: 365 daily logs of 40 lines, core, 2,000 notes.
#
#   bench/stores.sh                        # builds the release binary, 15 runs each
#   RUNS=30 PG=postgres://postgres@127.0.0.1:5432 bench/stores.sh
#
# Needs bash, python3, GNU awk and psql (to drop the database at the end).
set -euo pipefail

RUNS=${RUNS:-15}
PG=${PG:-postgres://postgres@127.0.0.1:5432}
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
work=$(mktemp -d)
db="memdir_bench_$$"
trap 'rm -rf "$work"; psql "$PG/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true' EXIT
export MEMDIR_NOW=2026-11-30T09:15:00Z TZ=UTC

python3 - "$work/seed" <<'PY'
import datetime, os, random, sys
root = sys.argv[1]
rnd = random.Random(11)
words = ("deploy canary postgres index cache queue owner review budget latency incident "
         "migration schema backup token session priya alex refund ledger retry the a of to and "
         "with for on we it is was user said decided moved").split()
os.makedirs(os.path.join(root, "log"), exist_ok=True)
with open(os.path.join(root, "core.md"), "w") as f:
    for i in range(60):
        f.write(f"- {' '.join(rnd.choice(words) for _ in range(10))}\n")
end = datetime.date(2026, 11, 30)
for d in range(365):
    day = end - datetime.timedelta(days=d)
    with open(os.path.join(root, "log", f"{day}.md"), "w") as f:
        for i in range(40):
            f.write(f"- {8 + i // 4:02d}:{(i * 7) % 60:02d} {' '.join(rnd.choice(words) for _ in range(60))}\n")
for i in range(2000):
    d = os.path.join(root, "notes", f"area-{i % 40:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"note-{i:04d}.md"), "w") as f:
        f.write(f"---\nname: note-{i:04d}\ndescription: {' '.join(rnd.choice(words) for _ in range(6))}\n"
                f"type: project\n---\n{' '.join(rnd.choice(words) for _ in range(200))}\n")
PY

folder="$work/folder"
pg="$PG/$db?tenant=bench"
"$MEMDIR" --store "$folder" init >/dev/null
"$MEMDIR" --store "$pg" init >/dev/null
# The same files in both: seed the folder by hand (committed as one hand edit), index it, and
# copy it into the database.
cp -r "$work/seed/." "$folder/"
"$MEMDIR" --store "$folder" index >/dev/null
"$MEMDIR" --store "$pg" import --from "$folder" >/dev/null 2>&1 || {
  # `init` wrote core.md and the config into the tenant: start it from the folder instead.
  psql "$PG/$db" -qc "DELETE FROM memdir.files WHERE tenant = 'bench'" >/dev/null
  "$MEMDIR" --store "$pg" import --from "$folder" >/dev/null
}

echo "a memory of $(du -sh --exclude=.git --exclude=.memdir "$folder" | cut -f1) ($(find "$folder" -name '*.md' -not -path '*/.git/*' | wc -l) files), $RUNS runs each, $(nproc) cores, load $(cut -d" " -f1-3 /proc/loadavg)"
for kind in folder pg; do
  store=${!kind}
  BASELINE="$kind read"
  time_it "$kind read" "$MEMDIR" --store "$store" read notes/area-07/note-0007.md
  time_it "$kind write" "$MEMDIR" --store "$store" write notes/probe.md "probe"
  time_it "$kind append (log)" "$MEMDIR" --store "$store" log "benchmark entry"
  time_it "$kind edit" "$MEMDIR" --store "$store" edit notes/probe.md --old probe --new probe2
  time_it "$kind context" "$MEMDIR" --store "$store" context
  time_it "$kind grep" "$MEMDIR" --store "$store" search --limit 20 ledger
  time_it "$kind ranked" "$MEMDIR" --store "$store" search --mode ranked "why did we move the ledger"
done
