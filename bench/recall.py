#!/usr/bin/env python3
"""Recall per prompt (`memdir hook user-prompt`) on LoCoMo dev, through the real binary.

Each conversation of ../shared/data/locomo/locomo-dev.json becomes a memory folder as the
protocol in its README says (one daily log per session, `- HH:MM [D1:3] Speaker: text`), with
`[hooks] recall = true`. For every question with evidence, the hook gets the question as its
prompt; its injected lines count as a hit when one holds an evidence id. The same question goes
to `memdir search --mode ranked --limit 5` (and `--mode hybrid` when MEMDIR_MODEL_DIR is set) for
comparison. Then 50 prompts unrelated to any conversation go to the hook on every folder: the
number that inject anything is the false-recall count.

    bench/recall.py                          # MEMDIR: the binary (default: target/debug/memdir)
    MEMDIR=/path/to/memdir bench/recall.py --data ../shared/data/locomo/locomo-dev.json
    bench/recall.py --scores                 # also print the top ranked score per prompt

The data is read where it lies, never copied into the repository.
"""
import argparse, datetime, json, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

UNRELATED = [
    "How do I reverse a linked list in Rust without cloning nodes?",
    "Write a bash one-liner that renames every .jpeg file to .jpg",
    "What is the time complexity of heapsort in the worst case?",
    "Explain the difference between TCP and UDP",
    "Fix the borrow checker error in this closure that captures self mutably",
    "Convert this JSON schema to a TypeScript interface",
    "How do I configure nginx as a reverse proxy for port 8080?",
    "What does the HTTP 429 status code mean?",
    "Write a SQL query that finds duplicate emails in the users table",
    "Why does my Docker build cache get invalidated on every commit?",
    "Explain Raft leader election in two paragraphs",
    "How do I set up a GitHub Actions matrix for three Python versions?",
    "What's the difference between a mutex and a semaphore?",
    "Refactor this function to return a Result instead of panicking",
    "How many bytes is a UUID?",
    "Generate a regular expression for IPv4 addresses",
    "What is the derivative of x squared times sine x?",
    "Translate 'the invoice is overdue' into German",
    "How do I undo the last git commit but keep the changes?",
    "Explain what a Bloom filter is and when to use one",
    "Benchmark this loop with criterion",
    "Why is my Kubernetes pod stuck in CrashLoopBackOff?",
    "Write a Makefile target that runs the linter before tests",
    "What is the capital of Australia?",
    "How does TLS certificate pinning work?",
    "Sort this array of structs by two keys in Go",
    "What are the SOLID principles?",
    "Set the PostgreSQL statement timeout for one session",
    "How do I profile memory allocations in a Rust binary?",
    "Explain eventual consistency with an example",
    "Compute the SHA-256 of a file in Python",
    "What is the difference between git merge and git rebase?",
    "How do I read environment variables in Node.js?",
    "Rename the column customer_id to account_id in the migration",
    "What is a monad, briefly?",
    "Write unit tests for the tokenizer edge cases",
    "Which HTTP methods are idempotent?",
    "Add pagination to this REST endpoint",
    "How do I enable gzip compression in Express?",
    "What does the CAP theorem say?",
    "Parse an ISO 8601 duration in JavaScript",
    "How do I mount an S3 bucket as a filesystem?",
    "Explain backpressure in streaming systems",
    "What is the default port of Redis?",
    "Make this CSS grid responsive for phones",
    "How does garbage collection work in the JVM?",
    "Write a cron expression for every weekday at 7am",
    "Why is floating point 0.1 + 0.2 not 0.3?",
    "Estimate the cost of 10 million Lambda invocations",
    "Explain the visitor pattern with a compiler example",
]
assert len(UNRELATED) == 50


def one_line(s):
    return " ".join(s.split())


def evidence_ids(raw):
    out = []
    for p in raw.split(";"):
        p = "".join(p.split())
        if not p.startswith("D"):
            continue
        p = p[1:].lstrip(":")
        if ":" not in p:
            continue
        s, t = p.split(":", 1)
        try:
            out.append(f"D{int(s)}:{int(t)}")
        except ValueError:
            pass
    return out


def run(memdir, root, args, stdin=None):
    env = {"PATH": os.environ.get("PATH", ""), "MEMDIR_ROOT": root, "TZ": "UTC",
           "MEMDIR_NOW": "2030-01-01T00:00:00Z", "HOME": root}
    if os.environ.get("MEMDIR_MODEL_DIR"):
        env["MEMDIR_MODEL_DIR"] = os.environ["MEMDIR_MODEL_DIR"]
    p = subprocess.run([memdir, *args], input=stdin, capture_output=True, text=True, env=env)
    return p


