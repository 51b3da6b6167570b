# The generated year the shell benchmarks share. Source it; `make_year DIR` writes core, 365
# daily logs of 40 lines ending 2026-11-30 and 2,000 notes in 40 folders (12 MB), the same bytes
# every time. EXTRA_WORDS adds words to the vocabulary (bench/ab.sh searches for some).
make_year() {
  python3 - "$1" "${EXTRA_WORDS:-}" <<'PY'
import datetime, os, random, sys
root = sys.argv[1]
rnd = random.Random(11)
words = ("deploy canary postgres index cache queue owner review budget latency incident "
         "migration schema backup token session priya alex refund ledger retry").split()
words += sys.argv[2].split()
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
