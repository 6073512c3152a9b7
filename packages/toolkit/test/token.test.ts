import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { parseCommonFlags, parseServerArgs, readTokenFile } from "../src/cli.js";
import { connectHttp } from "../src/testing/clients.js";
import { startHttpBin } from "../src/testing/matrix.js";

const cli = fileURLToPath(new URL("../dist/example/bin/mcpforge-example.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "kit-token-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A token file with `text` and `mode` (set after writing: the umask cannot widen or narrow it). */
function tokenFile(name: string, text: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [cli, ...args], {
    encoding: "utf8",
    env: { ...process.env, MCP_HTTP_TOKEN: "", ...env },
    input: "",
    timeout: 20_000,
  });

describe("--token is refused", () => {
  it.each([["--token", "s3cret"], ["--token=s3cret"], ["--token"]])(
    "parseServerArgs(%j) throws, naming --token-file and MCP_HTTP_TOKEN",
    (...argv) => {
      for (const parse of [() => parseServerArgs(argv, {}), () => parseCommonFlags(argv)])
        expect(parse).toThrow(/--token is refused.*MCP_HTTP_TOKEN.*--token-file PATH/);
    },
  );

  it("the built bin exits non-zero with that message and never listens", () => {
    const r = run(["--http", "127.0.0.1:0", "--token", "s3cret"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--token is refused/);
    expect(r.stderr).toContain("MCP_HTTP_TOKEN");
    expect(r.stderr).toContain("--token-file");
    expect(r.stderr).not.toContain("listening on");
  });
});

describe("--token-file", () => {
  it("takes the first line, trailing whitespace trimmed", () => {
    expect(readTokenFile(tokenFile("crlf", "abc def \t\r\nsecond line\n", 0o600))).toBe("abc def");
    expect(readTokenFile(tokenFile("bare", "tok", 0o400))).toBe("tok");
  });

  it.each([0o644, 0o640, 0o604, 0o620])("refuses a file of mode %o, saying to chmod 600", (mode) => {
    const path = tokenFile(`open-${mode.toString(8)}`, "tok\n", mode);
    expect(() => readTokenFile(path)).toThrow(`chmod 600 ${path}`);
  });

  it("refuses an empty file, a blank first line, a folder, a FIFO and a missing file", () => {
    expect(() => readTokenFile(tokenFile("empty", "", 0o600))).toThrow(/is empty/);
    expect(() => readTokenFile(tokenFile("blank", "  \nlater\n", 0o600))).toThrow(/is empty/);
    const folder = join(dir, "folder");
    mkdirSync(folder, { mode: 0o700 });
    expect(() => readTokenFile(folder)).toThrow(/not a regular file/);
    expect(() => readTokenFile(join(dir, "nope"))).toThrow(/cannot be read/);
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    expect(() => readTokenFile(fifo)).toThrow(/not a regular file/);
  });

  it("the built bin refuses a 0644 token file at start and never listens", () => {
    const path = tokenFile("bin-open", "tok\n", 0o644);
    const r = run(["--http", "127.0.0.1:0", "--token-file", path]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`chmod 600 ${path}`);
    expect(r.stderr).not.toContain("listening on");
  });

  it("guards the built bin's HTTP endpoint with the file's token, in both eras", async () => {
    const path = tokenFile("good", "file-token-123\n", 0o600);
    // MCP_HTTP_TOKEN holds another token: the file is what counts.
    const { url, child } = await startHttpBin(
      { command: process.execPath, args: [cli, "--token-file", path] },
      "env-token-unused",
    );
    try {
      const post = (authorization?: string) =>
        fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
        });
      expect((await post()).status).toBe(401);
      expect((await post("Bearer env-token-unused")).status).toBe(401);
      expect((await post("Bearer file-token-1234")).status).toBe(401);
      for (const era of ["legacy", "modern"] as const) {
        const { client, close } = await connectHttp(url, "file-token-123", { era });
        try {
          expect(client.getProtocolEra()).toBe(era);
          const names = (await client.listTools()).tools.map((t) => t.name);
          expect(names).toContain("add_note");
          const r = await client.callTool({ name: "add_note", arguments: { text: `over ${era}` } });
          expect(r.isError).toBeFalsy();
        } finally {
          await close();
        }
      }
    } finally {
      child.kill();
    }
  });
});
