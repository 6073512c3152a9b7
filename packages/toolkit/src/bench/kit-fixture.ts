import { toolFactory } from "../define.js";
import { defineReasons } from "../errors.js";
import { createServer, type KitServer } from "../server.js";
import { answer, input, output, summaryOf, TOOL_NAME } from "./tool-data.js";

/** The bench tool declared through the kit, as a server in this repository declares its tools. */
export function createBenchKit(): KitServer<undefined> {
  const tool = toolFactory<undefined>();
  return createServer({
    name: "bench-kit",
    version: "0.0.0",
    reasons: defineReasons({}),
    context: () => undefined,
    tools: [
      tool({
        name: TOOL_NAME,
        title: "Search",
        group: "Bench",
        description: "Searches.",
        scope: null,
        input,
        output,
        annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
        summary: summaryOf,
        handler: ({ query, limit }) => answer(query, limit),
      }),
    ],
  });
}
