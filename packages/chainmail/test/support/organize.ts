// What the organize tests share: a small message by subject, a ref found on the server, and a
// folder's messages with their flags read over a client of their own (not the daemon's).
import { expect } from "vitest";
import { buildMessage } from "../../src/testing/corpus.js";
import type { MailEnv } from "../../src/testing/mailenv.js";

export const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject,
    date: new Date("2026-01-05T10:00:00Z"),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

/** The ref of work's one message matching the query, by a server search. */
export async function refOf(env: MailEnv, query: string): Promise<string> {
  const rows = (await env.client.search({ query, accounts: ["work"], source: "server" })).rows;
  expect(rows).toHaveLength(1);
  return rows[0]!.ref;
}

/** The subjects in a folder of alice's with their flags, sorted; [] for a folder that does not exist. */
export async function folderState(env: MailEnv, folder: string) {
  const c = await env.dv.connect("alice");
  try {
    const lock = await c.getMailboxLock(folder, { readOnly: true });
    try {
      const out: Array<{ subject: string; flags: string[] }> = [];
      for await (const m of c.fetch("1:*", { envelope: true, flags: true }))
        out.push({ subject: m.envelope?.subject ?? "", flags: [...(m.flags ?? [])].sort() });
      return out.sort((a, b) => a.subject.localeCompare(b.subject));
    } finally {
      lock.release();
    }
  } catch (err) {
    if ((err as { mailboxMissing?: boolean }).mailboxMissing) return [];
    throw err;
  } finally {
    await c.logout().catch(() => undefined);
  }
}

export const subjects = async (env: MailEnv, folder: string) =>
  (await folderState(env, folder)).map((m) => m.subject);
