/**
 * The tool methods both clients share, and the error they throw.
 *
 * memdir's tool layer answers every call with a text and an error flag; a refusal (a path
 * outside memory, core.md over its cap, an ambiguous edit) is an error result whose text says
 * what to do. The methods here resolve to the text of an answer and reject with
 * {@link MemdirError} carrying the text of a refusal.
 */

/** A call memdir refused or could not answer. */
export class MemdirError extends Error {
  /** memdir's own words: for a tool's error result, the result's text, verbatim. */
  readonly text: string;
  /** The tool that was called, or undefined when no tool ran (the process or connection failed). */
  readonly tool: string | undefined;
  /** The HTTP status of a {@link Service} answer, else undefined. */
  readonly status: number | undefined;

  constructor(text: string, options: { tool?: string; status?: number } = {}) {
    super(text);
    this.name = 'MemdirError';
    this.text = text;
    this.tool = options.tool;
    this.status = options.status;
  }
}

/** One tool answer: its text and whether it is an error result. */
export interface ToolAnswer {
  text: string;
  isError: boolean;
}

/** Search modes: exact lines, ranked words, or by meaning (needs an embedding model). */
export type SearchMode = 'grep' | 'ranked' | 'semantic' | 'hybrid';

/** The options of {@link Tools.search}. */
export interface SearchOptions {
  /** grep (default), ranked, semantic or hybrid. */
  mode?: SearchMode;
  /** grep mode: the pattern is a regular expression. */
  regex?: boolean;
  /** Only dated files (logs) from this day on, YYYY-MM-DD. */
  since?: string;
  /** Only dated files up to this day, YYYY-MM-DD. */
  until?: string;
  /** Only files whose path matches this glob, e.g. `notes/**`. */
  path?: string;
  /** The most result lines. */
  limit?: number;
  /** ranked, semantic and hybrid: one line per file. */
  files?: boolean;
}

/** The options of {@link Tools.edit}: one of append, prepend, section + new, or old + new. */
export interface EditOptions {
  append?: string;
  prepend?: string;
  section?: string;
  old?: string;
  new?: string;
  expected_count?: number;
  reason?: string;
}

/** A gate's answer. */
export type GateDecision =
  | { decision: 'allowed'; token: string }
  | { decision: 'denied'; rule: string }
  | { decision: 'pending'; id: string };

/** The arguments of the Anthropic memory tool's commands. */
export type MemoryCommand = { command: string; [argument: string]: unknown };

/** The arguments that were given: memdir's tools take no nulls. */
function args(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/** memdir's tools as methods. Subclasses supply {@link Tools.callRaw}. */
export abstract class Tools {
  /**
   * Calls `tool` with `args` and resolves to memdir's answer, error results included.
   * Rejects with {@link MemdirError} only when no tool answered.
   */
  abstract callRaw(tool: string, args?: Record<string, unknown>): Promise<ToolAnswer>;

  /** Releases what the client holds; a stateless client holds nothing. */
  async close(): Promise<void> {}

  /** `await using mem = new Memory(...)` closes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Calls `tool` and resolves to its text; rejects with {@link MemdirError} on a refusal. */
  async call(tool: string, args: Record<string, unknown> = {}): Promise<string> {
    const answer = await this.callRaw(tool, args);
    if (answer.isError) throw new MemdirError(answer.text, { tool });
    return answer.text;
  }

  /** What an agent should know at the start of a session. */
  context(): Promise<string> {
    return this.call('memory_context', {});
  }

  /** Lines matching `pattern`, one `path:line:text` hit per line. */
  search(pattern: string, options: SearchOptions = {}): Promise<string> {
    return this.call('memory_search', args({ pattern, ...options }));
  }

  /** A file's text or a folder's listing; `path` may be a note's name. */
  read(path: string, options: { start_line?: number; end_line?: number } = {}): Promise<string> {
    return this.call('memory_read', args({ path, ...options }));
  }

  /** A note with the notes it links to and that link to it. */
  links(name: string, options: { depth?: number } = {}): Promise<string> {
    return this.call('memory_links', args({ name, ...options }));
  }

  /** What changed, who changed it and why, newest first. */
  recent(options: { since?: string; path?: string; writer?: string; limit?: number } = {}): Promise<string> {
    return this.call('memory_recent', args({ ...options }));
  }

  /** Creates or replaces a file (core.md's cap applies). */
  write(path: string, content: string, options: { reason?: string } = {}): Promise<string> {
    return this.call('memory_write', args({ path, content, ...options }));
  }

  /** One atomic change to a file. */
  edit(path: string, options: EditOptions): Promise<string> {
    return this.call('memory_edit', args({ path, ...options }));
  }

  /** Appends `- HH:MM text` to today's log. */
  log(text: string): Promise<string> {
    return this.call('memory_log', { text });
  }

  /** A scratch note shown in the context until it expires. */
  scratch(name: string, body: string, options: { ttl?: string } = {}): Promise<string> {
    return this.call('memory_scratch', args({ name, body, ...options }));
  }

  /** Parks a large text under `offload/` and resolves to a short reference. */
  offload(content: string, options: { label?: string } = {}): Promise<string> {
    return this.call('memory_offload', args({ content, ...options }));
  }

  /** Asks the gate before an irreversible action; a denial resolves, it does not reject. */
  gateRequest(kind: string, target: string, reason: string, options: { amount?: number | string } = {}): Promise<GateDecision> {
    return this.gate('gate_request', args({ kind, target, reason, ...options }));
  }

  /** Where a pending gate request stands. */
  gateStatus(id: string): Promise<GateDecision> {
    return this.gate('gate_status', { id });
  }

  private async gate(tool: string, a: Record<string, unknown>): Promise<GateDecision> {
    const answer = await this.callRaw(tool, a);
    const first = answer.text.split('\n', 1)[0] ?? '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(first);
    } catch {
      parsed = undefined;
    }
    const d = parsed as { decision?: unknown } | undefined;
    if (d && typeof d === 'object' && (d.decision === 'allowed' || d.decision === 'denied' || d.decision === 'pending')) {
      return d as GateDecision;
    }
    throw new MemdirError(answer.isError ? answer.text : `${tool} answered something that is not a decision: ${answer.text}`, { tool });
  }

  /** The Anthropic memory tool (`memory_20250818`): view, create, str_replace, insert, delete, rename. */
  memory(command: MemoryCommand): Promise<string> {
    return this.call('memory', args({ ...command }));
  }
}
