import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { KitStdioTransport, MAX_STDIO_LINE_BYTES, type StdioHandle, serveStdio } from "../src/stdio.js";
import { type Era, MODERN_REVISION } from "../src/testing/clients.js";
import { legacyHandshake } from "./helpers.js";

let handle: StdioHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
});

/** The per-request envelope a 2026-07-28 client puts in every request's params, as the v2 client sends it. */
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/**
 * A kit server on stdio-like pipes: write lines in, read answers out by id. A 2025 client opens
 * with initialize; a 2026-07-28 client sends no handshake, and `send` puts the envelope into each
 * request whose params are an object to carry it.
 */
async function pipes(era: Era | "none" = "legacy") {
  const input = new PassThrough();
  const output = new PassThrough();
  const answers: Record<string, unknown>[] = [];
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl = buffered.indexOf("\n");
    while (nl !== -1) {
      answers.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf("\n");
    }
  });
  handle = await serveStdio(
    createExampleServer(),
    { scopes: ["example:read", "example:write"] },
    new KitStdioTransport(input, output),
  );
  const withEnvelope = (message: Record<string, unknown>) => {
    const params = message["params"];
    if (era !== "modern" || typeof params !== "object" || params === null || Array.isArray(params))
      return message;
    return { ...message, params: { ...params, _meta: ENVELOPE } };
  };
  const send = (line: string | Record<string, unknown>) =>
    input.write(`${typeof line === "string" ? line : JSON.stringify(withEnvelope(line))}\n`);
  const answerTo = async (id: unknown) => {
    for (let i = 0; i < 200; i++) {
      const found = answers.find((a) => a["id"] === id);
      if (found) return found as { id: unknown; error?: { code: number; message: string }; result?: unknown };
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no answer to id ${String(id)}; got ${JSON.stringify(answers)}`);
  };
  if (era === "legacy") await legacyHandshake(send, () => answerTo(0));
  return { send, answerTo, input, answers };
}

describe("JSON-RPC batches on stdio", () => {
  const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list", params: {} });

  it.each(["legacy", "modern"] as const)(
    "%s era (2025-11-25 or 2026-07-28): a batch is refused whole with -32600, nothing in it runs, and the line after is served",
    async (era) => {
      const { send, answerTo, answers } = await pipes(era);
      send(JSON.stringify([list(7), list(8)]));
      send(list(9));
      expect((await answerTo(9)).result).toBeDefined();
      const refused = answers.filter((a) => a["id"] === null);
      expect(refused).toHaveLength(1);
      expect(refused[0]?.["error"]).toMatchObject({
        code: -32600,
        message: expect.stringContaining("no JSON-RPC batches here"),
      });
      expect(answers.filter((a) => a["id"] === 7 || a["id"] === 8)).toEqual([]);
    },
  );

  it("at 2025-03-26, the one revision with batches, each request of a batch is answered", async () => {
    const { send, answerTo, answers } = await pipes("none");
    send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    expect((await answerTo(0)).result).toMatchObject({ protocolVersion: "2025-03-26" });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send(JSON.stringify([list(7), list(8)]));
    expect((await answerTo(7)).result).toBeDefined();
    expect((await answerTo(8)).result).toBeDefined();
    expect(answers.filter((a) => a["id"] === null)).toEqual([]);
  });

  it("a line that is not JSON but starts with [ is still a parse error", async () => {
    const { send, answerTo } = await pipes("legacy");
    send("[1, 2");
    send(list(3));
    await answerTo(3);
    expect((await answerTo(null)).error).toMatchObject({ code: -32700 });
  });
});

describe("malformed JSON-RPC on stdio", () => {
  it.each(["legacy", "modern"] as const)(
    "%s era: answers each bad request with the code JSON-RPC names, one line of text, and stays up",
    async (era) => {
      const { send, answerTo } = await pipes(era);
      send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_notes", arguments: "x" } });
      send({ jsonrpc: "2.0", id: 2, method: "tools/call" });
      send({ jsonrpc: "2.0", id: 3, method: "no/such/method", params: {} });
      send("{this is not json");
      send({ jsonrpc: "2.0", id: 5, method: "tools/list", params: { cursor: 5 } });
      send({ jsonrpc: "2.0", id: 4, method: "tools/list", params: {} });
      expect((await answerTo(1)).error).toMatchObject({ code: -32602 });
      expect((await answerTo(1)).error?.message).toMatch(
        /^Invalid params: params.arguments must be an object/,
      );
      expect((await answerTo(2)).error).toMatchObject({ code: -32602 });
      expect((await answerTo(2)).error?.message).toMatch(/^Invalid params: tools\/call needs params/);
      expect((await answerTo(3)).error).toMatchObject({ code: -32601 });
      expect((await answerTo(3)).error?.message).toMatch(/^Method not found/);
      const parse = await answerTo(null);
      expect(parse.error?.code).toBe(-32700);
      expect(parse.error?.message).toMatch(/^Parse error/);
      // Past the kit's own checks, refused by the SDK's wire schema (which throws its issue dump).
      expect((await answerTo(5)).error).toMatchObject({ code: -32602 });
      expect((await answerTo(5)).error?.message).toMatch(
        /^Invalid params: params\.cursor: .*expected string/,
      );
      for (const id of [1, 2, 3, 5, null]) expect((await answerTo(id)).error?.message).not.toMatch(/\n/);
      const list = (await answerTo(4)).result as { tools: { name: string }[]; resultType?: string };
      expect(list.tools.map((t) => t.name)).toContain("list_notes");
      // Only a 2026-07-28 answer says whether it is complete: proof the request was served in that era.
      expect(list.resultType).toBe(era === "modern" ? "complete" : undefined);
    },
  );

  it("keeps a UTF-8 character split across two reads whole", async () => {
    const { input, answerTo } = await pipes();
    const line = Buffer.from(
      `${JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "add_note", arguments: { text: "café" } } })}\n`,
    );
    const cut = line.indexOf(Buffer.from("é")) + 1;
    input.write(line.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 10));
    input.write(line.subarray(cut));
    const answer = (await answerTo(5)) as { result?: { structuredContent: { note: { text: string } } } };
    expect(answer.result?.structuredContent.note.text).toBe("café");
  });

  it("refuses a line over the size bound with -32600 and carries on", async () => {
    const { input, send, answerTo } = await pipes();
    const chunk = Buffer.alloc(1 << 20, 0x61);
    for (let sent = 0; sent <= MAX_STDIO_LINE_BYTES; sent += chunk.length) input.write(chunk);
    input.write("\n");
    const refused = await answerTo(null);
    expect(refused.error?.code).toBe(-32600);
    send({ jsonrpc: "2.0", id: 6, method: "tools/list" });
    expect((await answerTo(6)).result).toBeDefined();
  });
});
