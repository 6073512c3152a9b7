/**
 * Test plumbing: a real Dovecot + daemon (chainmail's own test support, by relative path), our MCP
 * server over a DaemonClient of kind "mcp", and a real SDK client connected in memory.
 */
import { DaemonClient } from "@mcpforge/chainmail";
import type { Client } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { connectInMemory } from "@mcpforge/toolkit/testing";
import { expect } from "vitest";
import { type MailEnv, type PolicyOpts, startMailEnv } from "../../chainmail/test/support/mailenv.js";
import { type ChainmailMcpOptions, createChainmailMcpServer } from "../src/index.js";

export { generateCorpus, INJECTION_TEXT } from "../../chainmail/test/support/corpus.js";
export type { MailEnv, PolicyOpts };

export interface McpEnv {
  env: MailEnv;
  daemonClient: DaemonClient;
  client: Client;
  kit: ReturnType<typeof createChainmailMcpServer>;
  close(): Promise<void>;
}

export async function startMcpEnv(
  policy: PolicyOpts = {},
  options: Omit<ChainmailMcpOptions, "client"> = {},
  onToolsChanged?: () => void,
): Promise<McpEnv> {
  const env = await startMailEnv(policy);
  const daemonClient = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
  const kit = createChainmailMcpServer({ client: daemonClient, log: () => undefined, ...options });
  const conn = await connectInMemory(kit, { scopes: [] }, onToolsChanged ? { onToolsChanged } : {});
  return {
    env,
    daemonClient,
    client: conn.client,
    kit,
    close: async () => {
      await conn.close();
      daemonClient.close();
      await env.stop();
    },
  };
}

export type Json = Record<string, unknown>;

/** Calls a tool through the SDK client (which validates structured content against outputSchema). */
export async function call(client: Client, name: string, args: Json = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A successful call's structured content; fails the test with the error body otherwise. */
export async function ok<T = Json>(client: Client, name: string, args: Json = {}): Promise<T> {
  const res = await call(client, name, args);
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.structuredContent)}`);
  return res.structuredContent as T;
}

/** A failed call's error body, checked for the kit's shape. */
export async function fails(client: Client, name: string, args: Json = {}) {
  const res = await call(client, name, args);
  expect(res.isError, `${name} should fail: ${JSON.stringify(res.structuredContent)}`).toBe(true);
  const error = (res.structuredContent as { error: { reason: string; message: string; hint: string } }).error;
  expect(typeof error.message).toBe("string");
  expect(typeof error.hint).toBe("string");
  return error;
}

export const isUntrusted = (v: unknown): v is { untrusted: string } =>
  typeof v === "object" &&
  v !== null &&
  Object.keys(v).length === 1 &&
  typeof (v as { untrusted?: unknown }).untrusted === "string";

export const u = (text: string) => ({ untrusted: text });
