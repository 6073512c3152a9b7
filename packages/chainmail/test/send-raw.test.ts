/**
 * `chainmail send-raw` with the built CLI against the daemon, Dovecot and the recording SMTP relay:
 * a prepared message goes out once, as it is but for its Bcc (which only the envelope carries); the
 * policy judges the envelope the relay receives; a foreign From and a recipient outside
 * allowed_recipients are held in Drafts; a key reused with another file is CONFLICT; an MCP client
 * may not call it at all.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { REASONS } from "../src/errors.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: SendEnv;
let files: string;

function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--home", env.dir, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString("utf8");
    });
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

/** A prepared message in a file outside the chainmail home. */
function message(name: string, headers: string[], body = "Prepared body.\r\n"): string {
  const file = path.join(files, name);
  fs.writeFileSync(file, `${headers.join("\r\n")}\r\n\r\n${body}`);
  return file;
}

const base = (subject: string, more: string[] = []) => [
  "From: Alice <alice@example.com>",
  "To: Bob <bob@example.com>",
  ...more,
  `Subject: ${subject}`,
  "Date: Tue, 01 Dec 2026 10:00:00 +0000",
  `Message-ID: <${subject.replace(/\W/g, "")}@example.com>`,
  "MIME-Version: 1.0",
  "Content-Type: text/plain; charset=utf-8",
];

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  env = await startSendEnv({
    work: { sendPolicy: 'allowed_recipients = ["bob@example.com", "@example.org"]\n' },
  });
  files = fs.mkdtempSync(path.join(os.tmpdir(), "cm-raw-"));
}, 60_000);

afterAll(async () => {
  await env?.stop();
  fs.rmSync(files, { recursive: true, force: true });
});

