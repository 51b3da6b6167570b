/**
 * memdir for `@anthropic-ai/sdk`'s tool runner.
 *
 * {@link memdirMemoryHandlers} are handlers for the SDK's `betaMemoryTool` helper that hand
 * every memory-tool command to memdir's `memory` tool, so the model gets memdir's answers (the
 * official strings) and memory gets memdir's path confinement, caps, provenance, history and
 * stores. A refusal is thrown as the SDK's `ToolError`, so the runner sends memdir's text with
 * `is_error: true` and nothing added. {@link memdirBetaTools} gives memdir's search and context
 * tools as SDK tools for the same runner.
 *
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { Memory } from 'memdir';
 * import { memdirMemoryTool, memdirBetaTools } from 'memdir/anthropic';
 *
 * const mem = new Memory({ root: './agent-memory' });
 * const runner = new Anthropic().beta.messages.toolRunner({
 *   model: 'claude-sonnet-4-5', max_tokens: 1024,
 *   tools: [memdirMemoryTool(mem), ...memdirBetaTools(mem)],
 *   messages: [{ role: 'user', content: 'What did we decide about retries?' }],
 * });
 * for await (const message of runner) console.log(message.content);
 * await mem.close();
 * ```
 *
 * @module
 */

import { betaMemoryTool, type MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { BetaMemoryTool20250818 } from '@anthropic-ai/sdk/resources/beta';
import type { Tools } from './tools.js';

/** memdir's answer as a tool result: its text, or a `ToolError` with the text of a refusal. */
async function answer(client: Tools, tool: string, args: Record<string, unknown>): Promise<string> {
  const a = await client.callRaw(tool, args);
  if (a.isError) throw new ToolError(a.text);
  return a.text;
}

/** Handlers for the SDK's `betaMemoryTool`: every command goes to memdir's `memory` tool. */
export function memdirMemoryHandlers(client: Tools): MemoryToolHandlers {
  const run = (command: object) => answer(client, 'memory', { ...command });
  return { view: run, create: run, str_replace: run, insert: run, delete: run, rename: run };
}

/** The SDK's `betaMemoryTool` with memdir's handlers (`extraProps`, e.g. `cache_control`, as the SDK takes them). */
export function memdirMemoryTool(client: Tools, extraProps?: Omit<BetaMemoryTool20250818, 'type' | 'name'>) {
  return betaMemoryTool(memdirMemoryHandlers(client), extraProps);
}

// memdir's own declarations of the two tools (`memdir tool --list`; a test holds them equal), so
// the model sees the same description and schema as over MCP.
const SEARCH_DESCRIPTION =
  'Finds lines in memory files. mode=grep (default) returns lines containing the pattern (case-insensitive literal; regex=true for a regular expression) in path order; mode=ranked returns the best lines for a question in natural language; there "a quoted phrase" must appear in order, -word leaves out lines with the word, and type:project, tag:billing or name:payment-retry-policy keep only notes with that frontmatter (a filter alone lists those notes). files=true returns one line per file (its best) and how many files matched, to see which notes matter before reading. Narrow with path (a glob such as log/** or notes/*.md), since/until (YYYY-MM-DD, for dated files such as logs) and limit. Results are path:line:text; open a hit with memory_read using start_line.';
const SEARCH_SCHEMA = {
  type: 'object',
  properties: {
    pattern: { type: 'string', description: 'The text, regular expression or question to look for.' },
    mode: {
      type: 'string',
      enum: ['grep', 'ranked', 'semantic', 'hybrid'],
      description:
        'grep (default): exact lines containing the pattern. ranked: best lines for a natural-language question. semantic / hybrid: by meaning (hybrid adds ranked words); they need an embedding model set up, else the call says so.',
    },
    regex: { type: 'boolean', description: 'grep mode: treat pattern as a regular expression (default false).' },
    since: { type: 'string', description: 'Only dated files (logs) from this day on, YYYY-MM-DD.' },
    until: { type: 'string', description: 'Only dated files (logs) up to this day, YYYY-MM-DD.' },
    path: { type: 'string', description: 'Only files whose path matches this glob, e.g. notes/** or log/2026-11-*.md.' },
    limit: { type: 'integer', minimum: 1, description: 'The most result lines to return (files, with files=true).' },
    files: {
      type: 'boolean',
      description:
        'ranked, semantic and hybrid modes: one result per file, its best line, and the number of files that matched (default false).',
    },
  },
  required: ['pattern'],
  additionalProperties: false,
} as const;
const CONTEXT_DESCRIPTION =
  "Returns what you should know at the start of a session: core.md, yesterday's and today's log, live scratch notes, and where the rest is. Call it first in a new session or after your context was compacted.";
const CONTEXT_SCHEMA = { type: 'object', properties: {}, additionalProperties: false } as const;

/** memdir's `memory_search` as an SDK tool on `client`'s memory. */
export function memorySearchTool(client: Tools) {
  return betaTool({
    name: 'memory_search',
    description: SEARCH_DESCRIPTION,
    inputSchema: SEARCH_SCHEMA,
    run: (args) => answer(client, 'memory_search', { ...args }),
  });
}

/** memdir's `memory_context` as an SDK tool on `client`'s memory. */
export function memoryContextTool(client: Tools) {
  return betaTool({
    name: 'memory_context',
    description: CONTEXT_DESCRIPTION,
    inputSchema: CONTEXT_SCHEMA,
    run: (args) => answer(client, 'memory_context', { ...args }),
  });
}

/** memdir's `memory_context` and `memory_search` as SDK tools, beside the memory tool. */
export function memdirBetaTools(client: Tools) {
  return [memoryContextTool(client), memorySearchTool(client)] as const;
}

/** The declarations above by tool name (for the test that holds them equal to memdir's). */
export const declarations = {
  memory_search: { description: SEARCH_DESCRIPTION, input_schema: SEARCH_SCHEMA },
  memory_context: { description: CONTEXT_DESCRIPTION, input_schema: CONTEXT_SCHEMA },
} as const;
