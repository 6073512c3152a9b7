import { PassThrough } from "node:stream";
import { type JSONRPCMessage, Server } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { successResult } from "../src/result.js";
import { sdkToolResultCheck } from "../src/server.js";
import { KitStdioTransport, type StdioHandle, serveStdio } from "../src/stdio.js";
import { type Era, MODERN_REVISION } from "../src/testing/clients.js";
import { legacyHandshake } from "./helpers.js";

/**
 * The kit runs tools/call without the SDK's second check of the request and its zod check (and
 * copy) of the result (see KitProtocolServer). These tests send the same calls with the SDK's
 * check on and off and compare the raw lines the server writes: every kind of result a tool call
 * can give reaches the wire byte for byte as before, in both eras.
 */

let handle: StdioHandle | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
  sdkToolResultCheck.on = false;
});

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** One call per kind of result: success, refused input, a tool's error, INTERNAL, scope, unknown tool, the SDK's schema refusal. */
const CALLS: Array<[string, unknown]> = [
  ["add_note", { text: "first ‹note› with \u202e a fence and ünïcödé" }],
  ["list_notes", {}],
  ["get_note", { id: 1 }],
  ["get_note", { id: 999 }],
  ["get_note", { id: "one" }],
  ["read_message", { id: 1 }],
  ["fail", {}],
  ["purge", {}],
  ["no_such_tool", {}],
  ["list_notes", { limit: "x" }],
];

/** The lines the example server writes for CALLS, in order, with the SDK's result check `check`. */
async function wireLines(era: Era, check: boolean): Promise<string[]> {
  sdkToolResultCheck.on = check;
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: string[] = [];
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      lines.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  });
  // Write scope only for add_note: purge answers INSUFFICIENT_SCOPE
  handle = await serveStdio(
    createExampleServer(),
    { scopes: ["example:read", "example:write"] },
    new KitStdioTransport(input, output),
  );
  const send = (message: Record<string, unknown>) => input.write(`${JSON.stringify(message)}\n`);
  const answered = async (n: number) => {
    for (let i = 0; i < 400 && lines.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    expect(lines.length).toBe(n);
  };
  if (era === "legacy") await legacyHandshake(send, () => answered(1));
  const before = lines.length;
  for (const [i, [name, args]] of CALLS.entries()) {
    const params = { name, arguments: args, ...(era === "modern" ? { _meta: ENVELOPE } : {}) };
    send({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params });
    // One at a time, so the order of the lines is the order of the calls
    await answered(before + i + 1);
  }
  await handle.close();
  handle = undefined;
  return lines.slice(before);
}

describe("tools/call results on the wire", () => {
  it("runs through the SDK's input-required seam, which the kit calls without the SDK's wrapper", () => {
    // Renamed in an SDK upgrade, the kit falls back to the SDK's wrapper and its cost: noticed here
    const seam = (Server.prototype as unknown as Record<string, unknown>)[
      "_invokeInputRequiredCapableHandler"
    ];
    expect(typeof seam).toBe("function");
  });

  it.each(["legacy", "modern"] as const)(
    "%s era: the same bytes without the SDK's result check as with it",
    async (era) => {
      const checked = await wireLines(era, true);
      const unchecked = await wireLines(era, false);
      expect(unchecked).toHaveLength(CALLS.length);
      // Each kind is there: a success with structured content, error results, protocol errors
      expect(unchecked.some((l) => l.includes('"structuredContent":{"id":1'))).toBe(true);
      expect(unchecked.filter((l) => l.includes('"isError":true')).length).toBeGreaterThanOrEqual(3);
      expect(unchecked.some((l) => l.includes('"error":{"code":-32602'))).toBe(true);
      for (const [i, line] of unchecked.entries()) expect(line, `call ${i + 1}`).toBe(checked[i]);
    },
  );
});

describe("the stdio transport's splice of a result's structured content", () => {
  // The transport writes the JSON `successResult` made of the structured content for the text block
  // into the response line in place of a marker, instead of serializing it again. Whatever outside
  // text the content holds (quotes, escapes, lone surrogates, line separators, text that looks like
  // the marker or like JSON), the line must be the plain serialization of the message.
  const hostile = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.constantFrom('"kit-structured-', '"},"structuredContent":"x', "\u2028\u2029", "\ud800", '\\"', "\n{}"),
    fc.string().map((t) => `kit-structured-${t}`),
  );
  const structured = fc.dictionary(
    fc.oneof(fc.string({ unit: "binary", maxLength: 8 }), fc.constant("structuredContent")),
    fc.oneof(
      hostile,
      fc.jsonValue(),
      fc.array(fc.record({ subject: hostile, from: hostile }), { maxLength: 3 }),
    ),
    { maxKeys: 5 },
  );

  it("writes the same bytes as JSON.stringify of the message", async () => {
    await fc.assert(
      fc.asyncProperty(
        structured,
        hostile,
        fc.constantFrom("json", "summary+json") as fc.Arbitrary<"json" | "summary+json">,
        async (content, summary, mode) => {
          const output = new PassThrough();
          const transport = new KitStdioTransport(new PassThrough(), output);
          const message = {
            jsonrpc: "2.0",
            id: 7,
            result: successResult(content, summary, mode),
          } as JSONRPCMessage;
          await transport.send(message);
          expect(String(output.read())).toBe(`${JSON.stringify(message)}\n`);
          await transport.close();
        },
      ),
      { numRuns: 300 },
    );
  });
});
