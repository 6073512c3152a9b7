import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, EXAMPLE_CLI, ensureKitBuilt, exampleCommand, openGate, readTree, tempDir } from "./helpers.js";

const TOKEN = "reference-gen-test-token";

/** Starts the example server on Streamable HTTP (a free port on 127.0.0.1) and returns its URL. */
function startHttp(gateFile: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [EXAMPLE_CLI, "--output-schemas", "--http", "127.0.0.1:0", "--gate-file", gateFile],
    {
      env: { ...process.env, MCP_HTTP_TOKEN: TOKEN },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
}

describe("--url: a Streamable HTTP server", () => {
  const tmp = tempDir("http");
  let server: { child: ChildProcess; url: string };
  let gate: string;

  beforeAll(async () => {
    ensureKitBuilt();
    gate = openGate(tmp.path);
    server = await startHttp(gate);
  });
  afterAll(() => {
    server?.child.kill();
    tmp.remove();
  });

  it("reads the same tools as over stdio when given the bearer token", async () => {
    const viaHttp = join(tmp.path, "http");
    const r = await cli([
      "--url",
      server.url,
      "--header",
      `Authorization: Bearer ${TOKEN}`,
      "--out",
      viaHttp,
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const viaStdio = join(tmp.path, "stdio");
    expect((await cli(["--server", exampleCommand(gate), "--out", viaStdio])).code).toBe(0);
    expect(readTree(viaHttp)).toEqual(readTree(viaStdio));
    expect(readTree(viaHttp).get("purge.mdx")).toContain("| Notes | Destructive | `purge` |");
  }, 120_000);

  it("exits 2 naming the URL when the server refuses the request (no token)", async () => {
    const r = await cli(["--url", server.url, "--out", join(tmp.path, "denied")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Could not connect to ${server.url}`);
    expect(r.stderr).toMatch(/401|Unauthorized|invalid_token/i);
  });

  it("exits 2 when nothing listens at the URL", async () => {
    const r = await cli([
      "--url",
      "http://127.0.0.1:9/mcp",
      "--out",
      join(tmp.path, "nothing"),
      "--timeout",
      "5000",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Could not connect to http://127.0.0.1:9/mcp");
  });
});
