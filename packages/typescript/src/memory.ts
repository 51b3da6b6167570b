/**
 * `Memory`: memdir's tools over one long-lived `memdir mcp` child process.
 *
 * The child speaks MCP over stdin/stdout, one JSON-RPC message per line. It is started on the
 * first call (with the `initialize` handshake), reused by every call after it, started again
 * when it has died, and ended by {@link Memory.close}. While no call is in flight the child
 * does not keep Node's event loop alive, so a script that forgets `close()` still exits.
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { MemdirError, Tools, type ToolAnswer } from './tools.js';

/** The MCP revision this client speaks (the handshake-based one memdir serves). */
export const PROTOCOL_VERSION = '2025-11-25';

/** The options of {@link Memory}. */
export interface MemoryOptions {
  /** The memory folder (created with its layout if it does not exist). */
  root?: string;
  /** Or where the memory lives: a folder, or `postgres://HOST/DB?tenant=NAME`. */
  store?: string;
  /** The `memdir` binary; default `$MEMDIR_BIN`, else `memdir` on PATH. */
  binary?: string;
  /** Who is writing, recorded in history. */
  writer?: string;
  /** The provenance label of changes: agent (the default of `memdir mcp`), user or external. */
  source?: string;
  /** Extra environment variables for the child, over this process's environment. */
  env?: Record<string, string>;
  /** Milliseconds to wait for one answer before the child is ended; default: no limit. */
  timeoutMs?: number;
}

/** The `memdir` binary: `binary`, else `$MEMDIR_BIN`, else the first `memdir` on PATH. */
export function findMemdirBin(binary?: string): string {
  if (binary) return binary;
  if (process.env.MEMDIR_BIN) return process.env.MEMDIR_BIN;
  const exe = process.platform === 'win32' ? 'memdir.exe' : 'memdir';
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, exe))) return join(dir, exe);
  }
  throw new MemdirError(
    'memdir binary not found: pip install memdir (or cargo install memdir-cli) so memdir is on PATH, or pass binary',
  );
}

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
  method: string;
}

/** One running `memdir mcp`. */
class Child {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly pending = new Map<number, Pending>();
  readonly stderr: string[] = [];
  exited: Promise<void>;
  dead = false;
  code: number | null = null;
  private nextId = 1;

  constructor(argv: string[], env: NodeJS.ProcessEnv) {
    this.proc = spawn(argv[0]!, argv.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => {
      this.proc.on('error', (e) => {
        this.stderr.push(`cannot start ${argv[0]}: ${e.message}`);
        this.die(null);
        resolve();
      });
      this.proc.on('close', (code) => {
        this.die(code);
        resolve();
      });
    });
    // A write to a child that died is an EPIPE: the exit handler answers the pending calls.
    this.proc.stdin.on('error', () => {});
    createInterface({ input: this.proc.stdout }).on('line', (line) => this.onLine(line));
    createInterface({ input: this.proc.stderr }).on('line', (line) => {
      this.stderr.push(line);
      if (this.stderr.length > 20) this.stderr.shift();
    });
    this.idle();
  }

  /** Whether the event loop waits for this child: only while a call is in flight. */
  private idle(): void {
    if (this.pending.size === 0) {
      this.proc.unref();
      (this.proc.stdout as unknown as { unref?: () => void }).unref?.();
      (this.proc.stderr as unknown as { unref?: () => void }).unref?.();
      (this.proc.stdin as unknown as { unref?: () => void }).unref?.();
    }
  }

  private busy(): void {
    this.proc.ref();
    (this.proc.stdout as unknown as { ref?: () => void }).ref?.();
  }

  why(): string {
    const what = `memdir mcp exited${this.code !== null ? ` with code ${this.code}` : ''}`;
    const tail = this.stderr.filter((l) => l.trim()).join('; ');
    return tail ? `${what}: ${tail}` : what;
  }

