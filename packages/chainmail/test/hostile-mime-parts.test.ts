/**
 * A stranger's message of more MIME parts than mailparser takes (1,000, mailsplit's bound): it broke
 * every search with snippets that found it (the whole search failed), get_message refused it as a
 * header "larger than 1 MB", and the cache kept no body for it, so a text search from the cache
 * missed what the server's found; a reply to it failed. Now it is read by its header and first text
 * part everywhere; a forward that carries its attachments says why it cannot. The cache reads the
 * text part alone of a message whose header passes the parser's other bound (1 MB) too, and
 * get_message reads such a message by the header lines a Message is made of.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { simpleParser } from "mailparser";
import { isMailError } from "../src/errors.js";
import { type SendEnv, startSendEnv } from "../src/testing/sendenv.js";

let env: SendEnv;
const head = (subject: string, type: string) =>
  [
    "From: Mallory <mallory@example.net>",
    "To: alice@example.com",
    `Subject: ${subject}`,
    "Date: Mon, 07 Dec 2026 10:00:00 +0000",
    `Message-ID: <${subject.replace(/\W+/g, "-")}@example.net>`,
    "MIME-Version: 1.0",
    `Content-Type: ${type}`,
    "",
    "",
  ].join("\r\n");
// Attachments and inline text parts (several readable parts: the cache's one-part read does not
// apply, so the backfill fetched it whole, and the parser refused it)
const FILLER =
  "--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=x.bin\r\n\r\nx\r\n--b\r\nContent-Type: text/plain\r\n\r\nfiller\r\n";
const MANY = `${head("many parts", 'multipart/mixed; boundary="b"')}--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe quartz words are here.\r\n${FILLER.repeat(750)}--b--\r\n`;
// A header over mailparser's 1 MB, its lines counted at 64 bytes at least: 17,000 short lines (200 KB,
// so the message is not a large one, which the backfill reads by its part anyway)
const RECEIVED = "X-Trace: a\r\n";
const TALL = `${RECEIVED.repeat(17_000)}${head("tall header", "text/plain; charset=utf-8").replace("\r\n\r\n", "\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")}The quartz words, under a tall h=\r\neader.\r\n`;
const PLAIN = `${head("plain one", "text/plain; charset=utf-8")}The quartz words, plainly.\r\n`;

beforeAll(async () => {
  env = await startSendEnv();
  await env.dv.appendMessages("alice", "INBOX", [{ raw: MANY }, { raw: PLAIN }, { raw: TALL }]);
}, 120_000);
afterAll(async () => env?.stop());

const search = (source: "server" | "cache") =>
  env.client.search({ query: "quartz", accounts: ["work"], source, snippets: true });

it("a search with snippets answers, and get_message reads the first text part", async () => {
  const found = await search("server");
  expect(found.count).toBe(3);
  const many = found.rows.find((r) => r.subject === "many parts");
  expect(many?.snippet).toBeUndefined();
  expect(found.rows.find((r) => r.subject === "plain one")?.snippet).toBe("The quartz words, plainly.");
  const [m] = (await env.client.getMessages({ refs: [many?.ref as string] })).messages;
  // (its 750 other text parts are more than are read one by one: the body says it is cut)
  expect(m).toMatchObject({
    source: "server",
    subject: "many parts",
    body: "The quartz words are here.",
    body_truncated: true,
  });
  expect(m?.attachments).toHaveLength(750);
  // A header past the parser's other bound: read by the lines a Message is made of
  const tall = found.rows.find((r) => r.subject === "tall header");
  const [t] = (await env.client.getMessages({ refs: [tall?.ref as string] })).messages;
  expect(t).toMatchObject({
    source: "server",
    subject: "tall header",
    from: [{ name: "Mallory", address: "mallory@example.net" }],
    message_id: "<tall-header@example.net>",
    body: "The quartz words, under a tall header.",
    body_truncated: false,
  });
});

it("the cache keeps its text: a search from the cache finds what the server's finds", async () => {
  await env.client.call("cache.sync", { accounts: ["work"] });
  const cached = await search("cache");
  expect(cached.source).toBe("cache");
  // The tall header's message too: the backfill reads its text part alone
  expect(cached.rows.map((r) => r.subject).sort()).toEqual(["many parts", "plain one", "tall header"]);
  const ref = cached.rows.find((r) => r.subject === "many parts")?.ref as string;
  // The cache holds its first text part for the words; it reads as more, so the server answers
  const [m] = (await env.client.getMessages({ refs: [ref] })).messages;
  expect(m).toMatchObject({ source: "server", body: "The quartz words are here.", body_truncated: true });
});

it("a reply quotes its first text part; a forward of its attachments is refused with the way out", async () => {
  const ref = (await search("server")).rows.find((r) => r.subject === "many parts")?.ref as string;
  const res = await env.client.call("reply", { ref, body: "Noted." });
  expect(res.status).toBe("sent");
  const sent = await simpleParser(env.relay.received.at(-1)?.raw ?? "");
  expect(sent.subject).toBe("Re: many parts");
  expect(sent.text).toMatch(/wrote:\n> The quartz words are here\./);
  const err = await env.client.call("forward", { ref, to: ["bob@example.com"], body: "FYI" }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isMailError(err) && err.reason).toBe("UNSUPPORTED");
  expect((err as Error).message).toContain("more than 1,000 MIME parts");
  expect(env.relay.received).toHaveLength(1);
  const fwd = await env.client.call("forward", {
    ref,
    to: ["bob@example.com"],
    body: "FYI",
    no_attachments: true,
  });
  expect(fwd.status).toBe("sent");
  // A reply to the message whose header passes the parser's bound quotes it too
  const tall = (await search("server")).rows.find((r) => r.subject === "tall header")?.ref as string;
  expect((await env.client.call("reply", { ref: tall, body: "Seen." })).status).toBe("sent");
  const replied = await simpleParser(env.relay.received.at(-1)?.raw ?? "");
  expect(replied.subject).toBe("Re: tall header");
  expect(replied.to).toMatchObject({ value: [{ address: "mallory@example.net" }] });
  expect(replied.inReplyTo).toBe("<tall-header@example.net>");
  expect(replied.text).toMatch(/wrote:\n> The quartz words, under a tall header\./);
});
