import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dist = new URL("../dist/index.js", import.meta.url).href;
const packageDir = fileURLToPath(new URL("..", import.meta.url));

// Run in a fresh process: which modules a server loads at start-up is only visible from a clean slate.
const script = `
import { createRequire } from "node:module";
import { z } from "zod";
const { createServer, defineReasons, toolFactory } = await import(${JSON.stringify(dist)});
const ajvLoaded = () =>
  Object.keys(createRequire(process.cwd() + "/").cache).some((p) => /[\\\\/]node_modules[\\\\/]ajv[\\\\/]/.test(p));
const tool = toolFactory();
const kit = createServer({
  name: "t", version: "0", reasons: defineReasons({}), context: () => undefined,
  tools: [tool({
    name: "echo", title: "Echo", group: "T", description: "Echoes.", scope: null,
    input: { text: z.string().describe("Text") }, output: { text: z.string() },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    summary: () => "echoed", handler: ({ text }) => ({ text }),
  })],
});
kit.listTools();
const atStart = ajvLoaded();
const result = await kit.callTool("echo", { text: "hi" }, { scopes: [] });
process.stdout.write(JSON.stringify({ atStart, afterCall: ajvLoaded(), result: result.structuredContent }));
`;

function run(): Promise<{ atStart: boolean; afterCall: boolean; result: unknown }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { cwd: packageDir, timeout: 30_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

describe("start-up", () => {
  it("loads the output validator (ajv) on the first call, not when a server is created", async () => {
    const { atStart, afterCall, result } = await run();
    expect(atStart).toBe(false);
    expect(afterCall).toBe(true);
    expect(result).toEqual({ text: "hi" });
  });
});
