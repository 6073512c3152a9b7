/**
 * A change another client makes in a folder other than INBOX reaches the cache within seconds: the
 * daemon's watch asks the server for NOTIFY (RFC 5465) on every personal folder and syncs the folder
 * a notification names. The background pass runs once an hour here, so only the watch can explain
 * a fresh answer; every answer checked is the cache's (`source: "cache"`). A server that does not
 * offer NOTIFY keeps today's watch on INBOX alone.
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capabilitiesWithout } from "../src/testing/dovecot.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const CACHE = "background = true\nsync_interval_seconds = 3600\nfresh_seconds = 3600";
const FOLDER = "Projects";

const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject,
    date: new Date("2026-03-01T10:00:00Z"),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

/** Polls `probe` until it returns a value, failing after `ms`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function folderState(env: MailEnv, name: string) {
  const s = await env.client.cacheStatus({ accounts: ["work"] });
  return s.accounts[0]?.folders.find((f) => f.name === name);
}

/**
 * The cache's answer to `query` on the work account (auto source): its subjects, sorted; undefined
 * while auto answers from the server (the folder's sync of the change under way, so not complete for
 * that moment: the server's answer is the right one then). The tests poll until the cache answers.
 */
async function cacheSubjects(env: MailEnv, query: string): Promise<string[] | undefined> {
  const res = await env.client.search({ query, accounts: ["work"] });
  return res.source === "cache" ? res.rows.map((r) => r.subject).sort() : undefined;
}

const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);

describe("NOTIFY keeps every folder fresh", () => {
  let env: MailEnv;
  let other: ImapFlow;

  beforeAll(async () => {
    env = await startMailEnv({ cache: CACHE });
    other = await env.dv.connect("alice");
    await other.mailboxCreate(FOLDER);
    await other.append(FOLDER, msg("Notify one"));
    await until("the watch on Projects", async () => {
      const f = await folderState(env, FOLDER);
      return f?.watching && f.fresh && f.headers_cached === 1 ? f : undefined;
    });
  }, 60_000);
  afterAll(async () => {
    await other?.logout().catch(() => undefined);
    await env?.stop();
  });

  it("reports the non-INBOX folder as watched and fresh", async () => {
    expect(await folderState(env, FOLDER)).toMatchObject({ watching: true, fresh: true, watch_error: null });
    expect(await cacheSubjects(env, `in:${FOLDER}`)).toEqual(["Notify one"]);
  });

  it("finds a message another client appended to it", async () => {
    await other.append(FOLDER, msg("Notify two"));
    const want = ["Notify one", "Notify two"];
    const got = await until("the appended message", async () => {
      const s = await cacheSubjects(env, `in:${FOLDER} subject:notify`);
      return s && same(s, want) ? s : undefined;
    });
    expect(got).toEqual(want);
  });

  it("sees a flag another client set on it", async () => {
    await other.mailboxOpen(FOLDER);
    const uids = (await other.search({ subject: "Notify one" }, { uid: true })) || [];
    expect(uids).toHaveLength(1);
    expect(await other.messageFlagsAdd(uids, ["\\Flagged"], { uid: true })).toBe(true);
    const got = await until("the flag", async () => {
      const s = await cacheSubjects(env, `in:${FOLDER} is:flagged`);
      return s && s.length > 0 ? s : undefined;
    });
    expect(got).toEqual(["Notify one"]);
  });

  it("drops a message another client expunged from it", async () => {
    const uids = (await other.search({ subject: "Notify two" }, { uid: true })) || [];
    expect(uids).toHaveLength(1);
    expect(await other.messageDelete(uids, { uid: true })).toBe(true);
    const got = await until("the expunge", async () => {
      const s = await cacheSubjects(env, `in:${FOLDER} subject:notify`);
      return s && same(s, ["Notify one"]) ? s : undefined;
    });
    expect(got).toEqual(["Notify one"]);
  });
});

describe("a server without NOTIFY", () => {
  let env: MailEnv;

  beforeAll(async () => {
    env = await startMailEnv({ cache: CACHE }, capabilitiesWithout("NOTIFY"));
    const other = await env.dv.connect("alice");
    await other.mailboxCreate(FOLDER);
    await other.logout();
    // A pass brings the new folder into the cache (no watch would).
    const { accounts } = await env.client.cacheSync({ accounts: ["work"] });
    expect(accounts.map((a) => a.ok)).toEqual([true]);
    await until("the watch on INBOX", async () => {
      const inbox = await folderState(env, "INBOX");
      const projects = await folderState(env, FOLDER);
      return inbox?.watching && projects ? inbox : undefined;
    });
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("watches INBOX alone, and other folders keep the last-sync rule", async () => {
    expect(await folderState(env, "INBOX")).toMatchObject({ watching: true });
    expect(await folderState(env, FOLDER)).toMatchObject({ watching: false });
  });
});
