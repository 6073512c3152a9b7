import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Caller } from "../define.js";
import type { KitServer } from "../server.js";

export interface Connected {
  client: Client;
  close(): Promise<void>;
}

/** A real SDK client talking to a kit server over the SDK's in-memory transport pair. */
export async function connectInMemory(
  // biome-ignore lint/suspicious/noExplicitAny: any server
  kit: KitServer<any, any>,
  caller: Caller,
  clientName = "mcpforge-test",
): Promise<Connected> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = await kit.connect(serverSide, caller);
  const client = new Client({ name: clientName, version: "0.0.0" });
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

/** A real SDK client talking to a spawned server process over stdio. */
export async function connectStdio(spawn: StdioSpawn): Promise<Connected & { stderr: () => string }> {
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
  const client = new Client({ name: "mcpforge-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close(), stderr: () => stderr };
}

/** The MCP Inspector CLI's entry point, resolved from wherever it is installed. */
export function inspectorCliPath(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/inspector-cli/package.json");
  return pkg.replace(/package\.json$/, "build/cli.js");
}

/**
 * Runs the MCP Inspector CLI (a third-party client) against a stdio server and returns its parsed
 * JSON output. Its exit code is 0 even for isError results, so callers assert on the JSON.
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
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      {
        env: { ...process.env, ...(server.env ?? {}) },
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
