import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { answer, input, output, summaryOf, TOOL_NAME } from "./tool-data.js";

/**
 * The baseline: the same tool registered directly on the v2 SDK's McpServer, answering with the
 * kit's result shape (summary, blank line, JSON; the same structured content). One instance per
 * call of this factory, as the SDK's serving entries expect.
 */
export function createBaselineServer(): McpServer {
  const server = new McpServer({ name: "bench-sdk", version: "0.0.0" });
  server.registerTool(
    TOOL_NAME,
    {
      title: "Search",
      description: "Searches.",
      inputSchema: z.strictObject(input),
      outputSchema: z.object(output),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ query, limit }) => {
      const result = answer(query, limit);
      return {
        content: [{ type: "text", text: `${summaryOf(result)}\n\n${JSON.stringify(result)}` }],
        structuredContent: { ...result },
      };
    },
  );
  return server;
}
