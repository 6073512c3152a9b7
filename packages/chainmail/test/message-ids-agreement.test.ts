/**
 * get_message gives the same Message-ID, In-Reply-To, References and thread key whether the cache
 * or the server answers, whatever a sender writes in those headers: brackets missing, commas,
 * comments, junk between ids, several ids in In-Reply-To, folded lines. The cache reads them from
 * IMAP's ENVELOPE and the raw References line; the server path reads the message it fetched. A
 * reader (an agent matching a reply to its original, a thread id it links a work item to) must not
 * see one message two ways.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailEnv } from "../src/testing/mailenv.js";
import { fromCacheThenServer, startSyncedEnv } from "./support/both-paths.js";

let env: MailEnv;

/** Header values a sender can write (RFC 5322's msg-id, and what mail in the wild holds instead). */
const HOSTILE: Array<{ id?: string; irt?: string; refs?: string }> = [
  { id: "<plain@example.com>", irt: "<a@example.com>", refs: "<r@example.com> <a@example.com>" },
  { id: "no-brackets@example.com", irt: "a@example.com", refs: "r@example.com a@example.com" },
  { id: "<x@example.com> (comment)", irt: "<a@example.com> (Alice's message of Monday)" },
  { irt: "<a@example.com> <b@example.com>", refs: "<r@example.com>,<a@example.com>" },
  { irt: "Your message of Monday <a@example.com>", refs: "junk <r@example.com> more junk <a@example.com>" },
  { refs: "<r@example.com>\r\n <a@example.com>\r\n\t<b@example.com>" },
  { id: "<>", irt: "<>", refs: "<> <a@example.com>" },
  {
    id: "<a b@example.com>",
    irt: "<with space@example.com>",
    refs: "<un<closed@example.com> <ok@example.com>",
  },
  { id: '<"quoted local"@example.com>', refs: "<R@Example.COM> <r@example.com>" },
];

/** More of them, made by fast-check from the pieces these are made of (a fixed seed: the same each run). */
const piece = fc.constantFrom(
  "<a@example.com>",
  "<B@Example.com>",
  "c@example.com",
  "<>",
  "<",
  ">",
  ",",
  " ",
  "(note)",
  "\r\n ",
  "junk",
  '"q"',
);
const value = fc.array(piece, { minLength: 1, maxLength: 6 }).map((xs) => xs.join("").trim());
const made = fc.sample(fc.record({ id: fc.option(value, { nil: undefined }), irt: value, refs: value }), {
  numRuns: 24,
  seed: 7,
});
const CASES = [...HOSTILE, ...made].filter((c) => Object.values(c).every((v) => v === undefined || v !== ""));

const raw = (
  i: number,
  c: { id?: string | undefined; irt?: string | undefined; refs?: string | undefined },
) =>
  [
    "From: Ann <ann@example.com>",
    "To: alice@example.com",
    `Subject: ids ${i}`,
    "Date: Mon, 07 Dec 2026 10:00:00 +0000",
    ...(c.id !== undefined ? [`Message-ID: ${c.id}`] : []),
    ...(c.irt !== undefined ? [`In-Reply-To: ${c.irt}`] : []),
    ...(c.refs !== undefined ? [`References: ${c.refs}`] : []),
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Message ${i}.`,
    "",
  ].join("\r\n");

beforeAll(async () => {
  env = await startSyncedEnv(CASES.map((c, i) => raw(i, c)));
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

/** Each message as get_message gives it, with its search row's ids (the cache's or the server's). */
const ids = async (searchSource: "cache" | "server") => {
  const found = await env.client.search({
    query: 'subject:"ids"',
    accounts: ["work"],
    source: searchSource,
    limit: 100,
  });
  const { messages } = await env.client.getMessages({ refs: found.rows.map((r) => r.ref) });
  return messages
    .map((m) => {
      const row = found.rows.find((r) => r.ref === m.ref);
      return {
        subject: m.subject,
        source: m.source,
        message_id: m.message_id,
        in_reply_to: m.in_reply_to,
        references: m.references,
        thread_id: m.thread_id,
        row: { message_id: row?.message_id, thread_id: row?.thread_id },
      };
    })
    .sort((a, b) => a.subject.localeCompare(b.subject));
};

describe("Message-ID, In-Reply-To and References", () => {
  it("read the same from the cache and from the server, in search rows and get_message", async () => {
    const { fromCache, fromServer } = await fromCacheThenServer(env, ids);
    expect(fromCache).toHaveLength(CASES.length);
    expect(fromCache).toEqual(fromServer);
    // A search row names the thread and Message-ID get_message names
    for (const m of fromCache) expect(m.row).toEqual({ message_id: m.message_id, thread_id: m.thread_id });
  });
});
