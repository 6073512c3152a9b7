import { defineReasons } from "../../errors.js";
import { createServer, type GateOptions, type KitServer } from "../../server.js";
import { packageVersion } from "../../version.js";
import { fail } from "./tools/diagnostics.js";
import { connectMailbag, forwardMessage, readMessage } from "./tools/mailbag.js";
import { addNote, archiveAll, getNote, listNotes, purge } from "./tools/notes.js";
import { EXAMPLE_READ, EXAMPLE_WRITE, type ExampleContext, type ExampleState } from "./tools/shared.js";

export type { ExampleContext, ExampleState } from "./tools/shared.js";

export const exampleReasons = defineReasons({
  NOT_FOUND: { hint: "Check the id against list_notes.", exitCode: 3 },
});

export const EXAMPLE_SCOPES = [EXAMPLE_READ, EXAMPLE_WRITE] as const;

/** The tools in the order tools/list shows them. */
export const exampleTools = [
  addNote,
  listNotes,
  getNote,
  readMessage,
  forwardMessage,
  connectMailbag,
  archiveAll,
  purge,
  fail,
];

export interface ExampleServerOptions {
  context: ExampleContext;
  gate: GateOptions<ExampleState>;
  now?: () => number;
  log?: (line: string) => void;
}

/** The MCP server over the notebook, its gate deciding whether purging is listed. */
export function createExampleMcpServer(
  options: ExampleServerOptions,
): KitServer<ExampleContext, ExampleState> {
  const { context } = options;
  return createServer<ExampleContext, ExampleState>({
    name: "mcpforge-example",
    version: packageVersion(import.meta.url),
    instructions: "A tiny notebook that shows every feature of the kit.",
    tools: exampleTools,
    reasons: exampleReasons,
    context: () => context,
    gate: options.gate,
    ...(options.now ? { now: options.now } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
