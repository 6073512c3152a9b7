/**
 * Through the daemon on Dovecot: refs of mail in a folder with a 500-character non-ASCII name (the
 * longest the daemon creates) under a 64-character account name are accepted back by every call,
 * and get_thread of a message without Message-ID returns that message.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeRef } from "../src/refs.js";
import { setSecret } from "../src/secrets.js";
import { buildMessage } from "../src/testing/corpus.js";
import { configToml, type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const ACCOUNT = `${"long-account.".repeat(4)}${"x".repeat(12)}`; // 64 characters

/** 500 characters: seven levels of CJK text, each short enough for one Maildir directory name. */
function longFolder(seed: string): string {
  const levels = [72, 72, 70, 70, 70, 70, 70].map((n, i) =>
    Array.from({ length: n }, (_, j) =>
      String.fromCharCode(0x4e00 + ((seed.charCodeAt(0) * 7 + i * 97 + j) % 20000)),
    ).join(""),
  );
  return levels.join("/");
}

beforeAll(async () => {
  env = await startMailEnv();
  expect(ACCOUNT).toHaveLength(64);
  setSecret(env.home.secretsDir, ACCOUNT, "alice-secret-pw");
  fs.writeFileSync(
    env.home.configFile,
    configToml(env.dv, {}).replace('name = "work"', `name = "${ACCOUNT}"`),
  );
  const t = new Date(Date.now() + 200_000);
  fs.utimesSync(env.home.configFile, t, t);
  await env.restartDaemon();
  // The renamed account is a new one: its server settings wait for the owner, who confirms them.
  await env.confirmPolicy();
});
afterAll(async () => {
  await env?.stop();
});

describe("refs of a folder with a long non-ASCII name", () => {
  it("are accepted back by get_message, get_thread, move and the cache", async () => {
    const a = longFolder("a");
    const b = longFolder("b");
    expect(a).toHaveLength(500);
    expect((await env.client.createFolder({ account: ACCOUNT, name: a })).name).toBe(a);
    expect((await env.client.createFolder({ account: ACCOUNT, name: b })).name).toBe(b);
    await env.dv.appendMessage(
      "alice",
      a,
      buildMessage({
        from: "Eve <eve@example.com>",
        to: ["alice@example.com"],
        subject: "Deep folder",
        date: new Date("2026-04-01T10:00:00Z"),
        messageId: "<deep@example.com>",
        text: "down here\n",
      }),
    );

    const rows = (await env.client.search({ query: "subject:deep", accounts: [ACCOUNT], source: "server" }))
      .rows;
    expect(rows).toHaveLength(1);
    const ref = rows[0]!.ref;
    expect(ref.length).toBeLessThanOrEqual(2048);
    expect(decodeRef(ref)).toMatchObject({ account: ACCOUNT, folder: a });
    expect((await env.client.getMessages({ refs: [ref] })).messages[0]!.subject).toBe("Deep folder");
    expect((await env.client.getThread({ ref })).messages.map((m) => m.ref)).toEqual([ref]);

    const moved = await env.client.move({ refs: [ref], folder: b });
    expect(moved).toMatchObject({ succeeded: 1, failed: 0 });
    const newRef = moved.outcomes[0]!.new_ref!;
    expect(newRef.length).toBeLessThanOrEqual(2048);
    expect(decodeRef(newRef).folder).toBe(b);
    const flagged = await env.client.setFlags({ refs: [newRef], add: ["flagged"] });
    expect(flagged).toMatchObject({ succeeded: 1, failed: 0 });

    await env.client.cacheSync({ accounts: [ACCOUNT] });
    const cached = await env.client.search({ query: "subject:deep", accounts: [ACCOUNT], source: "cache" });
    expect(cached.rows.map((r) => r.ref)).toEqual([newRef]);
    const got = await env.client.getMessages({ refs: [cached.rows[0]!.ref] });
    expect(got.messages[0]).toMatchObject({ subject: "Deep folder", flags: ["flagged"] });
  });
});

describe("get_thread of a message without Message-ID", () => {
  it("returns that message", async () => {
    const raw =
      "From: Eve <eve@example.com>\r\nTo: alice@example.com\r\nSubject: No id at all\r\nDate: Wed, 01 Apr 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nno id\r\n";
    await env.dv.appendMessage("alice", "INBOX", raw);
    const rows = (
      await env.client.search({ query: 'subject:"No id at all"', accounts: [ACCOUNT], source: "server" })
    ).rows;
    expect(rows).toHaveLength(1);
    const t = await env.client.getThread({ ref: rows[0]!.ref });
    expect(t.messages.map((m) => [m.ref, m.subject, m.message_id])).toEqual([
      [rows[0]!.ref, "No id at all", null],
    ]);
    expect(t).toMatchObject({ truncated: false, omitted_refs: [] });
  });

  it("returns a message of Trash, which the thread search leaves out", async () => {
    const raw =
      "From: Eve <eve@example.com>\r\nTo: alice@example.com\r\nSubject: Binned\r\nDate: Wed, 01 Apr 2026 11:00:00 +0000\r\nMessage-ID: <binned@example.com>\r\n\r\nbin\r\n";
    await env.dv.appendMessage("alice", "Trash", raw);
    const rows = (
      await env.client.search({ query: "in:trash subject:Binned", accounts: [ACCOUNT], source: "server" })
    ).rows;
    expect(rows).toHaveLength(1);
    const t = await env.client.getThread({ ref: rows[0]!.ref });
    expect(t.messages.map((m) => m.subject)).toEqual(["Binned"]);
  });
});
