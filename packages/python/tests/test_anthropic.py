"""`memdir.anthropic` through the real `anthropic` SDK's tool runner, against a local stand-in for
the Messages API that replays scripted `tool_use` turns: the tool results the runner sends back
are memdir's own (the same text and error flag `memdir tool` gives for the same input), and the
files left on disk are what the turns should leave."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import pytest

import memdir
from conftest import run_memdir
from memdir.anthropic import MemdirMemoryTool, _declarations, beta_tools
from standin import StandIn

BIG = "x" * 9000

# (tool, input, expected text, is_error); a text ending in "..." is a prefix.
TURNS = [
    ("memory", {"command": "view", "path": "/memories"},
     "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n...", False),
    ("memory", {"command": "create", "path": "/memories/notes/coffee.md", "file_text": "Prefers coffee\nBlack, no sugar\n"},
     "File created successfully at: /memories/notes/coffee.md", False),
    ("memory", {"command": "str_replace", "path": "/memories/notes/coffee.md", "old_str": "Black", "new_str": "Oat milk"},
     "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
     "     1\tPrefers coffee\n     2\tOat milk, no sugar", False),
    ("memory", {"command": "insert", "path": "/memories/notes/coffee.md", "insert_line": 0, "insert_text": "# Coffee\n"},
     "The file /memories/notes/coffee.md has been edited.", False),
    ("memory", {"command": "view", "path": "/memories/notes/coffee.md"},
     "Here's the content of /memories/notes/coffee.md with line numbers:\n     1\t# Coffee\n     2\tPrefers coffee\n     3\tOat milk, no sugar",
     False),
    ("memory", {"command": "rename", "old_path": "/memories/notes/coffee.md", "new_path": "/memories/notes/drinks.md"},
     "Successfully renamed /memories/notes/coffee.md to /memories/notes/drinks.md", False),
    ("memory", {"command": "create", "path": "/memories/../escape.md", "file_text": "x"},
     "Error: Path /memories/../escape.md would escape /memories directory", True),
    ("memory", {"command": "insert", "path": "/memories/core.md", "insert_line": 0, "insert_text": BIG},
     "Error: core.md would be 1 lines and 9001 bytes, over its cap of 100 lines and 8192 bytes (now 0 lines, 0 bytes): remove a line first",
     True),
    ("memory", {"command": "str_replace", "path": "/memories/notes/drinks.md", "old_str": "nowhere", "new_str": "x"},
     "No replacement was performed, old_str `nowhere` did not appear verbatim in /memories/notes/drinks.md.", True),
    ("memory", {"command": "create", "path": "/memories/tmp.md", "file_text": "temporary\n"},
     "File created successfully at: /memories/tmp.md", False),
    ("memory", {"command": "delete", "path": "/memories/tmp.md"}, "Successfully deleted /memories/tmp.md", False),
    ("memory", {"command": "delete", "path": "/memories"}, "Error: Cannot delete the /memories directory itself", True),
    ("memory_search", {"pattern": "oat milk"}, "notes/drinks.md:3:Oat milk, no sugar", False),
    ("memory_context", {}, "## Core memory (core.md)\n...", False),
]


def _matches(text, expected: str) -> bool:
    return text.startswith(expected[:-3]) if expected.endswith("...") else text == expected


def _run(tool, turns) -> StandIn:
    with StandIn([(name, inp) for name, inp, _, _ in turns]) as api:
        client = anthropic.Anthropic(api_key="test-key", base_url=api.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            tools=[tool, *beta_tools(tool)],
            messages=[{"role": "user", "content": "Remember how I take my coffee."}],
        )
        final = runner.until_done()
        assert final.content[0].text == "done"
    return api


def test_scripted_turns_through_the_sdk_tool_runner(tmp_path: Path, env):
    root = tmp_path / "mem"
    with MemdirMemoryTool(root=root, env=env) as tool:
        api = _run(tool, TURNS)
        assert tool.client.starts == 1, "one memdir mcp for the whole loop"

    declared = {t["name"]: t for t in api.requests[0]["tools"]}
    assert declared["memory"] == {"type": "memory_20250818", "name": "memory"}
    assert declared["memory_search"]["input_schema"]["required"] == ["pattern"]

    results = api.tool_results()
    assert len(results) == len(TURNS)
    for i, ((name, inp, expected, is_error), result) in enumerate(zip(TURNS, results)):
        assert result["tool_use_id"] == f"toolu_{i:03d}"
        assert isinstance(result["content"], str), result
        assert _matches(result["content"], expected), (name, inp, result["content"])
        assert bool(result.get("is_error")) is is_error, (name, inp, result)

    # What the turns leave on disk.
    assert root.joinpath("notes/drinks.md").read_text() == "# Coffee\nPrefers coffee\nOat milk, no sugar\n"
    assert not root.joinpath("notes/coffee.md").exists()
    assert not root.joinpath("tmp.md").exists()
    assert not (tmp_path / "escape.md").exists()
    assert root.joinpath("core.md").read_text() == "", "the cap refusal wrote nothing"

    # The same inputs through `memdir tool`, one process per call, on a fresh memory: the runner
    # sent exactly memdir's text and error flag.
    fresh = tmp_path / "fresh"
    assert run_memdir(["--root", str(fresh), "init"], env).returncode == 0
    for (name, inp, _, _), result in zip(TURNS, results):
        cli = run_memdir(["--root", str(fresh), "--source", "agent", "tool", name], env, input=json.dumps(inp))
        if name == "memory" and inp.get("path") == "/memories" and inp["command"] == "view":
            continue  # the listing differs: `init` and `mcp` make the same files but the logs differ
        assert result["content"] == cli.stdout.removesuffix("\n"), (name, inp)
        assert bool(result.get("is_error")) is (cli.returncode == 1), (name, inp)


def test_the_memory_tool_on_a_service_client(service):
    url, tokens = service
    tool = MemdirMemoryTool(client=memdir.Service(url, tokens["alice"]))
    turns = [TURNS[1], TURNS[6], ("memory", {"command": "view", "path": "/memories/notes/coffee.md", "view_range": [2, -1]},
                                   "Here's the content of /memories/notes/coffee.md with line numbers:\n     2\tBlack, no sugar", False)]
    api = _run(tool, turns)
    for (name, inp, expected, is_error), result in zip(turns, api.tool_results()):
        assert _matches(result["content"], expected), result
        assert bool(result.get("is_error")) is is_error
    assert memdir.Service(url, tokens["alice"]).file("notes/coffee.md") == b"Prefers coffee\nBlack, no sugar\n"


def test_declarations_equal_memdirs_own(env):
    listed = {t["name"]: t for t in json.loads(run_memdir(["tool", "--list"], env).stdout)}
    for name, decl in _declarations().items():
        assert decl["description"] == listed[name]["description"], name
        assert decl["input_schema"] == listed[name]["input_schema"], name


def test_the_adapter_is_the_sdks_memory_tool(tmp_path: Path, env):
    from anthropic.tools import BetaAbstractMemoryTool

    tool = MemdirMemoryTool(root=tmp_path / "m", env=env)
    assert isinstance(tool, BetaAbstractMemoryTool) and tool.name == "memory"
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.client.pid is None, "no process before the first command"
    with pytest.raises(ValueError):
        MemdirMemoryTool(root=tmp_path, client=memdir.Service("http://127.0.0.1:1", "t"))
    tool.close()
