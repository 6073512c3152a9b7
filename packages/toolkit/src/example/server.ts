import { readFile } from "node:fs/promises";
import { defineReasons } from "../errors.js";
import { createServer, type KitServer } from "../server.js";
import { packageVersion } from "../version.js";
import { Notebook } from "./notebook.js";
import { type ExampleContext, type ExampleState, exampleTools } from "./tools.js";

export const exampleReasons = defineReasons({
  NOT_FOUND: { hint: "Check the id against list_notes.", exitCode: 3 },
});

export const EXAMPLE_SCOPES = ["example:read", "example:write"] as const;

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

export function createExampleServer(options: ExampleOptions = {}): KitServer<ExampleContext, ExampleState> {
  const notebook = options.notebook ?? new Notebook();
  return createServer<ExampleContext, ExampleState>({
    name: "mcpforge-example",
    version: packageVersion(import.meta.url),
    instructions: "A tiny notebook that shows every feature of the kit.",
    tools: exampleTools,
    reasons: exampleReasons,
    context: () => ({ notebook }),
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
