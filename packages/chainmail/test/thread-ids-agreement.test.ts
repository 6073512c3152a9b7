/**
 * get_thread names the same members whether the cache or the server answers it, when the replies
 * carry their ids the ways mail in the wild does: In-Reply-To with words around the id, References
 * with junk or commas between ids, an id in other letter case, a reply with In-Reply-To alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailEnv } from "../src/testing/mailenv.js";
import { fromCacheThenServer, startSyncedEnv } from "./support/both-paths.js";

let env: MailEnv;

const mail = (n: number, id: string, extra: string[] = []) =>
  [
    "From: Ann <ann@example.com>",
    "To: alice@example.com",
    `Subject: trip ${n}`,
    `Date: Mon, 0${(n % 9) + 1} Dec 2026 10:00:00 +0000`,
    `Message-ID: ${id}`,
    ...extra,
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Part ${n} of the trip.`,
    "",
  ].join("\r\n");

const MAIL = [
  mail(1, "<root@example.com>"),
  mail(2, "<r2@example.com>", ["In-Reply-To: Ann's message of Monday <root@example.com>"]),
  mail(3, "<r3@example.com>", ["References: junk <root@example.com>, <r2@example.com>"]),
  mail(4, "<r4@example.com>", ["In-Reply-To: <ROOT@Example.com>"]),
  mail(5, "<r5@example.com>", [
    "References: <root@example.com>\r\n\t<r3@example.com>",
    "In-Reply-To: <r3@example.com>",
  ]),
  mail(6, "<other@example.com>", ["In-Reply-To: root@example.com"]),
  // Another thread whose ids hold "root@example.com" within them: never a member of the first
  mail(7, "<xroot@example.com>"),
  mail(8, "<r8@example.com>", ["In-Reply-To: <xroot@example.com>", "References: <xroot@example.com>"]),
];

beforeAll(async () => {
  env = await startSyncedEnv(MAIL);
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

/** Each message's thread as get_thread gives it (the cache's or the server's), by subject. */
const threads = async () => {
  const found = await env.client.search({
    query: 'subject:"trip"',
    accounts: ["work"],
    source: "cache",
    limit: 50,
  });
  const out: { subject: string; source: string; thread_id: string | undefined; members: string[] }[] = [];
  for (const row of found.rows) {
    const t = await env.client.getThread({ ref: row.ref });
    out.push({
      subject: row.subject,
      source: t.source,
      thread_id: t.messages[0]?.thread_id,
      members: t.messages.map((m) => String(m.message_id)).sort(),
    });
  }
  return out.sort((a, b) => a.subject.localeCompare(b.subject));
};

describe("get_thread on replies with their ids written every which way", () => {
  it("names the same members from the cache and from the server", async () => {
    const { fromCache, fromServer } = await fromCacheThenServer(env, threads);
    expect(fromCache).toEqual(fromServer);
    const thread = (subject: string) => fromCache.find((t) => t.subject === subject)?.members;
    expect(thread("trip 1")).toHaveLength(6);
    expect(thread("trip 8")).toEqual(["<r8@example.com>", "<xroot@example.com>"]);
  });
});
