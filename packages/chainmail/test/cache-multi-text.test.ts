/**
 * A large message whose text is in several parts: Apple Mail writes text, an inline photo, then the
 * rest of the text, each its own part of a multipart/mixed. The server's whole read joins every text
 * part (mailparser); the cache's backfill reads a large message part by part, so it kept the first
 * text part alone: get_message from the cache lost everything after the photo, saying nothing of it,
 * and a text search from the cache missed the words there that the server's found. Now the text
 * parts are read one by one and joined as the whole read joins them, and a shape whose parts cannot
 * be joined that way (an embedded message) is read from the server.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

const b64 = (b: Buffer) => b.toString("base64").replace(/.{76}/g, "$&\r\n");
const head = (subject: string) =>
  [
    "From: Ann Example <ann@example.com>",
    "To: Alice <alice@example.com>",
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W+/g, "-")}@example.com>`,
    "Date: Mon, 07 Dec 2026 10:00:00 +0000",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="m"',
    "",
    "",
  ].join("\r\n");
const plain = (text: string, cte = "7bit") =>
  ["Content-Type: text/plain; charset=utf-8", `Content-Transfer-Encoding: ${cte}`, "", text].join("\r\n");
const photo = (bytes: number) =>
  [
    "Content-Type: image/jpeg; name=IMG_0001.jpeg",
    "Content-Disposition: inline; filename=IMG_0001.jpeg",
    "Content-Transfer-Encoding: base64",
    "",
    b64(randomBytes(bytes)),
  ].join("\r\n");
const multipart = (subject: string, parts: string[]) =>
  `${head(subject)}${parts.map((p) => `--m\r\n${p}\r\n`).join("")}--m--\r\n`;

/** Apple Mail's shape: text, photo, text; one under the whole-read bound (1 MiB), one past it. */
const APPLE = (subject: string, photoBytes: number) =>
  multipart(subject, [
    plain("Look at the view from the hut, quillwort.\r\n"),
    photo(photoBytes),
    plain("We walked back by the lake =E2=80=94 cloudberry.\r\n\r\nAnn\r\n", "quoted-printable"),
    photo(photoBytes / 4),
    "Content-Type: text/html; charset=utf-8\r\n\r\n<p>sent from my phone</p>",
  ]);
/**
 * Shapes whose parts cannot give the whole read's text (an empty part between two: mailparser adds a
 * line for it): read whole up to 4 MiB, past that by the first part, and get_message then asks the
 * server.
 */
const UNJOINABLE = (subject: string, photoBytes: number) =>
  multipart(subject, [
    plain("See below, marshwort.\r\n"),
    photo(photoBytes),
    plain(""),
    plain("The rest of it, sundew.\r\n"),
  ]);

/** An embedded message after a large photo: its words are the server's search's too. */
const EMBEDDED = (subject: string, photoBytes: number) =>
  multipart(subject, [
    plain("Forwarding the report, bogbean.\r\n"),
    photo(photoBytes),
    [
      "Content-Type: message/rfc822",
      "",
      "From: Bob <bob@example.com>",
      "Subject: the report",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "The count came to nine, butterwort.",
    ].join("\r\n"),
  ]);

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages("alice", "INBOX", [
    { raw: APPLE("photo from the hut", 400_000) },
    { raw: APPLE("big photo from the hut", 1_500_000) },
    { raw: UNJOINABLE("an empty part between", 400_000) },
    { raw: UNJOINABLE("a large empty part between", 4_000_000) },
    { raw: EMBEDDED("a large forward", 4_000_000) },
  ]);
  await env.client.cacheSync({ accounts: ["work"] });
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

const find = async (query: string, source: "cache" | "server") =>
  (await env.client.search({ query, accounts: ["work"], source })).rows.map((r) => r.subject).sort();

async function read(subject: string) {
  const found = await env.client.search({
    query: `subject:"${subject}"`,
    accounts: ["work"],
    source: "cache",
  });
  const ref = found.rows.find((r) => r.subject === subject)?.ref as string;
  const [m] = (await env.client.getMessages({ refs: [ref], full: true })).messages;
  return m!;
}

describe("a large message with several text parts", () => {
  it("is found from the cache by the words of each part, as on the server", async () => {
    for (const word of ["quillwort", "cloudberry", "marshwort"])
      expect(await find(word, "cache"), word).toEqual(await find(word, "server"));
    expect(await find("cloudberry", "cache")).toEqual(["big photo from the hut", "photo from the hut"]);
  });

  it("reads a shape it cannot join whole, up to 4 MiB; past that get_message asks the server", async () => {
    const small = await read("an empty part between");
    expect(small.source).toBe("cache");
    expect(small.body).toContain("marshwort");
    expect(small.body).toContain("sundew");
    // the large one's words after the empty part too: the cache's text search is the server's
    expect(await find("sundew", "cache")).toEqual(["a large empty part between", "an empty part between"]);
    expect(await find("sundew", "server")).toEqual(await find("sundew", "cache"));
    const large = await read("a large empty part between");
    expect(large.source).toBe("server");
    // (the same text but for the photo's size: the whole read's, from the server)
    expect(large.body).toBe(small.body);
  });

  it("finds a word of an embedded message past 4 MiB from the cache, as the server does", async () => {
    for (const word of ["bogbean", "butterwort"])
      expect(await find(word, "cache"), word).toEqual(["a large forward"]);
    expect(await find("butterwort", "server")).toEqual(["a large forward"]);
    const m = await read("a large forward");
    expect(m.source).toBe("server");
  });

  it("reads from the cache the body the server gives, every part joined", async () => {
    const fromCache = await Promise.all(["photo from the hut", "big photo from the hut"].map(read));
    expect(fromCache.map((m) => m.source)).toEqual(["cache", "cache"]);
    for (const m of fromCache) {
      expect(m.body).toContain("quillwort");
      expect(m.body).toContain("lake — cloudberry");
      expect(m.body_truncated).toBe(false);
    }
    // The bodies dropped from the cache: the server reads the same messages
    await env.client.call("cache.evict", { account: "work" });
    const fromServer = await Promise.all(["photo from the hut", "big photo from the hut"].map(read));
    expect(fromServer.map((m) => m.source)).toEqual(["server", "server"]);
    expect(fromCache.map((m) => [m.body, m.body_truncated])).toEqual(
      fromServer.map((m) => [m.body, m.body_truncated]),
    );
  });
});
