/**
 * Mail another session changes while this one has the folder open. A message expunged after a move
 * or copy looked for it (its SEARCH saw it) but before the MOVE or COPY: Dovecot answers
 * `NO [EXPUNGEISSUED] Some of the requested messages no longer exist` and does nothing, which
 * imapflow takes for a success (it means that answer for FETCH). The transfer must then report that
 * message NOT_FOUND and move or copy the others, never call the whole batch done, and on a server
 * without MOVE never remove messages a COPY did not copy. The race is made without timing: the other
 * session expunges between the check and the transfer, which the test calls one after the other.
 * And mail another session added since this one opened the folder is seen by the check.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountConfig } from "../src/config.js";
import { MailError } from "../src/errors.js";
import { ImapPool, openImap } from "../src/imap/connection.js";
import { existing, transfer } from "../src/imap/organize.js";
import { decodeRef } from "../src/refs.js";
import { setSecret } from "../src/secrets.js";
import { capabilitiesWithout, type Dovecot, startDovecot } from "../src/testing/dovecot.js";

const USER = "race";
const msg = (subject: string) =>
  `From: a@example.com\r\nTo: ${USER}@example.com\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, "")}@x>\r\n\r\nbody\r\n`;

describe.each([
  ["a server with MOVE", undefined],
  ["a server without MOVE (COPY, then STORE and UID EXPUNGE)", capabilitiesWithout("MOVE")],
])("on %s", (_label, extraConfig) => {
  let dv: Dovecot;
  let client: ImapFlow;
  let other: ImapFlow;
  let dir: string;
  let account: AccountConfig;

  beforeAll(async () => {
    dv = await startDovecot({ users: [{ name: USER, password: "pw" }], extraConfig });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-race-"));
    setSecret(dir, "acct", "pw");
    account = {
      name: "acct",
      provider: "imap",
      address: `${USER}@example.com`,
      username: USER,
      imap: { host: dv.host, port: dv.port, tls: "none" },
      smtp: undefined,
      archive_folder: undefined,
      signature: undefined,
      policy: { allow_expunge: false, allow_delete_folder: false },
    };
    // The daemon's own connection: its logger is how a refusal imapflow swallowed is seen
    client = await openImap(account, dir);
    other = await dv.connect(USER);
    await client.mailboxCreate("Moved");
    await client.mailboxCreate("Copied");
  });
  afterAll(async () => {
    await client?.logout().catch(() => {});
    await other?.logout().catch(() => {});
    await dv?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const appendThree = async (prefix: string) => {
    const added = await dv.appendMessages(USER, "INBOX", [
      { raw: msg(`${prefix} one`) },
      { raw: msg(`${prefix} two`) },
      { raw: msg(`${prefix} three`) },
    ]);
    return {
      account: "acct",
      folder: "INBOX",
      uidValidity: (added[0] as { uidValidity: number }).uidValidity,
      uids: added.map((r) => r.uid),
    };
  };

  /** Subjects by UID of the messages in a folder whose subject starts with `prefix`. */
  const inFolder = async (folder: string, prefix: string) => {
    const lock = await other.getMailboxLock(folder);
    try {
      await other.noop();
      const out: Record<number, string> = {};
      for await (const m of other.fetch("1:*", { envelope: true, uid: true })) {
        const s = m.envelope?.subject ?? "";
        if (s.startsWith(prefix)) out[m.uid] = s;
      }
      return out;
    } finally {
      lock.release();
    }
  };

  it("sees, through the pool, mail another session added after this connection opened the folder", async () => {
    const pool = new ImapPool(dir);
    try {
      const first = await appendThree("seen");
      expect((await pool.write(account, (c) => existing(c, first))).missing).toEqual([]);
      // The folder stays open on the pooled connection; new mail arrives through another session
      const later = await appendThree("later");
      expect(await pool.write(account, (c) => existing(c, later))).toEqual({
        present: later.uids,
        missing: [],
      });
    } finally {
      await pool.closeAll();
    }
  });

  it.each(["move", "copy"] as const)(
    "%s: the others done with new refs, the one expunged meanwhile never reported done when it was not",
    async (mode) => {
      const dest = mode === "move" ? "Moved" : "Copied";
      const batch = await appendThree(mode);
      // What move/copy checks first, after the NOOP ImapPool.write sends: every message is there
      await client.noop();
      expect((await existing(client, batch)).missing).toEqual([]);
      const lock = await other.getMailboxLock("INBOX");
      try {
        // (that session may have had INBOX open since before the three arrived)
        await other.noop();
        await other.messageDelete(String(batch.uids[1]), { uid: true });
      } finally {
        lock.release();
      }
      const out = await transfer(client, batch, dest, mode);
      // Every outcome is true: a ref names the message in the destination; NOT_FOUND means it is
      // in neither folder. (Dovecot refuses a MOVE naming the expunged message, and copies it:
      // this session could still read it.)
      const there = await inFolder(dest, `${mode} `);
      const left = await inFolder("INBOX", `${mode} `);
      const names = [`${mode} one`, `${mode} two`, `${mode} three`];
      batch.uids.forEach((uid, k) => {
        const o = out.get(uid);
        const name = names[k] as string;
        if (o instanceof MailError) {
          expect(o.reason, name).toBe("NOT_FOUND");
          expect(Object.values(there), name).not.toContain(name);
        } else {
          expect(typeof o, name).toBe("string");
          expect(decodeRef(o as string)).toMatchObject({ account: "acct", folder: dest });
          expect(there[decodeRef(o as string).uid], name).toBe(name);
        }
      });
      expect(out.get(batch.uids[0] as number)).not.toBeInstanceOf(MailError);
      expect(out.get(batch.uids[2] as number)).not.toBeInstanceOf(MailError);
      if (mode === "move") expect(out.get(batch.uids[1] as number)).toBeInstanceOf(MailError);
      // None twice, none lost: a move leaves nothing behind, a copy leaves the two it copied
      expect(
        Object.values(there)
          .filter((n) => n !== `${mode} two`)
          .sort(),
      ).toEqual([`${mode} one`, `${mode} three`]);
      expect(Object.values(left).sort()).toEqual(mode === "move" ? [] : [`${mode} one`, `${mode} three`]);
    },
  );
});