def build(memdir, conv, root):
    run(memdir, root, ["init", "--no-git"])
    cfg = os.path.join(root, ".memdir", "config.toml")
    text = open(cfg).read()
    assert "# recall = false" in text, "the config lists [hooks] recall"
    open(cfg, "w").write(text.replace("# recall = false", "recall = true"))
    c = conv["conversation"]
    n = 1
    while f"session_{n}_date_time" in c:
        turns = c.get(f"session_{n}")
        if turns:
            dt = datetime.datetime.strptime(c[f"session_{n}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
            lines = []
            for t in turns:
                line = f"- {dt:%H:%M} [{t['dia_id']}] {t['speaker']}: {one_line(t['text'])}"
                if t.get("blip_caption"):
                    line += f" [image: {one_line(t['blip_caption'])}]"
                lines.append(line + "\n")
            path = os.path.join(root, "log", f"{dt:%Y-%m-%d}.md")
            assert not os.path.exists(path)
            open(path, "w").write("".join(lines))
        n += 1
    qs = []
    for q in conv["qa"]:
        ev = {e for raw in q.get("evidence", []) for e in evidence_ids(raw)}
        if ev:
            qs.append((q["question"], q["category"], ev))
    return qs


def ids(text):
    return set(re.findall(r"\[(D\d+:\d+)\]", text))


def hook(memdir, root, prompt):
    p = run(memdir, root, ["hook", "user-prompt"], json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt}))
    if p.returncode != 0:
        sys.exit(f"hook failed: {p.stderr}")
    if not p.stdout.strip():
        return None
    return json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]


def search(memdir, root, prompt, mode):
    p = run(memdir, root, ["search", "--mode", mode, "--limit", "5", "--json", prompt])
    if p.returncode not in (0, 1):
        sys.exit(f"search failed: {p.stderr}")
    hits = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    return hits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "../../shared/data/locomo/locomo-dev.json"))
    ap.add_argument("--scores", action="store_true")
    a = ap.parse_args()
    memdir = os.environ.get("MEMDIR") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "../target")), "debug/memdir")
    data = json.load(open(a.data))
    modes = ["ranked"] + (["hybrid"] if os.environ.get("MEMDIR_MODEL_DIR") else [])
    tally = {}  # (method, category) -> [n, hits, injected]
    chars = []
    false_recall = 0
    false_by_prompt = {}
    with tempfile.TemporaryDirectory() as work:
        for i, conv in enumerate(data):
            root = os.path.join(work, f"c{i}")
            qs = build(memdir, conv, root)
            for q, cat, ev in qs:
                ctx = hook(memdir, root, q)
                rows = [("hook", ctx is not None and bool(ids(ctx) & ev), ctx is not None)]
                if ctx:
                    chars.append(len(ctx))
                for m in modes:
                    hits = search(memdir, root, q, m)
                    got = set().union(*(ids(h.get("text", "")) for h in hits)) if hits else set()
                    rows.append((f"search --mode {m} --limit 5", bool(got & ev), bool(hits)))
                    if a.scores and m == "ranked":
                        print(f"score\tlocomo\t{hits[0]['score'] if hits else 0}")
                for method, hit, injected in rows:
                    for c in (str(cat), "1-4" if cat != 5 else None):
                        if c is None:
                            continue
                        t = tally.setdefault((method, c), [0, 0, 0])
                        t[0] += 1
                        t[1] += hit
                        t[2] += injected
            for p in UNRELATED:
                if hook(memdir, root, p) is not None:
                    false_recall += 1
                    false_by_prompt[p] = false_by_prompt.get(p, 0) + 1
                if a.scores:
                    hits = search(memdir, root, p, "ranked")
                    print(f"score\tunrelated\t{hits[0]['score'] if hits else 0}")
    print("| method | category | questions | evidence in what is shown | shows anything |")
    print("|---|---|---:|---:|---:|")
    for (method, c), (n, hit, inj) in sorted(tally.items(), key=lambda kv: (kv[0][1] != "1-4", kv[0][1], kv[0][0])):
        print(f"| {method} | {c} | {n} | {100 * hit / n:.1f}% | {100 * inj / n:.1f}% |")
    chars.sort()
    if chars:
        print(f"\ninjected characters: median {chars[len(chars) // 2]}, max {chars[-1]}")
    n = 50 * len(data)
    print(f"unrelated prompts that inject anything: {false_recall} of {n} ({len(data)} folders x 50)")
    per_folder = false_recall / len(data)
    print(f"  per folder: {per_folder:.1f} of 50 on average")
    for p, k in sorted(false_by_prompt.items(), key=lambda kv: -kv[1]):
        print(f"  {k}x {p}")


if __name__ == "__main__":
    main()
