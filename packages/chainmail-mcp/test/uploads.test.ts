/**
 * Files through MCP are uploaded to the daemon (chunked, audited as `upload`) before the compose
 * call, which names the uploads: an attachment and an inline image arrive byte-equal, the spool is
 * empty afterwards, a retry of the same call is a duplicate, and the MCP server refuses a symlink,
 * a directory and a file in the chainmail home before anything is uploaded.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DaemonClient } from "@mcpforge/chainmail";
import { type SendEnv, startSendEnv, TINY_PNG } from "@mcpforge/chainmail/testing";
import { connectInMemory, type Session, session } from "@mcpforge/toolkit/testing";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChainmailMcpServer } from "../src/index.js";

let env: SendEnv;
let daemonClient: DaemonClient;
let tools: Session;
let close: () => Promise<void>;
let dir: string;
// Over two chunks, so the chunking is exercised.
const BLOB = randomBytes(2 * 1024 * 1024 + 12345);

beforeAll(async () => {
  env = await startSendEnv();
  daemonClient = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
  const kit = createChainmailMcpServer({ client: daemonClient, home: env.home, log: () => undefined });
  const conn = await connectInMemory(kit, { scopes: [] });
  tools = session(conn.client);
  close = () => conn.close();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-up-"));
  fs.writeFileSync(path.join(dir, "blob.bin"), BLOB);
  fs.writeFileSync(path.join(dir, "chart.png"), TINY_PNG);
  fs.symlinkSync(path.join(dir, "blob.bin"), path.join(dir, "link.bin"));
}, 60_000);

afterAll(async () => {
  await close?.();
  daemonClient?.close();
  await env?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const spool = () => fs.readdirSync(path.join(env.home.stateDir, "uploads"));
const uploads = async () => (await env.client.readAudit({ action: "upload" })).rows;

describe("uploads through MCP", () => {
  it("sends an attachment and an inline image that arrive byte-equal, each upload audited", async () => {
    const args = {
      account: "work",
      to: ["bob@example.com"],
      subject: "with files",
      body: "See ![chart](chart.png)",
      attachments: [path.join(dir, "blob.bin")],
      inline: [{ name: "chart.png", path: path.join(dir, "chart.png") }],
    };
    const r = await tools.ok<{ status: string }>("send_email", args);
    expect(r.status).toBe("sent");
    const m = await simpleParser(env.relay.received[0]!.raw);
    const blob = m.attachments.find((a) => a.filename === "blob.bin");
    expect(blob && Buffer.compare(blob.content, BLOB)).toBe(0);
    const png = m.attachments.find((a) => a.contentType === "image/png");
    expect(png && Buffer.compare(png.content, TINY_PNG)).toBe(0);
    const rows = await uploads();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ client: "mcp", decision: "allowed" });
    expect(rows.map((x) => x.summary).join(" ")).toContain(`${BLOB.length} bytes`);
    expect(spool()).toEqual([]);

    // The same call again uploads again, derives the same key and sends nothing.
    expect((await tools.ok<{ status: string }>("send_email", args)).status).toBe("duplicate");
    expect(env.relay.received).toHaveLength(1);
    expect(spool()).toEqual([]);
  });

  it("refuses a symlink, a directory and a file in the chainmail home before uploading", async () => {
    const before = (await uploads()).length;
    const send = (file: string) =>
      tools.fails("send_email", {
        account: "work",
        to: ["bob@example.com"],
        subject: "x",
        attachments: [file],
      });
    const link = await send(path.join(dir, "link.bin"));
    expect(link).toMatchObject({ reason: "INVALID_ARGUMENT" });
    expect(link.message).toContain("symbolic link");
    const folder = await send(dir);
    expect(folder.message).toContain("not a regular file");
    const secret = await send(env.home.configFile);
    expect(secret.message).toContain("inside the chainmail home");
    expect((await uploads()).length).toBe(before);
    expect(env.relay.received).toHaveLength(1);
  });
});
