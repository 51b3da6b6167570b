// memdir/anthropic through @anthropic-ai/sdk's tool runner, against a local stand-in for the
// Messages API that replays scripted tool_use turns: the tool results the runner sends back are
// memdir's own (the same text and error flag `memdir tool` gives), and the files left on disk
// are what the turns should leave.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { Memory, Service } from '../dist/index.js';
import { declarations, memdirBetaTools, memdirMemoryHandlers, memdirMemoryTool } from '../dist/anthropic.js';
import { BIN, childEnv, runMemdir, service, standIn, tempDir } from './helpers.mjs';

const BIG = 'x'.repeat(9000);

// [tool, input, expected text (a trailing ... makes it a prefix), is_error]
const TURNS = [
  ['memory', { command: 'view', path: '/memories' }, "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n...", false],
  ['memory', { command: 'create', path: '/memories/notes/coffee.md', file_text: 'Prefers coffee\nBlack, no sugar\n' }, 'File created successfully at: /memories/notes/coffee.md', false],
  ['memory', { command: 'str_replace', path: '/memories/notes/coffee.md', old_str: 'Black', new_str: 'Oat milk' },
    'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tPrefers coffee\n     2\tOat milk, no sugar', false],
  ['memory', { command: 'insert', path: '/memories/notes/coffee.md', insert_line: 0, insert_text: '# Coffee\n' }, 'The file /memories/notes/coffee.md has been edited.', false],
  ['memory', { command: 'view', path: '/memories/notes/coffee.md' },
    "Here's the content of /memories/notes/coffee.md with line numbers:\n     1\t# Coffee\n     2\tPrefers coffee\n     3\tOat milk, no sugar", false],
  ['memory', { command: 'rename', old_path: '/memories/notes/coffee.md', new_path: '/memories/notes/drinks.md' }, 'Successfully renamed /memories/notes/coffee.md to /memories/notes/drinks.md', false],
  ['memory', { command: 'create', path: '/memories/../escape.md', file_text: 'x' }, 'Error: Path /memories/../escape.md would escape /memories directory', true],
  ['memory', { command: 'insert', path: '/memories/core.md', insert_line: 0, insert_text: BIG },
    'Error: core.md would be 1 lines and 9001 bytes, over its cap of 100 lines and 8192 bytes (now 0 lines, 0 bytes): remove a line first', true],
  ['memory', { command: 'str_replace', path: '/memories/notes/drinks.md', old_str: 'nowhere', new_str: 'x' },
    'No replacement was performed, old_str `nowhere` did not appear verbatim in /memories/notes/drinks.md.', true],
  ['memory', { command: 'create', path: '/memories/tmp.md', file_text: 'temporary\n' }, 'File created successfully at: /memories/tmp.md', false],
  ['memory', { command: 'delete', path: '/memories/tmp.md' }, 'Successfully deleted /memories/tmp.md', false],
  ['memory', { command: 'delete', path: '/memories' }, 'Error: Cannot delete the /memories directory itself', true],
  ['memory_search', { pattern: 'oat milk' }, 'notes/drinks.md:3:Oat milk, no sugar', false],
  ['memory_context', {}, '## Core memory (core.md)\n...', false],
];

function matches(text, expected) {
  return expected.endsWith('...') ? text.startsWith(expected.slice(0, -3)) : text === expected;
}

async function runTurns(t, client, turns) {
  const api = await standIn(
    t,
    turns.map(([name, input]) => [name, input]),
  );
  const anthropic = new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 });
  const runner = anthropic.beta.messages.toolRunner({
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    tools: [memdirMemoryTool(client), ...memdirBetaTools(client)],
    messages: [{ role: 'user', content: 'Remember how I take my coffee.' }],
  });
  const final = await runner.runUntilDone();
  assert.equal(final.content[0].text, 'done');
  return api;
}

test('scripted turns through the SDK tool runner', async (t) => {
  const dir = tempDir(t);
  const root = join(dir, 'mem');
  const env = childEnv(join(dir, 'home'));
  const mem = new Memory({ root, env, binary: BIN });
  t.after(() => mem.close());
  const api = await runTurns(t, mem, TURNS);
  assert.equal(mem.starts, 1, 'one memdir mcp for the whole loop');

  const declared = Object.fromEntries(api.requests[0].tools.map((d) => [d.name, d]));
  assert.deepEqual(declared.memory, { type: 'memory_20250818', name: 'memory' });
  assert.deepEqual(declared.memory_search.input_schema.required, ['pattern']);

  const results = api.toolResults();
  assert.equal(results.length, TURNS.length);
  const fresh = join(dir, 'fresh');
  assert.equal(runMemdir(['--root', fresh, 'init'], env).code, 0);
  TURNS.forEach(([name, input, expected, isError], i) => {
    const r = results[i];
    assert.equal(r.tool_use_id, `toolu_${String(i).padStart(3, '0')}`);
    assert.equal(typeof r.content, 'string');
    assert.ok(matches(r.content, expected), `${name} ${JSON.stringify(input)}: ${r.content}`);
    assert.equal(r.is_error === true, isError, `${name} ${JSON.stringify(input)}`);
    // The same input through `memdir tool`, one process per call: exactly memdir's answer.
    if (!(name === 'memory' && input.command === 'view' && input.path === '/memories')) {
      const cli = runMemdir(['--root', fresh, '--source', 'agent', 'tool', name], env, JSON.stringify(input));
      assert.equal(r.content, cli.stdout.replace(/\n$/, ''));
      assert.equal(r.is_error === true, cli.code === 1);
    }
  });

  assert.equal(readFileSync(join(root, 'notes/drinks.md'), 'utf8'), '# Coffee\nPrefers coffee\nOat milk, no sugar\n');
  assert.ok(!existsSync(join(root, 'notes/coffee.md')));
  assert.ok(!existsSync(join(root, 'tmp.md')));
  assert.ok(!existsSync(join(dir, 'escape.md')));
  assert.equal(readFileSync(join(root, 'core.md'), 'utf8'), '', 'the cap refusal wrote nothing');
});

test('the memory tool on a service client', async (t) => {
  const s = await service(t);
  if (!s) return;
  const svc = new Service(s.url, s.tokens.alice);
  const turns = [
    TURNS[1],
    TURNS[6],
    ['memory', { command: 'view', path: '/memories/notes/coffee.md', view_range: [2, -1] }, "Here's the content of /memories/notes/coffee.md with line numbers:\n     2\tBlack, no sugar", false],
  ];
  const api = await runTurns(t, svc, turns);
  api.toolResults().forEach((r, i) => {
    assert.ok(matches(r.content, turns[i][2]), r.content);
    assert.equal(r.is_error === true, turns[i][3]);
  });
  assert.equal(new TextDecoder().decode(await svc.file('notes/coffee.md')), 'Prefers coffee\nBlack, no sugar\n');
});

test('declarations equal memdir’s own, and the handlers cover every command', (t) => {
  const listed = Object.fromEntries(JSON.parse(runMemdir(['tool', '--list'], childEnv(tempDir(t))).stdout).map((d) => [d.name, d]));
  for (const [name, decl] of Object.entries(declarations)) {
    assert.equal(decl.description, listed[name].description, name);
    assert.deepEqual(decl.input_schema, listed[name].input_schema, name);
  }
  const handlers = memdirMemoryHandlers(new Service('http://127.0.0.1:1'));
  assert.deepEqual(Object.keys(handlers).sort(), ['create', 'delete', 'insert', 'rename', 'str_replace', 'view']);
  assert.deepEqual(listed.memory.input_schema.properties.command.enum.slice().sort(), Object.keys(handlers).sort());
});
