/**
 * `Service`: memdir's tools over a `memdir serve` service's REST API, with `fetch`.
 *
 * `POST {url}/v1/tools/{name}` with the tool's arguments as the JSON body answers
 * `{"text": ..., "is_error": ...}`, the same text as `memdir tool`; `GET {url}/v1/files/{path}`
 * answers a file's bytes. The bearer token picks the tenant.
 */

import { MemdirError, Tools, type ToolAnswer } from './tools.js';

/** The options of {@link Service}. */
export interface ServiceOptions {
  /** Milliseconds to wait for one answer (default 60 s). */
  timeoutMs?: number;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * memdir's tools on one tenant's memory in a `memdir serve` service.
 *
 * ```ts
 * const svc = new Service('http://127.0.0.1:8707', token);
 * await svc.log('deployed v2');
 * ```
 */
export class Service extends Tools {
  /** The service's base URL, without a trailing `/` or `/mcp`. */
  readonly url: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(url: string, token?: string, options: ServiceOptions = {}) {
    super();
    let base = url.replace(/\/+$/, '');
    if (base.endsWith('/mcp')) base = base.slice(0, -'/mcp'.length);
    if (!/^https?:\/\//.test(base)) throw new TypeError(`not an http(s) URL: ${url}`);
    this.url = base;
    this.#token = token;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#fetch = options.fetch ?? fetch;
  }

  async #send(path: string, init: RequestInit, tool?: string): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.#token) headers.set('Authorization', `Bearer ${this.#token}`);
    let resp: Response;
    try {
      resp = await this.#fetch(`${this.url}${path}`, { ...init, headers, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
      throw new MemdirError(`cannot reach the memdir service at ${this.url}: ${cause}`, tool === undefined ? {} : { tool });
    }
    if (!resp.ok) {
      const body = await resp.text();
      let text = body.trim() || `HTTP ${resp.status} ${resp.statusText}`;
      try {
        const j = JSON.parse(body) as { text?: unknown };
        if (typeof j.text === 'string') text = j.text;
      } catch {
        // a plain-text answer (401) is its own words
      }
      const retry = resp.headers.get('Retry-After');
      if (resp.status === 429 && retry) text += ` (retry after ${retry} s)`;
      throw new MemdirError(text, tool === undefined ? { status: resp.status } : { tool, status: resp.status });
    }
    return resp;
  }

  override async callRaw(tool: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const resp = await this.#send(
      `/v1/tools/${encodeURIComponent(tool)}`,
      { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(args) },
      tool,
    );
    const answer = (await resp.json().catch(() => undefined)) as { text?: unknown; is_error?: unknown } | undefined;
    if (!answer || typeof answer.text !== 'string' || typeof answer.is_error !== 'boolean') {
      throw new MemdirError(`the service answered ${tool} with something that is not a tool result`, { tool });
    }
    return { text: answer.text, isError: answer.is_error };
  }

  /** The bytes of the file at `path` in the tenant's memory. */
  async file(path: string): Promise<Uint8Array> {
    const encoded = path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
    const resp = await this.#send(`/v1/files/${encoded}`, { method: 'GET' });
    return new Uint8Array(await resp.arrayBuffer());
  }
}
