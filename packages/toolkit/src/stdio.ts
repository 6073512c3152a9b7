import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { serveStdio as sdkServeStdio } from "@modelcontextprotocol/server/stdio";
import type { Caller } from "./define.js";
import { randomBytes } from "node:crypto";
import { decodeLine, NO_BATCHES_SINCE, oneLineError, takesBatches } from "./jsonrpc.js";
import { structuredJsonOf } from "./result.js";
import type { AnyKit } from "./server.js";

/** A line longer than this is refused (-32600) and dropped, so one bad client line cannot exhaust memory. */
export const MAX_STDIO_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Newline-delimited JSON-RPC over stdin/stdout that answers what the SDK's own stdio transport
 * drops or dumps: an unparsable line gets -32700, a malformed request -32600 or -32602 with one
 * line of text, and a line over the bound -32600. Bytes are split on newlines before decoding, so
 * a UTF-8 character cut across two reads stays whole.
 */
export class KitStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private dropping = false;
  private closed = false;
  /** The revision the server answered `initialize` with: batches are taken at 2025-03-26 alone. */
  private revision: string | undefined;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("error", this.onInputError);
    this.input.once("end", this.onEnd);
    this.input.once("close", this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the stdio transport is closed"));
    const result = "result" in message ? (message.result as Record<string, unknown>) : undefined;
    if (typeof result?.["protocolVersion"] === "string" && "serverInfo" in result)
      this.revision = result["protocolVersion"];
    const line = `${serialize(oneLineError(message))}\n`;
    return new Promise((resolve) => {
      if (this.output.write(line)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("error", this.onInputError);
    this.input.off("end", this.onEnd);
    this.input.off("close", this.onEnd);
    this.pending = [];
    this.onclose?.();
  }

  private readonly onEnd = () => void this.close();
  private readonly onInputError = (err: Error) => this.onerror?.(err);

  private readonly onData = (chunk: Buffer | string) => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let nl = data.indexOf(0x0a); nl !== -1; nl = data.indexOf(0x0a)) {
      this.push(data.subarray(0, nl));
      const line = Buffer.concat(this.pending).toString("utf8");
      const dropped = this.dropping;
      this.pending = [];
      this.pendingBytes = 0;
      this.dropping = false;
      if (dropped) this.refuseLongLine();
      else this.handleLine(line);
      data = data.subarray(nl + 1);
    }
    this.push(data);
  };

  private push(part: Buffer): void {
    if (this.dropping || part.length === 0) return;
    this.pendingBytes += part.length;
    if (this.pendingBytes > MAX_STDIO_LINE_BYTES) {
      this.dropping = true;
      this.pending = [];
      return;
    }
    this.pending.push(part);
  }

  private refuseLongLine(): void {
    void this.send({
      jsonrpc: "2.0",
      id: null as unknown as string,
      error: { code: -32600, message: `Invalid request: a line over ${MAX_STDIO_LINE_BYTES} bytes` },
    });
  }

  private handleLine(line: string): void {
    if (line.trim() === "") return;
    if (line.trimStart().startsWith("[") && !takesBatches(this.revision) && isArrayLine(line)) {
      // Nothing of it runs: a batch is not a message of this revision (nor of 2025-03-26's initialize).
      void this.send({
        jsonrpc: "2.0",
        id: null as unknown as string,
        error: {
          code: -32600,
          message: `Invalid request: no JSON-RPC batches here (revision ${NO_BATCHES_SINCE} removed them; this connection: ${this.revision ?? "no initialize answered"}): send each message on its own line`,
        },
      });
      return;
    }
    for (const inbound of decodeLine(line.replace(/\r$/, ""))) {
      if (inbound.ok) this.onmessage?.(inbound.message);
      else if (inbound.answer) void this.send(inbound.answer);
    }
  }
}

const isArrayLine = (line: string): boolean => {
  try {
    return Array.isArray(JSON.parse(line));
  } catch {
    return false; // not JSON: decodeLine answers -32700
  }
};

/** Stands in for a result's structured content while the rest is serialized; random, so no text holds it. */
const MARK = `kit-structured-${randomBytes(12).toString("hex")}`;
const MARK_JSON = JSON.stringify(MARK);

/**
 * `JSON.stringify(message)`, but a tool result's structured content (most of a search's bytes) is
 * spliced in from the JSON `successResult` made of it for the text block instead of serialized again.
 * The same bytes: the marker takes the structured content's place among the result's keys.
 */
function serialize(message: JSONRPCMessage): string {
  const result = "result" in message ? (message.result as Record<string, unknown>) : undefined;
  const json = result ? structuredJsonOf(result) : undefined;
  if (!result || json === undefined) return JSON.stringify(message);
  const marked = JSON.stringify({ ...message, result: { ...result, structuredContent: MARK } });
  const at = marked.indexOf(MARK_JSON);
  if (at === -1) return JSON.stringify(message);
  return marked.slice(0, at) + json + marked.slice(at + MARK_JSON.length);
}

export interface StdioHandle {
  close(): Promise<void>;
}

/** Serves the kit on stdio in whichever era the client opens with: `initialize` (2025) or 2026-07-28. */
export async function serveStdio(kit: AnyKit, caller: Caller, transport?: Transport): Promise<StdioHandle> {
  await kit.ready();
  return sdkServeStdio(() => kit.protocolInstance(caller, { listening: true }), {
    transport: transport ?? new KitStdioTransport(),
  });
}
