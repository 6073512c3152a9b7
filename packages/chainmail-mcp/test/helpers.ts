/**
 * Test plumbing: a real Dovecot + daemon (@mcpforge/chainmail/testing), our MCP server over a
 * DaemonClient of kind "mcp", and a real SDK client connected in memory, with the kit's session
 * (ok / fails / raw) over it.
 */
import { DaemonClient } from "@mcpforge/chainmail";
import { type MailEnv, type PolicyOpts, startMailEnv } from "@mcpforge/chainmail/testing";
import { connectInMemory, type Session, session } from "@mcpforge/toolkit/testing";
import type { Client } from "@modelcontextprotocol/client";
import { type ChainmailMcpOptions, createChainmailMcpServer } from "../src/index.js";

export { generateCorpus, INJECTION_TEXT } from "@mcpforge/chainmail/testing";
export type { MailEnv, PolicyOpts };

export interface McpEnv {
  env: MailEnv;
  daemonClient: DaemonClient;
  client: Client;
  /** Tool calls through `client`, which checks each result against the tool's output schema. */
  tools: Session;
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
  const kit = createChainmailMcpServer({
    client: daemonClient,
    home: env.home,
    log: () => undefined,
    ...options,
  });
  const conn = await connectInMemory(kit, { scopes: [] }, onToolsChanged ? { onToolsChanged } : {});
  return {
    env,
    daemonClient,
    client: conn.client,
    tools: session(conn.client),
    kit,
    close: async () => {
      await conn.close();
      daemonClient.close();
      await env.stop();
    },
  };
}

export type Json = Record<string, unknown>;

export const isUntrusted = (v: unknown): v is { untrusted: string } =>
  typeof v === "object" &&
  v !== null &&
  Object.keys(v).length === 1 &&
  typeof (v as { untrusted?: unknown }).untrusted === "string";

export const u = (text: string) => ({ untrusted: text });
