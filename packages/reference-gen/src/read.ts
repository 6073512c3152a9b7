import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { ListedTool, ServerInfo } from "./model.js";
import { VERSION } from "./version.js";

/** Where the tools come from: a command started over stdio, or a Streamable HTTP endpoint. */
export type Source =
  | {
      kind: "stdio";
      command: string;
      args: readonly string[];
      cwd?: string;
      env?: Record<string, string>;
      /** How messages name the server (the command line as the user wrote it). */
      label?: string;
    }
  | { kind: "http"; url: string; headers?: Record<string, string> };

export interface Listing {
  server: ServerInfo;
  tools: ListedTool[];
}

const STDERR_TAIL = 4000;
const MAX_PAGES = 1000;

/**
 * Connects as an MCP client (the official SDK, with the 2025 `initialize` handshake that every server
 * of either era answers; a probe for 2026-07-28 would cost a spawn per run and change nothing in
 * what tools/list says), reads every page of `tools/list` and disconnects.
 * Only what the server says over MCP is used; its source is never read. Fails with a message that
 * includes the end of the server's stderr, since that is usually where the reason is.
 */
export async function readTools(source: Source, timeoutMs = 30_000): Promise<Listing> {
  let stderr = "";
  const transport = makeTransport(source, (chunk) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const client = new Client({ name: "mcp-reference-gen", version: VERSION });
  const describe =
    source.kind === "stdio" ? `the server "${[source.command, ...source.args].join(" ")}"` : source.url;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  let step = "connect to";
  try {
    const work = async (): Promise<Listing> => {
      await client.connect(transport, { timeout: timeoutMs });
      const info = client.getServerVersion();
      step = "read tools/list from";
      const tools: ListedTool[] = [];
      const cursors = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
        tools.push(...(JSON.parse(JSON.stringify(result.tools)) as ListedTool[]));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
        if (cursors.has(cursor)) throw new Error(`tools/list repeated the cursor ${JSON.stringify(cursor)}`);
        cursors.add(cursor);
      }
      return { server: { name: info?.name ?? "unknown", version: info?.version ?? "unknown" }, tools };
    };
    return await Promise.race([work(), timeout]);
  } catch (err) {
    const tail = stderr.trim() === "" ? "" : `\nThe server's stderr ended with:\n${indent(stderr.trim())}`;
    throw new Error(`Could not ${step} ${describe}: ${(err as Error).message}${tail}`);
  } finally {
    clearTimeout(timer);
    if (transport instanceof StreamableHTTPClientTransport)
      await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

function makeTransport(source: Source, onStderr: (chunk: string) => void): Transport {
  if (source.kind === "http") {
    return new StreamableHTTPClientTransport(new URL(source.url), {
      requestInit: { headers: { ...(source.headers ?? {}) } },
    });
  }
  const transport = new StdioClientTransport({
    command: source.command,
    args: [...source.args],
    // The whole environment, not the SDK's safe subset: the user runs the generator on purpose and a
    // server may need its own variables (a data directory, a config path).
    env: { ...(process.env as Record<string, string>), ...(source.env ?? {}) },
    ...(source.cwd ? { cwd: source.cwd } : {}),
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => onStderr(chunk.toString()));
  return transport;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}
