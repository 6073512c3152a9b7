import { z } from "zod";
import { toolFactory } from "../src/define.js";
import { defineReasons } from "../src/errors.js";
import { createServer, type ServerDefinition } from "../src/server.js";

export const reasons = defineReasons({ NOT_FOUND: { hint: "Look it up first.", exitCode: 3 } });

export const tool = toolFactory<{ greeting: string }>();

export const echo = tool({
  name: "echo",
  title: "Echo",
  group: "Test",
  description: "Echoes text back.",
  scope: null,
  input: { text: z.string().min(1).max(10).describe("Text to echo") },
  output: { text: z.string() },
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  summary: (r) => `Echoed ${r.text.length} characters`,
  handler: ({ text }, { ctx }) => ({ text: `${ctx.greeting}${text}` }),
});

/** A server of the given tools with sensible defaults; logs are captured, not printed. */
export function serverOf(
  tools: ServerDefinition<{ greeting: string }>["tools"],
  extra: Partial<ServerDefinition<{ greeting: string }>> = {},
) {
  const logs: string[] = [];
  const kit = createServer<{ greeting: string }>({
    name: "test",
    version: "1.0.0",
    tools,
    reasons,
    context: () => ({ greeting: "" }),
    log: (line) => logs.push(line),
    ...extra,
  });
  return { kit, logs };
}

export const anyScopes = { scopes: ["example:read", "example:write"] };

export function textOf(result: unknown): string {
  const content = (result as { content: unknown }).content as { type: string; text: string }[];
  return content.map((c) => c.text).join("\n");
}

export { z };

/**
 * The 2025 era's handshake over a raw stdio pipe: `initialize`, its answer (`answered` resolves once
 * the server has written it), then `notifications/initialized`. Nothing for the 2026-07-28 era.
 */
export async function legacyHandshake(
  send: (message: Record<string, unknown>) => void,
  answered: () => Promise<unknown>,
): Promise<void> {
  send({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  });
  await answered();
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
}
