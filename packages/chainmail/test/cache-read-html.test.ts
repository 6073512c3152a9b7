/**
 * get_message reads a message whose body the cache made from HTML from the server: the cache keeps
 * that text for its word index, without the links' addresses, and a reader needs them (an agent
 * asked to follow a sign-in link got none from the cache). A text message is read from the cache;
 * both are found in the cache by their words. Bodies stored before the cache kept that mark are
 * judged by their noted text part.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
const LINK = "https://example.com/confirm?token=zq7xv";

beforeAll(async () => {
  env = await startMailEnv();
  const common = {
    from: "Shop <shop@example.com>",
    to: ["alice@example.com"],
    date: new Date("2026-12-01T10:00:00Z"),
  };
  await env.dv.appendMessages("alice", "INBOX", [
    {
      raw: buildMessage({
        ...common,
        subject: "Confirm your address",
        messageId: "<confirm@example.com>",
        html: `<p>Please <a href="${LINK}">confirm your address</a>.</p>`,
      }),
    },
    {
      raw: buildMessage({
        ...common,
        subject: "Your receipt",
        messageId: "<receipt@example.com>",
        text: "Thanks for your order.",
      }),
    },
  ]);
  await env.client.cacheSync({ accounts: ["work"] });
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

async function read() {
  const found = await env.client.search({
    query: "from:shop@example.com",
    accounts: ["work"],
    source: "cache",
  });
  const refs = ["Confirm your address", "Your receipt"].map(
    (s) => found.rows.find((r) => r.subject === s)?.ref as string,
  );
  return (await env.client.getMessages({ refs })).messages;
}

it("reads an HTML message's body, links and all, from the server; a text message from the cache", async () => {
  const [html, text] = await read();
  expect([html?.source, text?.source]).toEqual(["server", "cache"]);
  expect(html?.body).toBe(`Please confirm your address [${LINK}].`);
  expect(text?.body).toBe("Thanks for your order.");
  // The cache has the HTML's words, not its links' addresses
  const word = await env.client.search({ query: "confirm", accounts: ["work"], source: "cache" });
  expect(word.rows.map((r) => r.subject)).toEqual(["Confirm your address"]);
  expect((await env.client.search({ query: "zq7xv", accounts: ["work"], source: "cache" })).count).toBe(0);
});

it("judges a body stored before the mark by its text part", async () => {
  const db = new Database(env.home.cacheFile);
  try {
    db.pragma("busy_timeout = 5000");
    expect(db.prepare("SELECT count(*) AS n FROM bodies WHERE from_html IS NOT NULL").get()).toEqual({
      n: 2,
    });
    db.exec("UPDATE bodies SET from_html = NULL");
  } finally {
    db.close();
  }
  const [html, text] = await read();
  expect([html?.source, text?.source]).toEqual(["server", "cache"]);
});
