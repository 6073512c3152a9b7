/**
 * config.toml edits on a running daemon: calls in flight keep their connections (a changed account
 * gets a new one after them, once the owner confirms the change), and an added account gets its cache pass and INBOX watch at once.
 */
import net from "node:net";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setSecret } from "../src/secrets.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

/** A message whose body makes fetching and parsing it take a while. */
const big = (i: number) =>
  [
    "From: Big Sender <big@example.com>",
    "To: alice@example.com",
    `Subject: Big report ${i}`,
    `Message-ID: <big${i}@example.com>`,
    "Date: Mon, 1 Dec 2025 10:00:00 +0000",
    "Content-Type: text/plain; charset=utf-8",
    "",
    ...Array.from({ length: 40_000 }, (_, n) => `line ${n} of report ${i}, padding padding padding`),
    "",
  ].join("\r\n");

let bigRefs: string[] = [];

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    Array.from({ length: 3 }, (_, i) => ({ raw: big(i) })),
  );
  // A second folder: a call that reads both has IMAP left to do after its long first part.
  await env.dv.appendMessage("alice", "Archive", big(3).slice(0, 1000));
  bigRefs = (
    await env.client.search({ query: 'subject:"big report"', accounts: ["work"], limit: 50 })
  ).rows.map((r) => r.ref);
});
afterAll(async () => {
  await env?.stop();
});

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a call that keeps work's pooled connection busy for about a second. */
function longCall() {
  const t = { reloadedAt: 0, doneAt: 0 };
  const p = env.client.getMessages({ refs: bigRefs, full: true }).finally(() => {
    t.doneAt = Date.now();
  });
  return { p, t };
}

/** The Dovecot session ids (mpid) of alice's logins so far, oldest first. */
const aliceSessions = () => [...env.dv.log().matchAll(/Login: user=<alice>.*?mpid=(\d+)/g)].map((m) => m[1]!);
/** How a session ended, once Dovecot logged it: "Logged out" (LOGOUT) or "Disconnected: ...". */
const endOf = (pid: string) =>
  env.dv
    .log()
    .split("\n")
    .find((l) => l.includes(`imap(alice)<${pid}>`) && /Logged out|Disconnected/.test(l));

const SUBJECTS = ["Big report 0", "Big report 1", "Big report 2", "Big report 3"];

describe("a config reload", () => {
  it("leaves a call in flight on its connection; it completes and the new policy applies", async () => {
    await env.client.listFolders({ accounts: ["work"] });
    const sessions = aliceSessions();
    const pooled = sessions.at(-1)!;
    const { p, t } = longCall();
    await sleep(30);
    env.writeConfig({ work: { allow_expunge: true } });
    // Any request makes the daemon re-read the edited file at once (a widening once confirmed).
    await env.confirmPolicy();
    const accounts = await env.client.listAccounts();
    t.reloadedAt = Date.now();
    expect(accounts.accounts.find((a) => a.name === "work")?.allow_expunge).toBe(true);
    const got = await p;
    expect(t.reloadedAt).toBeLessThan(t.doneAt);
    expect(got.messages.map((m) => m.subject).sort()).toEqual(SUBJECTS);
    expect(got.messages.find((m) => m.subject === "Big report 2")?.body).toContain("line 39999 of report 2");
    // The call ran once, on the connection it started on, which is still open and still used.
    await sleep(100);
    expect(endOf(pooled)).toBeUndefined();
    await env.client.listFolders({ accounts: ["work"] });
    expect(aliceSessions()).toEqual(sessions);
    env.writeConfig({});
  });

  it("gives an account whose server settings changed a new connection after the call in flight", async () => {
    await env.client.listFolders({ accounts: ["work"] });
    const sessions = aliceSessions();
    const pooled = sessions.at(-1)!;
    const { p, t } = longCall();
    await sleep(30);
    env.writeConfig({ work: { port: await deadPort() } });
    // A new port is a new server for the password: it applies once the owner confirms it.
    await env.confirmPolicy();
    t.reloadedAt = Date.now();
    // The next call on work waits for the one in flight, then connects with the new (dead) port.
    const next = env.client.listFolders({ accounts: ["work"] });
    expect((await p).messages.map((m) => m.subject).sort()).toEqual(SUBJECTS);
    expect(t.reloadedAt).toBeLessThan(t.doneAt);
    expect((await next).partial).toMatchObject([
      { account: "work", error: { reason: "SERVER_UNAVAILABLE" } },
    ]);
    // The old connection was logged out after the call, not cut under it, and nothing ran twice.
    for (let i = 0; i < 50 && !endOf(pooled); i++) await sleep(50);
    expect(endOf(pooled)).toMatch(/Logged out/);
    expect(aliceSessions()).toEqual(sessions);
    // home kept its settings and its connection.
    expect(
      (await env.client.listFolders({ accounts: ["home"] })).accounts[0]!.folders.length,
    ).toBeGreaterThan(0);
    env.writeConfig({});
    await env.confirmPolicy();
    expect(
      (await env.client.listFolders({ accounts: ["work"] })).accounts[0]!.folders.length,
    ).toBeGreaterThan(0);
  });
});

describe("an account added to config.toml", () => {
  it("gets its first pass and its INBOX watch without a restart; new mail reaches the cache", async () => {
    env.writeConfig({ cache: "background = true\nsync_interval_seconds = 3600" });
    await env.client.listAccounts();
    setSecret(env.home.secretsDir, "later", "carol-secret-pw");
    await env.dv.appendMessage("carol", "INBOX", big(7).replace("Big report 7", "Before the account"));
    env.writeConfig({
      cache: "background = true\nsync_interval_seconds = 3600",
      extra: [{ name: "later", user: "carol" }],
    });
    // A new account connects nowhere until the owner confirms its server settings (as at a first
    // start); the confirmation needs no restart either.
    const added = await env.client.listAccounts();
    expect(added.accounts.find((a) => a.name === "later")).toMatchObject({ confirmation_pending: true });
    await env.confirmPolicy();
    // No request: the daemon syncs the new account by itself.
    const cache = new Database(env.home.cacheFile, { readonly: true });
    const synced = () =>
      cache
        .prepare("SELECT count(*) AS n FROM folders WHERE account = 'later' AND last_sync IS NOT NULL")
        .get() as {
        n: number;
      };
    for (let i = 0; i < 100 && synced().n === 0; i++) await sleep(100);
    expect(synced().n).toBeGreaterThan(0);
    cache.close();

    let watching = false;
    for (let i = 0; i < 100 && !watching; i++) {
      const s = await env.client.cacheStatus({ accounts: ["later"] });
      watching = s.accounts[0]?.folders.find((f) => f.name === "INBOX")?.watching === true;
      if (!watching) await sleep(100);
    }
    expect(watching).toBe(true);
    await env.dv.appendMessage("carol", "INBOX", big(8).replace("Big report 8", "After the watch"));
    let found = 0;
    for (let i = 0; i < 100 && found === 0; i++) {
      found = (
        await env.client.search({ query: 'subject:"after the watch"', accounts: ["later"], source: "cache" })
      ).count;
      if (!found) await sleep(100);
    }
    expect(found).toBe(1);
    const before = await env.client.search({
      query: 'subject:"before the account"',
      accounts: ["later"],
      source: "cache",
    });
    expect(before.count).toBe(1);
  });
});
