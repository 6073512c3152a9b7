/**
 * A save that fails for good leaves nothing behind: the server's connection drops halfway through a
 * download_attachment or save_raw_message and no new one can be made (the server is gone), so the
 * call fails, and the dir holds what it held before: no half-written file under the attachment's
 * name, no temp file. Seen from outside: a TCP proxy between the daemon and Dovecot holds the
 * server's bytes back mid-download, then goes away.
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
let dir: string;

const ATTACHMENT = randomBytes(3 * 1024 * 1024);
const RAW = buildMessage({
  from: "Ann <ann@example.com>",
  to: ["alice@example.com"],
  subject: "the lost file",
  date: new Date("2026-12-07T10:00:00Z"),
  messageId: "<lost-file@example.com>",
  text: "The file is attached.",
  attachments: [{ filename: "lost.bin", contentType: "application/octet-stream", content: ATTACHMENT }],
});

async function until(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  env = await startMailEnv({});
  await env.dv.appendMessages("alice", "INBOX", [{ raw: RAW }]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-lost-"));
  fs.writeFileSync(path.join(dir, "kept.txt"), "already here");
}, 60_000);
afterAll(async () => {
  await env?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The ref and attachment part, read over a direct connection; then IMAP goes through `tap`. */
async function through(): Promise<{ tap: TcpTap; ref: string; part: string }> {
  env.writeConfig({ work: { port: env.dv.port } });
  await env.confirmPolicy();
  const found = await env.client.search({ query: "subject:lost", accounts: ["work"], source: "server" });
  const ref = found.rows[0]?.ref as string;
  const [msg] = (await env.client.getMessages({ refs: [ref] })).messages;
  const part = msg?.attachments.find((a) => a.filename === "lost.bin")?.part as string;
  expect(part).toBeDefined();
  const tap = await startTcpTap(env.dv.port);
  env.writeConfig({ work: { port: tap.port } });
  await env.confirmPolicy();
  return { tap, ref, part };
}

for (const kind of ["download_attachment", "save_raw_message"] as const) {
  it(`${kind}: a connection that drops halfway with the server gone leaves no file and no temp file`, async () => {
    const { tap, ref, part } = await through();
    tap.stallAfter(512 * 1024);
    const saving =
      kind === "download_attachment"
        ? env.client.downloadAttachment({ ref, part, dir })
        : env.client.saveRaw({ ref, dir });
    const failed = saving.then(
      () => undefined,
      (err: unknown) => err as { reason: string },
    );
    await until("the held-back download", () => tap.stalled());
    await until("bytes in the temp file", () =>
      fs.readdirSync(dir).some((n) => n.endsWith(".part") && fs.statSync(path.join(dir, n)).size > 0),
    );
    // The server goes away: the retry on a new connection fails too
    await tap.stop();
    const err = await failed;
    expect(err, "the save failed").toBeDefined();
    expect(err?.reason).toBe("SERVER_UNAVAILABLE");
    expect(fs.readdirSync(dir)).toEqual(["kept.txt"]);
    expect(fs.readFileSync(path.join(dir, "kept.txt"), "utf8")).toBe("already here");
  }, 60_000);
}
