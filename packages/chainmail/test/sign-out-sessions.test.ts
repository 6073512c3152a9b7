/**
 * The daemon's IMAP sessions end when their account's secret changes under them: `chainmail auth
 * logout`, a new password or a new sign-in, each in another process than the daemon's. The pool's
 * idle connection is retired without waiting for a call; the cache's watch (an IDLE session that
 * otherwise lives for days) logs out and starts again with the new secret or, signed out, stays
 * down; a cache pass under way (a first sync, minutes at a million messages) ends. Counted where the
 * promise is kept or broken: Dovecot's own list of logged-in sessions.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWatched } from "../src/cache/index.js";
import { holdWriterTransactions } from "../src/cache/writer.js";
import { type Config, parseConfig } from "../src/config.js";
import { CacheRunner } from "../src/daemon/cache-runner.js";
import { ImapPool } from "../src/imap/connection.js";
import { secretFile, setSecret } from "../src/secrets.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";
import { mailboxMessage } from "../src/testing/mailbox.js";
import { configToml } from "../src/testing/mailenv.js";
import { lockTaken } from "./support/write-lock.js";
import { SESSIONS_MS, sessionWaiter } from "./support/sessions.js";

const PASSWORD = "alice-secret-pw";
let dv: Dovecot;
let dir: string;
let secrets: string;

/** Only alice's account ("work"), with the background schedule on or off. */
function configWith(background: boolean): Config {
  const all = parseConfig(
    configToml(dv, { cache: `background = ${background}\nsync_interval_seconds = 3600` }),
  );
  return { ...all, accounts: all.accounts.filter((a) => a.name === "work") };
}

