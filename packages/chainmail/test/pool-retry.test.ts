/**
 * What the connection pool runs again after the server drops the connection: a read, yes; a write,
 * never, since its earlier commands may already have reached the server. The drop is real: Dovecot
 * kicks the user's IMAP session (`doveadm kick`) between two commands.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountConfig } from "../src/config.js";
import { toWireError } from "../src/errors.js";
import { ImapPool, mapImapError } from "../src/imap/connection.js";
import { existing, transfer } from "../src/imap/organize.js";
import { setSecret } from "../src/secrets.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";

let dv: Dovecot;
let dir: string;
let account: AccountConfig;
let uidValidity: number;
let uids: number[];

const msg = (n: number) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject: `Retry ${n}`,
    date: new Date("2026-02-01T10:00:00Z"),
    messageId: `<retry${n}@example.com>`,
    text: "hi\n",
  });

beforeAll(async () => {
  dv = await startDovecot({ users: [{ name: "alice", password: "alice-pw" }] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-pool-"));
  setSecret(dir, "work", "alice-pw");
  const added = await dv.appendMessages("alice", "INBOX", [{ raw: msg(1) }, { raw: msg(2) }]);
  uidValidity = added[0]!.uidValidity;
  uids = added.map((a) => a.uid);
  const c = await dv.connect("alice");
  await c.mailboxCreate("Copies");
  await c.logout();
  account = {
    name: "work",
    provider: "imap",
    address: "alice@example.com",
    username: "alice",
    imap: { host: dv.host, port: dv.port, tls: "none" },
    smtp: undefined,
    archive_folder: undefined,
    signature: undefined,
    policy: { allow_expunge: false, allow_delete_folder: false },
  };
});
afterAll(async () => {
  await dv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Kicks every IMAP session of alice from the server side and waits until this client sees it close. */
async function kick(client: ImapFlow): Promise<void> {
  const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
  dv.doveadm(["kick", "alice"]);
  await closed;
}

const batch = (uid: number) => ({ account: "work", folder: "INBOX", uidValidity, uids: [uid] });

describe("ImapPool after a server-side drop", () => {
  it("does not run a write again: the copy that reached the server is made once", async () => {
    const pool = new ImapPool(dir);
    let runs = 0;
    const err = await pool
      .write(account, async (c) => {
        runs++;
        await existing(c, batch(uids[0]!));
        await transfer(c, batch(uids[0]!), "Copies", "copy");
        await kick(c);
        await existing(c, batch(uids[1]!));
        await transfer(c, batch(uids[1]!), "Copies", "copy");
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: "SERVER_UNAVAILABLE" });
    expect(runs).toBe(1);
    expect(await dv.messageCount("alice", "Copies")).toBe(1);

    // The pool is usable again on a fresh connection, and a write first checks the connection it
    // holds: a session the server closed while idle is replaced before anything runs.
    await pool.write(account, async (c) => {
      await existing(c, batch(uids[1]!));
      await transfer(c, batch(uids[1]!), "Copies", "copy");
    });
    let held: ImapFlow | undefined;
    await pool.read(account, async (c) => {
      held = c;
    });
    await kick(held!);
    let writes = 0;
    await pool.write(account, async (c) => {
      writes++;
      expect(c).not.toBe(held);
      await existing(c, batch(uids[0]!));
    });
    expect(writes).toBe(1);
    expect(await dv.messageCount("alice", "Copies")).toBe(2);
    await pool.closeAll();
  });

  it("runs a read once more on a new connection", async () => {
    const pool = new ImapPool(dir);
    let runs = 0;
    const found = await pool.read(account, async (c) => {
      runs++;
      const lock = await c.getMailboxLock("INBOX", { readOnly: true });
      lock.release();
      if (runs === 1) await kick(c);
      return (await c.search({ all: true }, { uid: true })) || [];
    });
    expect(runs).toBe(2);
    expect(found).toEqual(uids);
    await pool.closeAll();
  });
});

describe("ImapPool on a fault of the call's own code", () => {
  it("passes it on as it is (INTERNAL), not as the server's refusal; a refusal is still one", async () => {
    const pool = new ImapPool(dir);
    let runs = 0;
    const fault = await pool
      .read(account, async (c) => {
        runs++;
        await c.mailboxOpen("INBOX", { readOnly: true });
        (undefined as unknown as { x: number }).x;
      })
      .catch((e: unknown) => e);
    expect(fault).toBeInstanceOf(TypeError);
    expect(toWireError(fault)).toMatchObject({ reason: "INTERNAL" });
    // The cache's sync and watch, which map their errors the same way, say so too
    expect(mapImapError(fault, "work")).toMatchObject({
      reason: "INTERNAL",
      detail: (fault as Error).message,
    });
    expect(runs).toBe(1);
    // The connection stays for the next call; a command the server refuses is still its refusal
    const refused = await pool
      .read(account, async (c) => c.mailboxOpen("No such folder", { readOnly: true }))
      .catch((e: unknown) => e);
    expect(toWireError(refused).reason).not.toBe("INTERNAL");
    expect(toWireError(refused).message).toContain("the IMAP server of account work");
    await pool.closeAll();
  });
});
