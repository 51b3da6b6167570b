// `Memory` against a temp memory through the real binary: every method, the tool's own text in
// MemdirError, one reused child, restart after death, close.

import assert from 'node:assert/strict';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Memory, MemdirError } from '../dist/index.js';
import { BIN, childEnv, runMemdir, tempDir } from './helpers.mjs';

const POLICY = `[payment]
targets = ["acme-*", "landlord"]
max_amount = 100
daily_amount = 150
approval_above = 50
`;

function setup(t) {
  const dir = tempDir(t);
  const root = join(dir, 'mem');
  const env = childEnv(join(dir, 'home'));
  const mem = new Memory({ root, env, binary: BIN });
  t.after(() => mem.close());
  return { dir, root, env, mem };
}

test('every method against a temp memory', async (t) => {
  const { root, mem } = setup(t);
  assert.equal(mem.pid, undefined, 'started before the first call');
  assert.match(await mem.context(), /^## Core memory \(core\.md\)/);
  assert.ok(existsSync(join(root, 'core.md')), 'memdir mcp creates the memory folder');

  assert.equal(
    await mem.write('notes/coffee.md', '---\nname: coffee\ndescription: how the user takes coffee\n---\nBlack, no sugar. See [[tea]].\n', { reason: 'user said so' }),
    'wrote notes/coffee.md (5 lines, 90 bytes)',
  );
  await mem.write('notes/tea.md', '---\nname: tea\ndescription: tea\n---\nGreen tea in the afternoon.\n');
  assert.equal(await mem.read('coffee'), readFileSync(join(root, 'notes/coffee.md'), 'utf8'));
  assert.equal(await mem.read('notes/coffee.md', { start_line: 5, end_line: 5 }), 'Black, no sugar. See [[tea]].\n[notes/coffee.md: showed lines 5-5 of 5]');
  assert.equal(await mem.search('sugar'), 'notes/coffee.md:5:Black, no sugar. See [[tea]].');
  assert.match(await mem.search('green tea afternoon', { mode: 'ranked', limit: 1 }), /^notes\/tea\.md:5:/);
  assert.match(await mem.search('s.gar', { regex: true, path: 'notes/**' }), /^notes\/coffee\.md:5:/);
  assert.match(await mem.search('nothing-like-this-anywhere'), /^no matches/);
  assert.equal((await mem.links('coffee')).split('\n')[1], '- depth 1 (linked from notes/coffee.md): notes/tea.md (tea) — tea');
  assert.equal(await mem.edit('notes/coffee.md', { old: 'no sugar', new: 'one sugar' }), 'edited notes/coffee.md: replaced the one occurrence');
  assert.equal(await mem.edit('notes/coffee.md', { append: '- decaf after 4pm' }), 'edited notes/coffee.md: appended 1 line');
  assert.match(readFileSync(join(root, 'notes/coffee.md'), 'utf8'), /one sugar[^]*- decaf after 4pm\n$/);
  assert.equal(await mem.log('chose PostgreSQL over SQLite'), 'logged to log/2026-11-30.md: - 09:15 chose PostgreSQL over SQLite');
  assert.match(await mem.scratch('deploy-plan', 'step 1: tag', { ttl: '2h' }), /-deploy-plan\.md; it shows in memory_context until it expires \(ttl 2h\)$/);
  assert.match(await mem.context(), /step 1: tag/);
  assert.match(await mem.offload('line\n'.repeat(500), { label: 'long output' }), /^offloaded 2500 bytes \(500 lines\) to offload\/2026-11-30\/091500-long-output\.md\n/);
  assert.match(await mem.recent({ since: 'today' }), /^changes \(history\), newest first:\n/);
  assert.equal(await mem.memory({ command: 'create', path: '/memories/todo.txt', file_text: 'a\nb\n' }), 'File created successfully at: /memories/todo.txt');
  assert.equal(await mem.memory({ command: 'view', path: '/memories/todo.txt' }), "Here's the content of /memories/todo.txt with line numbers:\n     1\ta\n     2\tb");
  const names = (await mem.listTools()).map((t) => t.name);
  assert.deepEqual(names.slice(0, 2), ['memory_context', 'memory_search']);
  assert.equal(mem.starts, 1);
});

test('refusals carry the tool’s own text', async (t) => {
  const { root, env, mem } = setup(t);
  await mem.context();
  const cases = [
    ['memory_write', { path: '../outside.md', content: 'x' }],
    ['memory_read', { path: 'notes/missing.md' }],
    ['memory_edit', { path: 'core.md', old: 'no such text anywhere', new: 'x' }],
    ['memory', { command: 'create', path: '/etc/passwd', file_text: 'x' }],
    ['memory_search', { pattern: 'x', mode: 'sideways' }],
  ];
  for (const [tool, args] of cases) {
    const err = await mem.call(tool, args).then(
      () => assert.fail(`${tool} did not refuse`),
      (e) => e,
    );
    assert.ok(err instanceof MemdirError);
    const cli = runMemdir(['--root', root, 'tool', tool], env, JSON.stringify(args));
    assert.equal(cli.code, 1);
    assert.equal(err.text, cli.stdout.replace(/\n$/, ''));
    assert.equal(err.tool, tool);
  }
  assert.ok(!existsSync(join(root, '..', 'outside.md')));
  await assert.rejects(mem.call('memory_nope', {}), (e) => e instanceof MemdirError && /memory_nope/.test(e.text));
  assert.match(await mem.log('still here'), /^logged/);
  assert.equal(mem.starts, 1);
});

test('gates answer allowed, denied and pending', async (t) => {
  const { root, mem } = setup(t);
  await mem.context();
  writeFileSync(join(root, 'gates.toml'), POLICY);
  const allowed = await mem.gateRequest('payment', 'landlord', 'rent', { amount: 40 });
  assert.equal(allowed.decision, 'allowed');
  assert.match(allowed.token, /^gt_/);
  const denied = await mem.gateRequest('payment', 'mallory', 'x', { amount: 1 });
  assert.equal(denied.decision, 'denied');
  assert.match(denied.rule, /^targets:/);
  const pending = await mem.gateRequest('payment', 'acme-power', 'bill', { amount: '60' });
  assert.equal(pending.decision, 'pending');
  assert.deepEqual(await mem.gateStatus(pending.id), { decision: 'pending', id: pending.id });
  await assert.rejects(mem.gateRequest('payment', 'landlord', 'x', { amount: 'lots' }), /amount/);
});

test('a dead child is started again; close ends it', async (t) => {
  const { root, mem } = setup(t);
  await mem.log('first');
  const first = mem.pid;
  process.kill(first, 'SIGKILL');
  while (mem.pid !== undefined) await new Promise((r) => setTimeout(r, 10));
  assert.match(await mem.log('second'), /^logged/);
  assert.equal(mem.starts, 2);
  assert.notEqual(mem.pid, first);
  assert.match(readFileSync(join(root, 'log/2026-11-30.md'), 'utf8'), /second/);
  const pid = mem.pid;
  await mem.close();
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  await assert.rejects(mem.context(), /closed/);
});

test('calls in flight at once share one child, and 1,000 searches start one process', async (t) => {
  const { mem } = setup(t);
  await mem.write('notes/a.md', 'alpha beta gamma\n');
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => mem.log(`entry ${i}`)));
  assert.ok(answers.every((a) => a.startsWith('logged')));
  for (let i = 0; i < 1000; i++) assert.match(await mem.search('beta'), /^notes\/a\.md:1:/);
  assert.equal(mem.starts, 1);
});

test('a bad store or binary says why', async (t) => {
  const dir = tempDir(t);
  const bad = new Memory({ store: 'postgres://127.0.0.1:1/nope?tenant=a b', binary: BIN, env: childEnv(dir) });
  await assert.rejects(bad.context(), (e) => e instanceof MemdirError && /^memdir mcp exited with code 2: memdir: bad tenant/.test(e.text));
  const missing = new Memory({ root: join(dir, 'm'), binary: join(dir, 'no-such-memdir') });
  await assert.rejects(missing.context(), (e) => e instanceof MemdirError && /cannot start/.test(e.text));
});

test('a script that forgets close() still exits', async (t) => {
  const dir = tempDir(t);
  const script = join(dir, 'forget.mjs');
  const index = new URL('../dist/index.js', import.meta.url).href;
  writeFileSync(script, `import { Memory } from ${JSON.stringify(index)};
const mem = new Memory({ root: ${JSON.stringify(join(dir, 'm'))}, binary: ${JSON.stringify(BIN)} });
console.log(await mem.log('bye'));\n`);
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...childEnv(dir) } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^logged to log\/2026-11-30\.md/);
});
