/**
 * Parenthesized field groups on both search paths (the server's IMAP SEARCH and the cache), and
 * item: terms, answered from the cache over the threads linked to an item and the items below it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

const mail = (id: string, subject: string, from: string, extra = "") =>
  `Message-ID: ${id}\r\nFrom: ${from}\r\nTo: alice@example.com\r\nSubject: ${subject}\r\nDate: Mon, 1 Dec 2026 10:00:00 +0000\r\n${extra}Content-Type: text/plain\r\n\r\nabout ${subject}\r\n`;

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages("alice", "INBOX", [
    { raw: mail("<d1@example.com>", "Dinner and a movie", "Carol <carol@example.com>") },
    { raw: mail("<d2@example.com>", "Dinner plans", "Dana <dana@example.com>") },
    { raw: mail("<m1@example.com>", "Movie night", "Carol <carol@example.com>") },
    {
      raw: mail(
        "<m2@example.com>",
        "Re: Movie night",
        "Erin <erin@example.com>",
        "In-Reply-To: <m1@example.com>\r\nReferences: <m1@example.com>\r\n",
      ),
    },
    { raw: mail("<b1@example.com>", "Budget review", "Dana <dana@example.com>") },
  ]);
  await env.client.call("cache.sync", { accounts: ["work"] });
});
afterAll(async () => {
  await env?.stop();
});

async function subjects(query: string, source: "server" | "cache" | "auto") {
  const r = await env.client.search({ query, accounts: ["work"], source, limit: 200 });
  return { source: r.source, subjects: r.rows.map((x) => x.subject).sort() };
}

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err as { reason: string; message: string };
  }
  throw new Error("expected a failure");
};

describe("field groups on both paths", () => {
  const cases: Array<[string, string[]]> = [
    ["subject:(dinner movie)", ["Dinner and a movie"]],
    ["subject:(dinner OR movie)", ["Dinner and a movie", "Dinner plans", "Movie night", "Re: Movie night"]],
    ["subject:(dinner -movie)", ["Dinner plans"]],
    ["subject:({night plans} -re)", ["Dinner plans", "Movie night"]],
    ["from:(carol OR dana) -subject:(budget)", ["Dinner and a movie", "Dinner plans", "Movie night"]],
    [
      "-from:(carol dana erin)",
      ["Budget review", "Dinner and a movie", "Dinner plans", "Movie night", "Re: Movie night"],
    ],
  ];
  for (const [query, want] of cases) {
    it(`${query}: the server and the cache give the same messages`, async () => {
      const server = await subjects(query, "server");
      const cache = await subjects(query, "cache");
      expect(server).toEqual({ source: "server", subjects: want });
      expect(cache).toEqual({ source: "cache", subjects: want });
    });
  }
});

describe("item: terms", () => {
  it("find the linked threads of an item and the live items below it, from the cache only", async () => {
    const c = env.client;
    const refOf = async (subject: string) =>
      (await c.search({ query: `subject:"${subject}"`, accounts: ["work"], source: "server" })).rows.find(
        (r) => r.subject === subject,
      )!.ref;
    const epic = await c.call("item.create", { type: "epic", title: "Weekend", area: "personal" });
    const task = await c.call("item.create", { type: "task", title: "Book table", parent_id: epic.item.id });
    await c.call("item.link", { item_id: epic.item.id, ref: await refOf("Re: Movie night") });
    await c.call("item.link", { item_id: task.item.id, ref: await refOf("Dinner plans") });
    const id = epic.item.id;

    expect(await subjects(`item:${task.item.id}`, "cache")).toEqual({
      source: "cache",
      subjects: ["Dinner plans"],
    });
    expect(await subjects(`item:${id}`, "auto")).toEqual({
      source: "cache",
      subjects: ["Dinner plans", "Movie night", "Re: Movie night"],
    });
    expect(await subjects(`item:${id} -subject:(re OR dinner)`, "cache")).toEqual({
      source: "cache",
      subjects: ["Movie night"],
    });
    expect(await subjects(`-item:${id} subject:(dinner OR movie)`, "cache")).toEqual({
      source: "cache",
      subjects: ["Dinner and a movie"],
    });
    const server = await failure(c.search({ query: `item:${id}`, source: "server" }));
    expect(server).toMatchObject({
      reason: "UNSUPPORTED",
      message: 'item: searches need the cache, so source "server" refuses them',
    });
    expect((await failure(c.search({ query: "item:it_nope", source: "cache" }))).reason).toBe("NOT_FOUND");
    // A deleted child's links leave the parent's search.
    await c.call("item.delete", { id: task.item.id });
    expect((await subjects(`item:${id}`, "cache")).subjects).toEqual(["Movie night", "Re: Movie night"]);
  });
});