beforeAll(async () => {
  dv = await startDovecot({ users: [{ name: "alice", password: PASSWORD }] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-sign-out-"));
  secrets = path.join(dir, "secrets");
  // Enough for a first sync that writes through the header writer's thread (WRITER_MIN_MESSAGES)
  const now = new Date(Date.UTC(2026, 0, 15));
  await dv.appendMessages(
    "alice",
    "INBOX",
    Array.from({ length: 300 }, (_, i) => ({ raw: mailboxMessage(i, 300, { now }).raw })),
  );
});
afterAll(async () => {
  holdWriterTransactions(0);
  await dv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const until = sessionWaiter(() => dv, "alice");

const signOut = () => fs.rmSync(secretFile(secrets, "work"));

describe("the daemon's connections when the account's secret changes", () => {
  it("retires the pool's idle connection on sign-out, without waiting for the next call", async () => {
    setSecret(secrets, "work", PASSWORD);
    const account = configWith(false).accounts[0];
    if (!account) throw new Error("no account");
    const pool = new ImapPool(secrets, 100);
    try {
      await pool.read(account, (c) => c.list());
      await until("the pool's session", () => dv.sessionCount("alice") === 1, SESSIONS_MS);
      expect(pool.connection("work").state).toBe("open");
      signOut();
      await until("no session once signed out", () => dv.sessionCount("alice") === 0, SESSIONS_MS);
      expect(pool.connection("work").state).toBe("none");
    } finally {
      await pool.closeAll();
    }
  }, 60_000);

  it("leaves the connection alone while the secret cannot be read, and the next call says why, as AUTH_REQUIRED", async () => {
    setSecret(secrets, "work", PASSWORD);
    const account = configWith(false).accounts[0];
    if (!account) throw new Error("no account");
    const pool = new ImapPool(secrets, 50);
    const file = secretFile(secrets, "work");
    try {
      await pool.read(account, (c) => c.list());
      // A link to itself: stat and read both fail (ELOOP), as they would for a file root cannot read
      fs.rmSync(file);
      fs.symlinkSync(path.basename(file), file);
      // Checks run meanwhile (every 50 ms) and throw nothing out of their timer
      await new Promise((r) => setTimeout(r, 300));
      expect(pool.connection("work").state).toBe("open");
      const err = await pool
        .read(account, (c) => c.list())
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      // Said as what it is, not as an internal error, and nothing of the file in it
      expect(err).toMatchObject({
        reason: "AUTH_REQUIRED",
        message: `the stored secret of account work cannot be read (ELOOP: ${file})`,
      });
      // A directory in its place: looked at, but not read
      fs.rmSync(file);
      fs.mkdirSync(file);
      await expect(pool.read(account, (c) => c.list())).rejects.toMatchObject({
        reason: "AUTH_REQUIRED",
        message: `the stored secret of account work cannot be read (EISDIR: ${file})`,
      });
      fs.rmSync(file, { recursive: true });
      setSecret(secrets, "work", PASSWORD);
      expect((await pool.read(account, (c) => c.list())).length).toBeGreaterThan(0);
    } finally {
      await pool.closeAll();
    }
  }, 60_000);

  it("logs the watch out on sign-out, keeps it down while signed out, and starts it with a new secret", async () => {
    setSecret(secrets, "work", PASSWORD);
    const config = configWith(true);
    const lines: string[] = [];
    const runner = new CacheRunner(
      path.join(dir, "watch.db"),
      () => config,
      secrets,
      (line) => lines.push(line),
      { watchRetryMs: 200, loginCheckMs: 100 },
    );
    try {
      runner.start();
      await until("the watch", () => isWatched("work", "INBOX"));
      await until("one session, the watch's", () => dv.sessionCount("alice") === 1, SESSIONS_MS);

      signOut();
      await until("no session once signed out", () => dv.sessionCount("alice") === 0, SESSIONS_MS);
      await until("the watch ended", () => !isWatched("work", "INBOX"));
      expect(lines.some((l) => /cache watch of work: its sign-in changed/.test(l))).toBe(true);
      // Retried every 200 ms meanwhile: none of the tries logs in
      await new Promise((r) => setTimeout(r, 1_000));
      expect(dv.sessionCount("alice")).toBe(0);
      expect(isWatched("work", "INBOX")).toBe(false);
      const inbox = runner.status(["work"]).accounts[0]?.folders.find((f) => f.name === "INBOX");
      expect(inbox?.watching).toBe(false);
      // and why, from the watch's failed start (the login's reason and message)
      expect(inbox?.watch_error).toBe("no password is stored for account work");

      // Signed in again (here: the password stored anew): the watch comes back by itself
      setSecret(secrets, "work", PASSWORD);
      await until("the watch again", () => isWatched("work", "INBOX"));
      await until("one session again", () => dv.sessionCount("alice") === 1, SESSIONS_MS);
    } finally {
      await runner.stop();
    }
    await until("no session after stop", () => dv.sessionCount("alice") === 0, SESSIONS_MS);
  }, 90_000);

  it.each([
    {
      change: "is signed out",
      act: signOut,
      error: {
        reason: "AUTH_REQUIRED",
        message: "the sync of account work was ended: the account was signed out while it ran",
      },
    },
    {
      change: "gets a new password",
      act: () => setSecret(secrets, "work", PASSWORD),
      error: {
        reason: "SERVER_UNAVAILABLE",
        message:
          "the sync of account work was ended: its sign-in or connection settings changed while it ran; the next sync uses the new ones",
      },
    },
  ])(
    "ends a first sync under way when its account $change",
    async ({ act, error }) => {
      setSecret(secrets, "work", PASSWORD);
      const config = configWith(false);
      const file = path.join(dir, `pass-${Date.now()}.db`);
      const runner = new CacheRunner(
        file,
        () => config,
        secrets,
        () => undefined,
        { loginCheckMs: 100 },
      );
      // The sync's one header batch holds the write lock for 8 s first: the pass stays under way
      holdWriterTransactions(8_000);
      try {
        const account = config.accounts[0];
        if (!account) throw new Error("no account");
        const started = Date.now();
        const pass = runner.sync(account);
        await lockTaken(file);
        await until("the pass's session", () => dv.sessionCount("alice") === 1, SESSIONS_MS);
        act();
        // Well before the held transaction (8 s) lets the pass go on
        await until("no session once the secret changed", () => dv.sessionCount("alice") === 0, 5_000);
        expect(Date.now() - started).toBeLessThan(8_000);
        const report = await pass;
        expect(report.ok).toBe(false);
        // What it reports is why it ended, not the closed connection's "unreachable"
        expect(report.error).toEqual(error);
      } finally {
        holdWriterTransactions(0);
        await runner.stop();
      }
    },
    90_000,
  );
});