describe("chainmail send-raw", () => {
  it("sends the file once: the Bcc only in the envelope, the rest as written; a retry is a duplicate", async () => {
    // "Bcc :" with a space is still a Bcc header to every reader; it must not leak either.
    const file = message(
      "one.eml",
      base("raw one", [
        "Cc: dave@example.org",
        "Bcc : Secret <secret@example.org>",
        "Resent-Bcc: resent@example.org",
      ]),
    );
    const n = env.relay.received.length;
    const r = await cli(["--json", "send-raw", "work", file]);
    expect(r.code, r.err).toBe(0);
    const res = JSON.parse(r.out) as Record<string, unknown>;
    expect(res).toMatchObject({
      status: "sent",
      message_id: "<rawone@example.com>",
      idempotency_key: expect.stringMatching(/^d1\.[0-9a-f]{64}$/),
    });
    expect(env.relay.received.length).toBe(n + 1);
    const got = env.relay.received.at(-1)!;
    expect([...got.to].sort()).toEqual(["bob@example.com", "dave@example.org", "secret@example.org"]);
    expect(env.relay.transactions().at(-1)!.rcpts.sort()).toEqual([
      "bob@example.com",
      "dave@example.org",
      "secret@example.org",
    ]);
    const text = got.raw.toString("utf8");
    expect(text).not.toMatch(/secret@example\.org/i);
    expect(text).not.toMatch(/^bcc\s*:/im);
    expect(text).not.toMatch(/resent/i);
    const m = await simpleParser(got.raw);
    expect(m.headers.has("bcc")).toBe(false);
    expect(m.subject).toBe("raw one");
    // The file's own Date is kept: it is sent as it was prepared.
    expect(text).toContain("Date: Tue, 01 Dec 2026 10:00:00 +0000");
    expect(m.text?.trim()).toBe("Prepared body.");

    const again = await cli(["--json", "send-raw", "work", file]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({
      status: "duplicate",
      idempotency_key: res["idempotency_key"],
    });
    expect(env.relay.received.length).toBe(n + 1);

    const rows = (await env.client.readAudit({ action: "send.raw" })).rows;
    expect(rows.map((x) => [x.client, x.decision])).toEqual(
      expect.arrayContaining([
        ["cli", "allowed"],
        ["cli", "duplicate"],
      ]),
    );
  });

  it("holds a recipient outside allowed_recipients, sending nothing and saving the file to Drafts", async () => {
    const file = message("two.eml", base("raw two", ["Bcc: eve@elsewhere.test"]));
    const n = env.relay.received.length;
    const drafts = await env.dv.messageCount("alice", "Drafts");
    const r = await cli(["--json", "send-raw", "work", file]);
    // Held, not sent: the command did not do what it was asked (the policy's exit code).
    expect(r.code, r.err).toBe(REASONS.POLICY_DENIED.exitCode);
    expect(JSON.parse(r.out)).toMatchObject({
      status: "held",
      blocked: ["eve@elsewhere.test"],
      draft_ref: expect.stringMatching(/^m\d\./),
    });
    expect(env.relay.received.length).toBe(n);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts + 1);
    // Saved as given, its Bcc kept, so the owner can send it with `draft send` once allowed.
    const c = await env.dv.connect("alice");
    try {
      await c.mailboxOpen("Drafts");
      const last = await c.fetchOne("*", { source: true });
      expect(last ? last.source?.toString("utf8") : undefined).toContain("Bcc: eve@elsewhere.test");
    } finally {
      await c.logout();
    }
    // A retry is held again without a second copy in Drafts.
    expect(JSON.parse((await cli(["--json", "send-raw", "work", file])).out)).toMatchObject({
      status: "held",
    });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts + 1);
    expect(env.relay.received.length).toBe(n);
  });

  it("holds a message whose From is not one of the account's addresses", async () => {
    const headers = base("raw three").map((h) =>
      h.startsWith("From:") ? "From: Mallory <ceo@example.org>" : h,
    );
    const n = env.relay.received.length;
    const r = await cli(["--json", "send-raw", "work", message("three.eml", headers)]);
    expect(r.code, r.err).toBe(REASONS.POLICY_DENIED.exitCode);
    const res = JSON.parse(r.out) as { status: string; hint: string };
    expect(res.status).toBe("held");
    expect(res.hint).toMatch(/From/);
    expect(env.relay.received.length).toBe(n);
  });

  it("answers CONFLICT when a key is reused with another file, sending nothing", async () => {
    const a = message("four.eml", base("raw four"));
    const b = message("five.eml", base("raw five"));
    const n = env.relay.received.length;
    const first = await cli(["--json", "send-raw", "work", a, "--key", "k-raw-1"]);
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ status: "sent", idempotency_key: "k-raw-1" });
    const second = await cli(["--json", "send-raw", "work", b, "--key", "k-raw-1"]);
    expect(second.code).toBe(REASONS.CONFLICT.exitCode);
    expect(second.out + second.err).toContain("CONFLICT");
    expect(env.relay.received.length).toBe(n + 1);
  });

  it("prints a line per outcome without --json, and refuses a file that does not exist", async () => {
    const r = await cli(["send-raw", "work", message("six.eml", base("raw six"))]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^sent\t<rawsix@example\.com>\tkey d1\./);
    const missing = await cli(["send-raw", "work", path.join(files, "nope.eml")]);
    expect(missing.code).toBe(REASONS.NOT_FOUND.exitCode);
  });

  it("is an operator command: an MCP client is refused before anything is read or sent", async () => {
    const mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    try {
      const content = fs.readFileSync(message("seven.eml", base("raw seven")));
      const { upload_id } = await mcp.call("upload.begin", {
        path: path.join(files, "seven.eml"),
        size: content.length,
      });
      await mcp.call("upload.chunk", { upload_id, index: 0, data: content.toString("base64") });
      await mcp.call("upload.finish", { upload_id });
      const n = env.relay.received.length;
      await expect(mcp.call("send.raw", { account: "work", upload_id })).rejects.toMatchObject({
        reason: "POLICY_DENIED",
      });
      expect(env.relay.received.length).toBe(n);
    } finally {
      mcp.close();
    }
  });
});
