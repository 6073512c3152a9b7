import { readFile } from "node:fs/promises";
import type { KitServer } from "../server.js";
import { Notebook } from "./domain/notebook.js";
import { createExampleMcpServer, type ExampleContext, type ExampleState } from "./mcp/server.js";

export interface ExampleOptions {
  /** Where the gate state comes from; default: purging never allowed. */
  loadState?: () => Promise<ExampleState>;
  maxAgeMs?: number;
  /** How long a gate check may take before it counts as failed. */
  gateTimeoutMs?: number;
  now?: () => number;
  notebook?: Notebook;
  log?: (line: string) => void;
}

/** Reads `{"allowPurge": true}` from a JSON file; a missing or broken file means not allowed. */
export function stateFromFile(path: string): () => Promise<ExampleState> {
  return async () => {
    try {
      const parsed = JSON.parse(await readFile(path, "utf8")) as Partial<ExampleState>;
      return { allowPurge: parsed.allowPurge === true };
    } catch {
      return { allowPurge: false };
    }
  };
}

/** The wiring: the notebook (the example's whole domain, kept in memory), its gate and the MCP server. */
export function createExampleServer(options: ExampleOptions = {}): KitServer<ExampleContext, ExampleState> {
  return createExampleMcpServer({
    context: { notebook: options.notebook ?? new Notebook() },
    gate: {
      load: options.loadState ?? (async () => ({ allowPurge: false })),
      maxAgeMs: options.maxAgeMs ?? 60_000,
      initial: { allowPurge: false },
      ...(options.gateTimeoutMs !== undefined ? { timeoutMs: options.gateTimeoutMs } : {}),
    },
    ...(options.now ? { now: options.now } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
