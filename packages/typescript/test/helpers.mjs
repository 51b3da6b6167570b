// Shared helpers for the package's tests: the memdir binary, a clean environment per test, a
// throwaway PostgreSQL database, a running `memdir serve`, and a stand-in Messages API.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findMemdirBin } from '../dist/index.js';

export const NOW = '2026-11-30T09:15:00Z';

/** The binary under test: $MEMDIR_BIN, else memdir on PATH. */
export const BIN = findMemdirBin();

/** A temp folder removed after the test. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'memdir-ts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Environment overrides for a memdir child: a fixed clock, UTC, a private HOME and cache. */
export function childEnv(home) {
  return {
    HOME: home,
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_STATE_HOME: join(home, 'state'),
    MEMDIR_NOW: NOW,
    TZ: 'UTC',
  };
}

/** `memdir ARGS` with `input` on stdin: { code, stdout, stderr }. */
export function runMemdir(args, env, input = '') {
  const r = spawnSync(BIN, args, { input, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A throwaway database on the test server (its URL, no tenant), or a skip with the reason. */
export function pgDatabase(t) {
  const server = process.env.MEMDIR_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432';
  const m = /^postgres(?:ql)?:\/\/(?:([^@/:]+)@)?([^/:]+)(?::(\d+))?\/?$/.exec(server);
  if (!m) throw new Error(`MEMDIR_TEST_PG is not postgres://[user@]host[:port]: ${server}`);
  const conn = ['-h', m[2], '-p', m[3] ?? '5432', '-U', m[1] ?? 'postgres'];
  const name = `memdir_nodetest_${process.pid}_${Math.random().toString(16).slice(2, 10)}`;
  const made = spawnSync('createdb', [...conn, '--template=template0', name], { encoding: 'utf8' });
  if (made.status !== 0) {
    const why = made.error ? made.error.message : made.stderr.trim();
    if (process.env.MEMDIR_REQUIRE_PG === '1') throw new Error(`PostgreSQL is required (MEMDIR_REQUIRE_PG=1): ${why}`);
    t.skip(`no PostgreSQL (${why}); set MEMDIR_REQUIRE_PG=1 to fail instead`);
    return undefined;
  }
  t.after(() => spawnSync('dropdb', [...conn, '--force', '--if-exists', name]));
  return `${server}/${name}`;
}

/** `memdir --store STORE serve` on a free loopback port; resolves to its base URL. */
export async function startService(t, store, env) {
  const proc = spawn(BIN, ['--store', store, 'serve', '--listen', '127.0.0.1:0'], {
    env: { PATH: process.env.PATH, ...env, MEMDIR_LOG: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(async () => {
    if (proc.exitCode === null) {
      const gone = new Promise((r) => proc.once('close', r));
      proc.kill('SIGTERM');
      await gone;
    }
  });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`memdir serve did not start: ${log}`)), 30_000);
    proc.stderr.on('data', (d) => {
      log += d;
      const m = /memory on (http:\/\/\S+) /.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on('close', () => reject(new Error(`memdir serve exited: ${log}`)));
  });
}

/**
 * A stand-in for the Messages API: answers POST /v1/messages with scripted turns (each tool call
 * `[name, input]` is one assistant turn, then a final text turn) and keeps every request body.
 */
export async function standIn(t, calls) {
  const responses = calls.map(([name, input], i) => ({
    id: `msg_${i}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'tool_use', id: `toolu_${String(i).padStart(3, '0')}`, name, input }],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  }));
  responses.push({
    id: `msg_${calls.length}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: 'done' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  });
  const requests = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url.startsWith('/v1/messages') || responses.length === 0) {
        res.writeHead(404).end();
        return;
      }
      requests.push(JSON.parse(body));
      const data = JSON.stringify(responses.shift());
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) }).end(data);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** The tool_result blocks the runner sent, in order: request n+1 answers turn n. */
    toolResults() {
      return requests.slice(1).flatMap((r) => {
        const last = r.messages[r.messages.length - 1];
        return last.content.filter((b) => b.type === 'tool_result');
      });
    },
  };
}

/** A service on a fresh database with tenants alice and bob: { url, tokens }. */
export async function service(t) {
  const db = pgDatabase(t);
  if (!db) return undefined;
  const env = childEnv(join(tempDir(t), 'home'));
  const tokens = {};
  for (const name of ['alice', 'bob']) {
    const r = runMemdir(['--store', db, 'tenant', 'add', name, '--principal', name], env);
    if (r.code !== 0) throw new Error(`tenant add ${name}: ${r.stderr}`);
    tokens[name] = r.stdout.trim();
  }
  return { url: await startService(t, db, env), tokens };
}

