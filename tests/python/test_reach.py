"""Issue 18 ("what agents reach for") through the official MCP Python SDK over stdio: partial
edits, reading a note by name, the link graph with a depth, recent changes in a window, and the
usage guide as instructions and a resource."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import clean_env, memdir_bin
from test_mcp import err, ok, run, stdio_client


def seed(root: Path) -> None:
    """Two linked notes and a third one step further, written with the CLI."""
    env = clean_env(root)
    for name, desc, body in [
        ("payment-retry-policy", "retry queue must never re-attempt a captured payment",
         "Intro\n\n## Status\nold one\n\n## Next\nsee [[refund-flow]]\n"),
        ("refund-flow", "how refunds work", "Back to [[payment-retry-policy]]; owner [[people/priya]]."),
        ("people/priya", "leads payments", "Priya."),
    ]:
        subprocess.run([memdir_bin(), "note", "new", name, "-d", desc, body], env=env, check=True, capture_output=True)


def test_edit_modes_read_by_name_links_and_recent(root: Path):
    seed(root)

    async def go():
        async with stdio_client(root) as c:
            p = "notes/payment-retry-policy.md"
            assert await ok(c, "memory_edit", {"path": p, "append": "- retries capped at 3"}) == f"edited {p}: appended 1 line"
            assert await ok(c, "memory_edit", {"path": p, "section": "Status", "new": "phase two", "reason": "status moved"}) == (
                f'edited {p}: replaced the section "Status"'
            )
            assert await ok(c, "memory_edit", {"path": p, "prepend": "TL;DR: never twice"}) == f"edited {p}: prepended 1 line"
            body = (root / p).read_text().split("---\n", 2)[2]
            assert body == "TL;DR: never twice\nIntro\n\n## Status\nphase two\n\n## Next\nsee [[refund-flow]]\n- retries capped at 3\n"
            await ok(c, "memory_write", {"path": "notes/t.md", "content": "v1 v1 v1\n"})
            e = await err(c, "memory_edit", {"path": "notes/t.md", "old": "v1", "new": "v2"})
            assert "occurs 3 times" in e, e
            assert await ok(c, "memory_edit", {"path": "notes/t.md", "old": "v1", "new": "v2", "expected_count": 3}) == (
                "edited notes/t.md: replaced 3 occurrences"
            )
            assert (root / "notes/t.md").read_text() == "v2 v2 v2\n"
            e = await err(c, "memory_edit", {"path": "notes/t.md", "append": "x", "old": "v2"})
            assert e.startswith("memory_edit needs exactly one of"), e
            e = await err(c, "memory_edit", {"path": "notes/t.md", "section": "Nope", "new": "x"})
            assert "no headings" in e, e
            # An agent's edit of core becomes a proposal, whatever the mode.
            e = await err(c, "memory_edit", {"path": "core.md", "append": "- the user likes tea"})
            assert "proposal" in e, e
            assert (root / "core.md").read_text() == ""

            by_path = await ok(c, "memory_read", {"path": "notes/refund-flow.md"})
            assert await ok(c, "memory_read", {"path": "[[refund-flow]]"}) == by_path
            assert await ok(c, "memory_read", {"path": "refund-flow"}) == by_path
            e = await err(c, "memory_read", {"path": "[[nowhere]]"})
            assert e.startswith('no file or note is named "nowhere"'), e

            one = await ok(c, "memory_links", {"name": "payment-retry-policy"})
            assert one.splitlines()[0] == "notes/payment-retry-policy.md (payment-retry-policy) — retry queue must never re-attempt a captured payment"
            assert "notes/refund-flow.md (refund-flow) — how refunds work" in one
            assert "priya" not in one
            two = await ok(c, "memory_links", {"name": "[[payment-retry-policy]]", "depth": 2})
            assert "- depth 2 (linked from notes/refund-flow.md): notes/people/priya.md (people/priya) — leads payments" in two, two
            e = await err(c, "memory_links", {"name": "nowhere"})
            assert "no note is named" in e

            recent = await ok(c, "memory_recent", {"since": "today"})
            lines = recent.splitlines()
            assert lines[0] == "changes (history), newest first:"
            assert "agent: edit core.md" not in recent
            assert any(": edit notes/payment-retry-policy.md (why: status moved)" in l for l in lines), recent
            mine = await ok(c, "memory_recent", {"since": "3d", "path": "notes/t.md", "limit": 1})
            assert len(mine.splitlines()) == 2 and "edit notes/t.md" in mine, mine
            e = await err(c, "memory_recent", {"since": "whenever"})
            assert e.startswith('bad window "whenever"'), e

    run(go)


def test_the_guide_is_in_the_instructions_and_a_resource(root: Path):
    async def go():
        async with stdio_client(root) as c:
            res = await c.list_resources()
            assert "memdir://guide" in [str(r.uri) for r in res.resources]
            guide = (await c.read_resource("memdir://guide")).contents[0].text
            assert "when" in guide.lower() and "memory_log" in guide and "memory_recent" in guide
            readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
            assert guide in readme

    run(go)
