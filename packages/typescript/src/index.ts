/**
 * memdir: long-term memory for AI agents, as plain files.
 *
 * Two clients with one set of methods, one per memdir tool:
 * - {@link Memory} reaches a memory folder (or a PostgreSQL tenant) through one long-lived
 *   `memdir mcp` child process (the `memdir` binary on PATH, or given);
 * - {@link Service} reaches a tenant of a `memdir serve` service over its REST API.
 *
 * Both resolve to the tool's text and reject with {@link MemdirError} carrying the tool's own
 * text when memdir refuses. `memdir/anthropic` plugs memdir into `@anthropic-ai/sdk`'s tool
 * runner.
 *
 * @module
 */

export { MemdirError, Tools } from './tools.js';
export type { EditOptions, GateDecision, MemoryCommand, SearchMode, SearchOptions, ToolAnswer } from './tools.js';
export { Memory, PROTOCOL_VERSION, findMemdirBin } from './memory.js';
export type { MemoryOptions } from './memory.js';
export { Service } from './service.js';
export type { ServiceOptions } from './service.js';
