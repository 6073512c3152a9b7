import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import {
  Client,
  type ElicitRequest,
  type ElicitResult,
  InMemoryTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Caller } from "../define.js";
import { createKitHttpHandler } from "../http/handler.js";
import type { AnyKit } from "../server.js";

/** The protocol revision a connection speaks: the 2025 `initialize` era, or 2026-07-28. */
export type Era = "legacy" | "modern";

/** The current revision: no initialize, no sessions, an envelope on every request. */
export const MODERN_REVISION = "2026-07-28";

export interface Connected {
  client: Client;
  close(): Promise<void>;
}

export interface ClientOptions {
  era?: Era;
  clientName?: string;
  /**
   * Called when the server says its tools changed, in the way the connection's era provides:
   * `notifications/tools/list_changed` (2025) or a `subscriptions/listen` stream (2026-07-28).
   */
  onToolsChanged?: () => void;
  /** Answer the server's questions (elicitation) as a person would; without it the client declares no elicitation. */
  elicitation?: Elicitation;
}

/** A client's side of elicitation: the modes it declares and how the "person" answers. */
export interface Elicitation {
  /** The modes declared in `capabilities.elicitation` (`{form: {}}`, `{url: {}}`). */
  modes: readonly ("form" | "url")[];
  /** The person's answer to one `elicitation/create` (2025) or embedded request (2026-07-28). */
  answer: (params: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
  /** Hears `notifications/elicitation/complete` (2025-11-25, URL mode). */
  onComplete?: (elicitationId: string) => void;
}

/** `capabilities.elicitation` for the modes given. */
export function elicitationCapability(modes: readonly ("form" | "url")[]): {
  form?: Record<string, never>;
  url?: Record<string, never>;
} {
  return Object.fromEntries(modes.map((m) => [m, {}]));
}

/** A v2 SDK client pinned to one era; legacy is the SDK's default handshake. */
export function newClient(options: ClientOptions = {}): Client {
  const { era = "legacy", clientName = "mcpforge-test", onToolsChanged, elicitation } = options;
  const client = new Client(
    { name: clientName, version: "0.0.0" },
    {
      ...(elicitation ? { capabilities: { elicitation: elicitationCapability(elicitation.modes) } } : {}),
      ...(era === "modern" ? { versionNegotiation: { mode: { pin: MODERN_REVISION } } } : {}),
      ...(onToolsChanged
        ? {
            listChanged: {
              tools: { debounceMs: 0, autoRefresh: false, onChanged: () => onToolsChanged() },
            },
          }
        : {}),
    },
  );
  if (elicitation) {
    // The same handler answers a 2025 server's elicitation/create and, on 2026-07-28, the SDK's
    // driver fulfilling an input_required result before it retries the call.
    client.setRequestHandler("elicitation/create", async (request) => elicitation.answer(request.params));
    const { onComplete } = elicitation;
    if (onComplete) {
      client.setNotificationHandler("notifications/elicitation/complete", (n) =>
        onComplete(n.params.elicitationId),
      );
    }
  }
  return client;
}

/**
 * A real SDK client talking to a kit server in process. The 2025 era rides the SDK's in-memory pair;
 * the 2026-07-28 era (which has no in-memory entry) rides the kit's own HTTP handler through a
 * `fetch` that never touches a socket. `caller` is who the server sees.
 */
export async function connectInMemory(
  kit: AnyKit,
  caller: Caller,
  options: ClientOptions | string = {},
): Promise<Connected> {
  const opts = typeof options === "string" ? { clientName: options } : options;
  const client = newClient(opts);
  if (opts.era === "modern") {
    const handler = createKitHttpHandler(kit, { caller, allowedHosts: ["kit.test"], log: () => undefined });
    const transport = new StreamableHTTPClientTransport(new URL("http://kit.test/mcp"), {
      fetch: (url, init) => handler.fetch(new Request(url, init)),
    });
    await client.connect(transport);
    return {
      client,
      close: async () => {
        await client.close();
        await handler.close();
      },
    };
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await kit.ready();
  const server = kit.protocolInstance(caller, { listening: true });
  await server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

export interface StdioSpawn {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** A real SDK client talking to a spawned server process over stdio, in the era asked for. */
export async function connectStdio(
  spawn: StdioSpawn,
  options: ClientOptions = {},
): Promise<Connected & { stderr: () => string }> {
  let stderr = "";
  const transport = new StdioClientTransport({
    command: spawn.command,
    args: spawn.args ?? [],
    env: { ...(process.env as Record<string, string>), ...(spawn.env ?? {}) },
    ...(spawn.cwd ? { cwd: spawn.cwd } : {}),
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = newClient(options);
  await client.connect(transport);
  return { client, close: () => client.close(), stderr: () => stderr };
}

/** A real SDK client talking to a server's Streamable HTTP endpoint, with a bearer token. */
export async function connectHttp(
  url: string,
  token: string | undefined,
  options: ClientOptions = {},
): Promise<Connected> {
  const client = newClient(options);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/** The MCP Inspector CLI's entry point, resolved from wherever it is installed. */
export function inspectorCliPath(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/inspector-cli/package.json");
  return pkg.replace(/package\.json$/, "build/cli.js");
}

/**
 * Runs the MCP Inspector CLI (a third-party, 2025-era client) against a stdio server and returns its
 * parsed JSON output. Its exit code is 0 even for isError results, so callers assert on the JSON.
 *
 * Inspector CLI 1.0.3 finds its own package.json by testing `../package.json` against the working
 * directory, so it runs from its own build folder: give the server's paths as absolute paths.
 */
export function runInspector(
  server: StdioSpawn,
  methodArgs: string[],
  timeoutMs = 60_000,
): Promise<{ json: unknown; stdout: string; stderr: string }> {
  const args = [inspectorCliPath(), "--cli", server.command, ...(server.args ?? []), ...methodArgs];
  return runInspectorArgs(args, server.env, timeoutMs);
}

/** The Inspector CLI against a Streamable HTTP endpoint (`--transport http`), with a bearer token. */
export function runInspectorHttp(
  url: string,
  token: string | undefined,
  methodArgs: string[],
  timeoutMs = 60_000,
): Promise<{ json: unknown; stdout: string; stderr: string }> {
  const auth = token ? ["--header", `Authorization: Bearer ${token}`] : [];
  const args = [inspectorCliPath(), "--cli", url, "--transport", "http", ...auth, ...methodArgs];
  return runInspectorArgs(args, undefined, timeoutMs);
}

function runInspectorArgs(
  args: string[],
  env: Record<string, string> | undefined,
  timeoutMs: number,
): Promise<{ json: unknown; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      {
        env: { ...process.env, ...(env ?? {}) },
        cwd: dirname(inspectorCliPath()),
        timeout: timeoutMs,
        maxBuffer: 64 << 20,
      },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`inspector failed: ${err.message}\n${stderr}`));
        try {
          resolve({ json: JSON.parse(stdout), stdout, stderr });
        } catch {
          reject(new Error(`inspector printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}