  private die(code: number | null): void {
    if (this.dead) return;
    this.dead = true;
    this.code = code;
    // stderr may still hold the reason: read what is left before answering the calls.
    setImmediate(() => {
      for (const [, p] of this.pending) {
        if (p.timer) clearTimeout(p.timer);
        p.reject(new MemdirError(`${this.why()} (while answering ${p.method})`));
      }
      this.pending.clear();
    });
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.stderr.push(`stdout: ${line}`);
      return;
    }
    if (typeof msg.method === 'string') {
      if (msg.id !== undefined) {
        const reply =
          msg.method === 'ping' ?
            { jsonrpc: '2.0', id: msg.id, result: {} }
          : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } };
        this.write(reply);
      }
      return;
    }
    const p = typeof msg.id === 'number' ? this.pending.get(msg.id) : undefined;
    if (!p) return;
    this.pending.delete(msg.id as number);
    if (p.timer) clearTimeout(p.timer);
    this.idle();
    if (msg.error !== undefined) {
      const e = msg.error as { message?: unknown };
      p.reject(new MemdirError(String(e?.message ?? JSON.stringify(msg.error))));
    } else {
      const r = msg.result;
      p.resolve(r && typeof r === 'object' ? (r as Record<string, unknown>) : {});
    }
  }

  write(message: unknown): void {
    this.proc.stdin.write(JSON.stringify(message) + '\n');
  }

  request(method: string, params: unknown, timeoutMs: number | undefined, onTimeout: () => void): Promise<Record<string, unknown>> {
    if (this.dead) return Promise.reject(new MemdirError(this.why()));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined ? undefined : (
          setTimeout(() => {
            this.pending.delete(id);
            onTimeout();
            reject(new MemdirError(`memdir mcp did not answer ${method} within ${timeoutMs} ms; it was ended`));
          }, timeoutMs)
        );
      this.pending.set(id, { resolve, reject, timer, method });
      this.busy();
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string): void {
    this.write({ jsonrpc: '2.0', method });
  }

  async close(graceMs = 5000): Promise<void> {
    if (!this.dead) {
      this.proc.ref();
      this.proc.stdin.end();
      const timer = setTimeout(() => this.proc.kill('SIGTERM'), graceMs);
      const kill = setTimeout(() => this.proc.kill('SIGKILL'), graceMs * 2);
      await this.exited;
      clearTimeout(timer);
      clearTimeout(kill);
    }
  }
}

/**
 * memdir's tools on one memory, through one long-lived `memdir mcp` child process.
 *
 * ```ts
 * const mem = new Memory({ root: './agent-memory' });
 * await mem.log('deployed v2 to staging');
 * console.log(await mem.search('deployed'));
 * await mem.close();
 * ```
 */
export class Memory extends Tools {
  private readonly argv: string[];
  private readonly env: NodeJS.ProcessEnv;
  private readonly timeoutMs: number | undefined;
  private child: Child | undefined;
  private starting: Promise<Child> | undefined;
  private closed = false;
  /** How many `memdir mcp` processes this object has started. */
  starts = 0;
  /** What the server said about itself in the handshake. */
  serverInfo: Record<string, unknown> = {};

  constructor(options: MemoryOptions = {}) {
    super();
    if (options.root !== undefined && options.store !== undefined) throw new TypeError('give root or store, not both');
    const flags: string[] = [];
    if (options.root !== undefined) flags.push('--root', options.root);
    if (options.store !== undefined) flags.push('--store', options.store);
    if (options.writer !== undefined) flags.push('--writer', options.writer);
    if (options.source !== undefined) flags.push('--source', options.source);
    this.argv = [options.binary ?? '', ...flags, 'mcp'];
    this.env = { ...process.env, ...(options.env ?? {}) };
    this.timeoutMs = options.timeoutMs;
  }

  /** The running child's process id, or undefined before the first call and after close. */
  get pid(): number | undefined {
    return this.child && !this.child.dead ? this.child.proc.pid : undefined;
  }

  private async ensure(): Promise<Child> {
    if (this.closed) throw new MemdirError('this Memory is closed');
    if (this.child && !this.child.dead) return this.child;
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<Child> {
    const argv = [findMemdirBin(this.argv[0] || undefined), ...this.argv.slice(1)];
    const child = new Child(argv, this.env);
    this.starts += 1;
    this.child = child;
    try {
      this.serverInfo = await child.request(
        'initialize',
        { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'memdir-typescript', version: '0.1.0' } },
        this.timeoutMs,
        () => void child.close(0),
      );
      child.notify('notifications/initialized');
    } catch (e) {
      await child.close(1000);
      if (this.child === child) this.child = undefined;
      throw e instanceof MemdirError ? new MemdirError(child.dead ? child.why() : e.text) : e;
    }
    return child;
  }

  /** Sends one MCP request (`tools/list`, `resources/read`, ...) and resolves to its result. */
  async request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const child = await this.ensure();
    return child.request(method, params, this.timeoutMs, () => void child.close(0));
  }

  override async callRaw(tool: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const result = await this.request('tools/call', { name: tool, arguments: args });
    const content = Array.isArray(result.content) ? (result.content as Array<{ type?: string; text?: string }>) : [];
    const text = content
      .filter((c) => c?.type === 'text')
      .map((c) => c.text ?? '')
      .join('\n');
    return { text, isError: result.isError === true };
  }

  /** Every tool with its name, description, input schema and annotations. */
  async listTools(): Promise<Array<Record<string, unknown>>> {
    const result = await this.request('tools/list');
    return Array.isArray(result.tools) ? (result.tools as Array<Record<string, unknown>>) : [];
  }

  /** Ends the child process (it finishes what it was doing first); later calls reject. */
  override async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    if (child) await child.close();
  }
}
