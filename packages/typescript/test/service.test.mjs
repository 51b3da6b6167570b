// `Service` against a real `memdir serve` on PostgreSQL: the same methods as Memory, each
// tenant's token reaching its own memory, HTTP failures as MemdirError with a status.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemdirError, Service } from '../dist/index.js';
import { service } from './helpers.mjs';

test('service methods on PostgreSQL', async (t) => {
  const s = await service(t);
  if (!s) return;
  const alice = new Service(s.url, s.tokens.alice);
  assert.match(await alice.context(), /^## Core memory \(core\.md\)/);
  assert.equal(await alice.write('notes/coffee.md', '---\nname: coffee\ndescription: coffee\n---\nBlack, no sugar.\n'), 'wrote notes/coffee.md (5 lines, 58 bytes)');
  assert.equal((await alice.read('coffee')).split('\n')[4], 'Black, no sugar.');
  assert.equal(await alice.search('sugar'), 'notes/coffee.md:5:Black, no sugar.');
  assert.equal(await alice.edit('notes/coffee.md', { old: 'no sugar', new: 'one sugar' }), 'edited notes/coffee.md: replaced the one occurrence');
  assert.equal(await alice.log('deployed v2 9d1c'), 'logged to log/2026-11-30.md: - 09:15 deployed v2 9d1c');
  assert.match(await alice.scratch('plan', 'step 1', { ttl: '1h' }), /-plan\.md; it shows in memory_context/);
  assert.match(await alice.offload('x\n'.repeat(100), { label: 'dump' }), /offload\/2026-11-30\//);
  assert.match(await alice.links('coffee'), /coffee/);
  assert.match(await alice.recent(), /notes\/coffee\.md/);
  assert.match(await alice.memory({ command: 'view', path: '/memories/notes/coffee.md' }), /^Here's the content of \/memories\/notes\/coffee\.md with line numbers:\n/);
  assert.equal(new TextDecoder().decode(await alice.file('notes/coffee.md')), '---\nname: coffee\ndescription: coffee\n---\nBlack, one sugar.\n');
  await assert.rejects(alice.write('../escape.md', 'x'), (e) => e instanceof MemdirError && e.tool === 'memory_write' && e.status === undefined);

  const bob = new Service(`${s.url}/mcp`, s.tokens.bob);
  assert.match(await bob.search('9d1c'), /^no matches/);
  await assert.rejects(bob.file('notes/coffee.md'), (e) => e instanceof MemdirError && e.status === 404);
});

test('service failures say what happened', async (t) => {
  const s = await service(t);
  if (!s) return;
  await assert.rejects(new Service(s.url, 'mdt_wrong').log('x'), (e) => e.status === 401 && /bearer token/.test(e.text));
  await assert.rejects(new Service(s.url, s.tokens.alice).call('memory_nope', {}), (e) => e.status === 404 && /unknown tool/.test(e.text));
  await assert.rejects(new Service('http://127.0.0.1:9', 'x', { timeoutMs: 5000 }).log('x'), (e) => /^cannot reach the memdir service at http:\/\/127\.0\.0\.1:9/.test(e.text));
  assert.throws(() => new Service('ftp://x'), TypeError);
});
