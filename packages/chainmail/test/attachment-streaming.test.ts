/**
 * download_attachment and save_raw_message stream: the bytes go to a temp file in the target dir
 * as they come from the server (a large one never sits in the daemon's memory whole), the file gets its name
 * only once complete, and a download whose connection drops halfway starts over on a new one and
 * leaves one whole file and no temp file. Seen from outside: a TCP proxy between the daemon and
 * Dovecot holds the server's bytes back mid-download.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { startTcpTap, type TcpTap } from "./support/tcp-tap.js";

let env: MailEnv;
let proxy: TcpTap;
let dir: string;

const ATTACHMENT = randomBytes(6 * 1024 * 1024);

/** The message both tests download from: a line of text and the attachment. */
const RAW = buildMessage({
  from: "Ann <ann@example.com>",
  to: ["alice@example.com"],
  subject: "the big file",
  date: new Date("2026-12-07T10:00:00Z"),
  messageId: "<big-file@example.com>",
  text: "The file is attached.",
  attachments: [{ filename: "big.bin", contentType: "application/octet-stream", content: ATTACHMENT }],
});

const parts = () => fs.readdirSync(dir).filter((n) => n.endsWith(".part"));

async function until(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  env = await startMailEnv({});
  proxy = await startTcpTap(env.dv.port);
  env.writeConfig({ work: { port: proxy.port } });
  await env.confirmPolicy();
  await env.dv.appendMessages("alice", "INBOX", [{ raw: RAW }]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-stream-"));
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await env?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it("writes the attachment as it arrives, and starts over on a new connection when one drops halfway", async () => {
  const found = await env.client.search({ query: "subject:big", accounts: ["work"], source: "server" });
  const ref = found.rows[0]?.ref as string;
  const [msg] = (await env.client.getMessages({ refs: [ref] })).messages;
  const part = msg?.attachments.find((a) => a.filename === "big.bin")?.part as string;
  expect(part).toBeDefined();

  // Held back after 2 MiB of the server's reply: what came so far is in the temp file already
  proxy.stallAfter(2 * 1024 * 1024);
  const download = env.client.downloadAttachment({ ref, part, dir });
  await until("the held-back download", () => proxy.stalled());
  await until("bytes in the temp file", () => {
    const [p] = parts();
    return p !== undefined && fs.statSync(path.join(dir, p)).size > 0;
  });
  expect(fs.readdirSync(dir).filter((n) => !n.endsWith(".part"))).toEqual([]);

  // The connection drops: the download begins again on a new one and completes
  proxy.dropAll();
  const saved = await download;
  expect(saved).toMatchObject({ size: ATTACHMENT.length, filename: "big.bin" });
  expect(fs.readFileSync(saved.path).equals(ATTACHMENT)).toBe(true);
  expect(fs.statSync(saved.path).mode & 0o777).toBe(0o600);
  expect(fs.readdirSync(dir)).toEqual(["big.bin"]);
}, 60_000);

it("saves the raw message the same way: as it arrives, over again after a drop, whole once named", async () => {
  const found = await env.client.search({ query: "subject:big", accounts: ["work"], source: "server" });
  const ref = found.rows[0]?.ref as string;
  proxy.stallAfter(1024 * 1024);
  const saving = env.client.saveRaw({ ref, dir });
  await until("the held-back download", () => proxy.stalled());
  await until("bytes in the temp file", () => {
    const [p] = parts();
    return p !== undefined && fs.statSync(path.join(dir, p)).size > 0;
  });
  proxy.dropAll();
  const saved = await saving;
  expect(path.basename(saved.path)).toBe("message.eml");
  const raw = Buffer.from(RAW);
  expect(saved.size).toBe(raw.length);
  expect(fs.readFileSync(saved.path).equals(raw)).toBe(true);
  expect(parts()).toEqual([]);
}, 60_000);
