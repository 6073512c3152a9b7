/**
 * The daemon's wire protocol under abuse, over its real Unix socket: malformed lines, wrong shapes,
 * random parameters for every method, UTF-8 split across writes, an oversized line. Every line gets one
 * well-formed answer, no answer is INTERNAL, and the daemon keeps serving afterwards.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METHODS, MAX_LINE_BYTES, PROTOCOL_VERSION } from "../src/daemon/protocol.js";
import { REASONS } from "../src/errors.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
beforeAll(async () => {
  env = await startMailEnv();
});
afterAll(async () => {
  await env?.stop();
});

/** One connection that sends raw text and collects answer lines. */
class Raw {
  private readonly sock: net.Socket;
  private buf = "";
  private readonly lines: string[] = [];
  private waiter: (() => void) | undefined;
  closed = false;

  constructor(path: string) {
    this.sock = net.createConnection(path);
    this.sock.setEncoding("utf8");
    this.sock.on("data", (chunk: string) => {
      this.buf += chunk;
      for (let nl = this.buf.indexOf("\n"); nl >= 0; nl = this.buf.indexOf("\n")) {
        this.lines.push(this.buf.slice(0, nl));
        this.buf = this.buf.slice(nl + 1);
      }
      this.waiter?.();
    });
    this.sock.on("close", () => {
      this.closed = true;
      this.waiter?.();
    });
    this.sock.on("error", () => undefined);
  }

  write(text: string | Buffer): void {
    this.sock.write(text);
  }

  /** The next `n` answers, parsed. */
  async answers(n: number): Promise<Record<string, unknown>[]> {
    while (this.lines.length < n && !this.closed) await new Promise<void>((r) => (this.waiter = r));
    return this.lines.splice(0, n).map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  end(): void {
    this.sock.destroy();
  }
}

function expectWellFormed(answer: Record<string, unknown>): void {
  expect(answer["v"]).toBe(PROTOCOL_VERSION);
  const error = answer["error"] as { reason: string; message: string } | undefined;
  if (error) {
    expect(Object.keys(REASONS)).toContain(error.reason);
    expect(error.reason).not.toBe("INTERNAL");
    expect(typeof error.message).toBe("string");
  } else expect(answer).toHaveProperty("result");
}

let seed = 99;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

function randomValue(depth = 0): unknown {
  const atoms: unknown[] = [
    null,
    true,
    0,
    -1,
    1.5,
    2 ** 53,
    Number.MAX_SAFE_INTEGER,
    "",
    "INBOX",
    "work",
    "cm1.d29yaw.SU5CT1g.1.1",
    "ẞtraße 🙂 \u0000 \u202e",
    "x".repeat(10_000),
    "../../etc/passwd",
    "from:a@b OR (",
  ];
  if (depth > 2 || rand() < 0.6) return pick(atoms);
  if (rand() < 0.5) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth + 1));
  return randomParams(depth + 1);
}

const KEYS = [
  "account",
  "accounts",
  "refs",
  "ref",
  "query",
  "limit",
  "cursor",
  "folder",
  "name",
  "new_name",
  "flags",
  "add",
  "remove",
  "dir",
  "force",
  "source",
  "full",
  "__proto__",
  "constructor",
];

function randomParams(depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const n = Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) out[pick(KEYS)] = randomValue(depth);
  return out;
}

describe("the daemon protocol", () => {
  it("answers every malformed line with a well-formed INVALID_ARGUMENT, on the same connection", async () => {
    const raw = new Raw(env.daemon.socketPath);
    const lines = [
      "not json",
      "[1,2,3]",
      "42",
      "null",
      '"text"',
      "{}",
      `{"v":2,"id":1,"method":"ping","client":"cli"}`,
      `{"v":1,"id":2,"method":7,"client":"cli"}`,
      `{"v":1,"id":3,"method":"ping","client":"robot"}`,
      `{"v":1,"id":{"x":1},"method":"ping","client":"cli"}`,
      `{"v":1,"id":4,"method":"no.such.method","client":"cli"}`,
      `{"v":1,"id":5,"method":"search","params":"not an object","client":"cli"}`,
      `{"v":1,"id":6,"method":"__proto__","client":"cli"}`,
      `{"v":1,"id":7,"method":"constructor","client":"cli"}`,
    ];
    raw.write(`${lines.join("\n")}\n`);
    const answers = await raw.answers(lines.length);
    expect(answers).toHaveLength(lines.length);
    for (const a of answers) {
      expectWellFormed(a);
      expect(a).toHaveProperty("error");
    }
    const byId = new Map(answers.map((a) => [a["id"], a["error"] as { reason: string; message: string }]));
    expect(byId.get(null)?.reason).toBe("INVALID_ARGUMENT");
    expect(byId.get(4)?.reason).toBe("NOT_FOUND");
    expect(byId.get(6)?.reason).toBe("NOT_FOUND");
    expect(byId.get(7)?.reason).toBe("NOT_FOUND");
    // Still serving on the same connection.
    raw.write(`{"v":1,"id":"after","method":"ping","client":"cli"}\n`);
    expect(await raw.answers(1)).toEqual([
      expect.objectContaining({ id: "after", result: expect.anything() }),
    ]);
    raw.end();
  });

  it("reads a request whose UTF-8 characters are split across writes", async () => {
    const raw = new Raw(env.daemon.socketPath);
    const method = "Grüße.🙂.日本";
    const line = Buffer.from(`${JSON.stringify({ v: 1, id: 1, method, client: "cli" })}\n`);
    const cut = line.indexOf(Buffer.from("🙂")) + 2; // inside the four-byte emoji
    raw.write(line.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 50));
    raw.write(line.subarray(cut));
    const [answer] = await raw.answers(1);
    expectWellFormed(answer!);
    // The daemon quotes the method it read: every character arrived whole.
    expect(answer!["error"]).toMatchObject({ reason: "NOT_FOUND", message: `unknown method "${method}"` });
    raw.end();
  });

  it("survives random parameters for every method", async () => {
    const raw = new Raw(env.daemon.socketPath);
    let id = 0;
    const sent: string[] = [];
    for (const method of METHODS) {
      for (let i = 0; i < 12; i++) {
        const params = randomParams();
        sent.push(method);
        raw.write(`${JSON.stringify({ v: 1, id: id++, method, client: pick(["cli", "mcp"]), params })}\n`);
      }
    }
    const answers = await raw.answers(sent.length);
    expect(answers).toHaveLength(sent.length);
    for (const a of answers) {
      expect(typeof a["id"]).toBe("number");
      expectWellFormed(a);
    }
    expect(new Set(answers.map((a) => a["id"])).size).toBe(sent.length);
    raw.end();
    expect(await env.client.call("ping")).toMatchObject({ ok: true, protocol: PROTOCOL_VERSION });
  });

  it("refuses an oversized line and closes only that connection", async () => {
    const raw = new Raw(env.daemon.socketPath);
    const chunk = "x".repeat(1024 * 1024);
    for (let sent = 0; sent <= MAX_LINE_BYTES; sent += chunk.length) raw.write(chunk);
    const [answer] = await raw.answers(1);
    expect(answer).toMatchObject({ id: null, error: { reason: "INVALID_ARGUMENT" } });
    expect((answer!["error"] as { message: string }).message).toContain("longer than");
    await raw.answers(1); // waits for the close
    expect(raw.closed).toBe(true);
    expect(await env.client.call("ping")).toMatchObject({ ok: true, protocol: PROTOCOL_VERSION });
  });
});
