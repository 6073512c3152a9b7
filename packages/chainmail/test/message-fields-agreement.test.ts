/**
 * get_message gives the same From, To, Cc, Reply-To, Subject and Date whether the cache or the
 * server answers, and a search row the same From, Subject and Date, whatever a sender writes there:
 * encoded words (broken ones too), groups, quoted names with commas, missing addresses, a Date in
 * another zone or none at all. Made by hand and by fast-check from the pieces mail in the wild holds.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailEnv } from "../src/testing/mailenv.js";
import { fromCacheThenServer, startSyncedEnv } from "./support/both-paths.js";

let env: MailEnv;

interface Fields {
  from?: string;
  to?: string;
  cc?: string;
  replyTo?: string;
  subject?: string;
  date?: string;
}

const HOSTILE: Fields[] = [
  { from: '"Doe, Jane" <jane@example.com>', to: "a@example.com, B <b@example.com>" },
  { from: "=?utf-8?B?w4Zyw7A=?= <ae@example.com>", subject: "=?utf-8?Q?caf=C3=A9?= menu" },
  { from: "=?utf-8?B?broken <x@example.com>", subject: "=?utf-8?B?!!!?=" },
  { to: "undisclosed-recipients:;", cc: "Team: a@example.com, b@example.com;" },
  { from: "no-address-here", to: "<>" },
  { replyTo: "Ann <ann@example.com>", from: "Ann <ann@example.com>" },
  { replyTo: "other@example.com", date: "Tue, 1 Dec 2026 23:30:00 -0800" },
  { date: "not a date" },
  { date: "Mon, 07 Dec 2026 10:00:00" },
  { subject: "Re: =?iso-8859-1?q?gr=FC=DFe?= =?utf-8?q?=E2=80=94?= end" },
  { subject: "   spaced   out   " },
  { from: "a@example.com (Ann in a comment)", to: '"quoted\\"name" <q@example.com>' },
];

const piece = fc.constantFrom(
  "Ann",
  '"Doe, J"',
  "<a@example.com>",
  "b@example.com",
  ",",
  " ",
  ";",
  ":",
  "=?utf-8?Q?=C3=A9?=",
  "=?utf-8?B?w6k=?=",
  "=?x?",
  "(c)",
  "<>",
);
const value = fc.array(piece, { minLength: 1, maxLength: 6 }).map((xs) => xs.join("").trim());
const made = fc.sample(
  fc.record(
    { from: value, to: value, cc: value, replyTo: value, subject: value },
    { requiredKeys: ["from", "subject"] },
  ),
  { numRuns: 20, seed: 11 },
);
const CASES = [...HOSTILE, ...made];

const raw = (i: number, f: Fields) =>
  [
    `From: ${f.from ?? "Ann <ann@example.com>"}`,
    ...(f.to !== undefined ? [`To: ${f.to}`] : ["To: alice@example.com"]),
    ...(f.cc !== undefined ? [`Cc: ${f.cc}`] : []),
    ...(f.replyTo !== undefined ? [`Reply-To: ${f.replyTo}`] : []),
    `Subject: ${f.subject ?? "plain"}`,
    ...(f.date !== undefined ? [`Date: ${f.date}`] : []),
    `Message-ID: <fields-${i}@example.com>`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Message ${i}.`,
    "",
  ].join("\r\n");

beforeAll(async () => {
  env = await startSyncedEnv(CASES.map((f, i) => raw(i, f)));
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

const read = async (source: "cache" | "server") => {
  const found = await env.client.search({ query: "in:inbox", accounts: ["work"], source, limit: 100 });
  const { messages } = await env.client.getMessages({ refs: found.rows.map((r) => r.ref) });
  return messages
    .map((m) => {
      const row = found.rows.find((r) => r.ref === m.ref);
      return {
        id: m.message_id,
        source: m.source,
        from: m.from,
        to: m.to,
        cc: m.cc,
        reply_to: m.reply_to,
        subject: m.subject,
        date: m.date,
        row: { from: row?.from, subject: row?.subject, date: row?.date },
      };
    })
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));
};

describe("From, To, Cc, Reply-To, Subject and Date", () => {
  it("read the same from the cache and from the server", async () => {
    const { fromCache, fromServer } = await fromCacheThenServer(env, read);
    expect(fromCache).toHaveLength(CASES.length);
    expect(fromCache).toEqual(fromServer);
    // Dovecot's stand-ins for what is no address are none, not addresses to write to
    expect(JSON.stringify(fromCache)).not.toContain("MISSING_");
    // A Date no clock holds is no date (it failed every server search of the folder before)
    expect(fromServer.find((m) => m.id === "<fields-7@example.com>")?.date).toBeNull();
  });

  it("reports new mail with a Date no clock holds in the event log, with no date", async () => {
    const cursor = (await env.client.readEvents({ cursor: 0, limit: 200 })).next_cursor;
    await env.dv.appendMessages("alice", "INBOX", [{ raw: raw(99, { date: "32 Foo 99999 99:99" }) }]);
    const synced = await env.client.cacheSync({ accounts: ["work"] });
    expect(synced.accounts[0]).toMatchObject({ ok: true, added: 1 });
    const events = (await env.client.readEvents({ cursor, kinds: ["new"] })).events;
    expect(events).toEqual([
      expect.objectContaining({ row: expect.objectContaining({ subject: "plain", date: null }) }),
    ]);
  });
});
