/**
 * On the Gmail test server (src/testing/gmail.ts): the server path (X-GM-RAW in All Mail, X-GM-THRID)
 * and the cache agree on each message's thread key and on parenthesized field groups; read_events'
 * `in: inbox` / `in: sent` match the \Inbox / \Sent labels of new mail; and link_thread takes the
 * thread key (Gmail's thread id) from the cache, so it works with the server gone.
 *
 * What hoodiecrow cannot model, so these tests do not claim it: Gmail's own threading (it also
 * splits threads on a subject change and joins them by subject); here X-GM-THRID is derived from the
 * References root, In-Reply-To or Message-ID (and a message with none of these gets a thread of its
 * own), so agreement is shown for the ids the server hands out, not for how Gmail would choose them.
 * Its X-GM-RAW evaluator treats dates, sizes and filename: as matching everything, so no case here
 * uses them; of the role words only in:inbox and in:sent are modelled (as the \Inbox and \Sent labels).
 */
import fs from "node:fs";
import { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { type Daemon, startDaemon } from "../src/daemon/server.js";
import { type GmailServer, startGmail } from "../src/testing/gmail.js";
import { gmailHome } from "./support/gmail-home.js";

const mail = (id: string | null, subject: string, from: string, extra = "") =>
  `${id ? `Message-ID: ${id}\r\n` : ""}From: ${from}\r\nTo: gina@example.com\r\nSubject: ${subject}\r\nDate: Mon, 1 Dec 2026 10:00:00 +0000\r\n${extra}Content-Type: text/plain\r\n\r\nabout ${subject}\r\n`;
const reply = (to: string, refs: string) => `In-Reply-To: ${to}\r\nReferences: ${refs}\r\n`;

let gm: GmailServer;
let gmStopped = false;
let dir: string;
let daemon: Daemon;
let client: DaemonClient;

beforeAll(async () => {
  gm = await startGmail({
    user: "gina",
    password: "gina-pw",
    inbox: [
      { raw: mail("<d1@example.com>", "Dinner and a movie", "Carol <carol@example.com>") },
      { raw: mail("<d2@example.com>", "Dinner plans", "Dana <dana@example.com>") },
      { raw: mail("<M1@Example.com>", "Movie night", "Carol <carol@example.com>") },
      {
        raw: mail(
          "<m2@example.com>",
          "Re: Movie night",
          "Erin <erin@example.com>",
          reply("<m1@example.com>", "<m1@example.com>"),
        ),
      },
      {
        raw: mail(
          "<m3@example.com>",
          "Re: Re: Movie night",
          "Dana <dana@example.com>",
          reply("<m2@example.com>", "<M1@example.com> <m2@example.com>"),
        ),
      },
      // A reply whose root is not in the mailbox, and a message with no ids at all.
      {
        raw: mail(
          "<o2@example.com>",
          "Re: Old thread",
          "Erin <erin@example.com>",
          reply("<o1@example.com>", "<o1@example.com>"),
        ),
      },
      { raw: mail(null, "Budget review", "Dana <dana@example.com>"), labels: ["\\Inbox", "Work"] },
      { raw: mail("<s1@example.com>", "Sent report", "Gina <gina@example.com>"), labels: ["\\Sent"] },
    ],
  });
  const made = gmailHome("cm-gagree-", gm.port);
  dir = made.dir;
  const home = made.home;
  daemon = await startDaemon({ home, log: () => undefined });
  client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  // A first start holds the account's server settings and policy until the owner confirms them once.
  await client.call("policy.confirm", {});
  expect((await client.cacheSync({ accounts: ["gmail"] })).accounts[0]).toMatchObject({ ok: true });
});
afterAll(async () => {
  client?.close();
  await daemon?.stop();
  if (!gmStopped) await gm?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const search = async (query: string, source: "server" | "cache") => {
  const r = await client.search({ query, source, limit: 200 });
  expect(r.source).toBe(source);
  return r.rows;
};

describe("the server path and the cache on Google", () => {
  it("give every message the same thread key, Gmail's thread id", async () => {
    const key = (rows: { subject: string; thread_id: string }[]) =>
      Object.fromEntries(rows.map((r) => [r.subject, r.thread_id]));
    const server = key(await search("", "server"));
    const cache = key(await search("", "cache"));
    expect(Object.keys(server)).toHaveLength(8);
    expect(cache).toEqual(server);
    for (const id of Object.values(server)) expect(id).toMatch(/^[0-9]+$/);
    // Thread mates share it (References root in another case too); strangers do not.
    expect(
      new Set([server["Movie night"], server["Re: Movie night"], server["Re: Re: Movie night"]]).size,
    ).toBe(1);
    expect(new Set(Object.values(server)).size).toBe(6);
    // get_message on both paths, and get_thread, say the same.
    const ref = (await search('subject:"re: re: movie night"', "cache"))[0]!.ref;
    const fromCache = (await client.getMessages({ refs: [ref] })).messages[0]!;
    const thread = await client.getThread({ ref });
    expect(fromCache.thread_id).toBe(server["Movie night"]);
    expect(thread.thread_id).toBe(server["Movie night"]);
    expect(thread.messages.map((m) => m.thread_id)).toEqual([1, 2, 3].map(() => server["Movie night"]));
  });

  const cases: Array<[string, string[]]> = [
    ["subject:(dinner movie)", ["Dinner and a movie"]],
    [
      "subject:(dinner OR movie)",
      ["Dinner and a movie", "Dinner plans", "Movie night", "Re: Movie night", "Re: Re: Movie night"],
    ],
    ["subject:(dinner -movie)", ["Dinner plans"]],
    ["subject:({night plans} -re)", ["Dinner plans", "Movie night"]],
    ["from:(carol OR dana) -subject:(budget OR re)", ["Dinner and a movie", "Dinner plans", "Movie night"]],
    ["-from:(carol dana erin) subject:(report OR budget)", ["Budget review", "Sent report"]],
    ["in:inbox subject:(budget OR report)", ["Budget review"]],
    ["in:sent", ["Sent report"]],
    ["label:(work) OR subject:(old -new)", ["Budget review", "Re: Old thread"]],
  ];
  for (const [query, want] of cases) {
    it(`${query}: X-GM-RAW and the cache give the same messages`, async () => {
      const subjects = async (source: "server" | "cache") =>
        (await search(query, source)).map((r) => r.subject).sort();
      expect(await subjects("server")).toEqual(want);
      expect(await subjects("cache")).toEqual(want);
    });
  }
});

describe("read_events on Google", () => {
  it("matches in: inbox to the \\Inbox label and in: sent to \\Sent, in any case", async () => {
    const start = (await client.watchStatus()).last_id;
    const imap = new ImapFlow({
      host: "127.0.0.1",
      port: gm.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: "gina", pass: "gina-pw" },
      logger: false,
    });
    await imap.connect();
    try {
      await imap.append(
        "[Gmail]/All Mail",
        mail("<n1@example.com>", "New in the inbox", "Carol <carol@example.com>"),
      );
      await imap.append(
        "[Gmail]/All Mail",
        mail("<n2@example.com>", "New sent copy", "Gina <gina@example.com>"),
      );
      await imap.append(
        "[Gmail]/All Mail",
        mail("<n3@example.com>", "New archived", "Erin <erin@example.com>"),
      );
    } finally {
      await imap.logout();
    }
    const refOf = async (subject: string) => (await search(`subject:"${subject}"`, "server"))[0]!.ref;
    await client.setLabels({ refs: [await refOf("New in the inbox")], add: ["\\Inbox"] });
    await client.setLabels({ refs: [await refOf("New sent copy")], add: ["\\Sent"] });
    await client.cacheSync({ accounts: ["gmail"] });
    const subjects = async (inName: string) =>
      (await client.readEvents({ cursor: start, in: inName, kinds: ["new"] })).events
        .filter((e) => e.kind === "new")
        .map((e) => e.row!.subject);
    expect(await subjects("inbox")).toEqual(["New in the inbox"]);
    expect(await subjects("INBOX")).toEqual(["New in the inbox"]);
    expect(await subjects("sent")).toEqual(["New sent copy"]);
    expect(await subjects("Sent")).toEqual(["New sent copy"]);
    expect(await subjects("\\Sent")).toEqual(["New sent copy"]);
    expect(await subjects("[gmail]/all mail")).toEqual(["New in the inbox", "New sent copy", "New archived"]);
    // The events carry the labels they were matched by.
    const all = (await client.readEvents({ cursor: start, kinds: ["new"] })).events.filter(
      (e) => e.kind === "new",
    );
    expect(all.map((e) => [e.row!.subject, e.labels])).toEqual([
      ["New in the inbox", ["\\Inbox"]],
      ["New sent copy", ["\\Sent"]],
      ["New archived", []],
    ]);
  });
});

describe("link_thread on Google", () => {
  it("takes Gmail's thread id from the cache, without asking the server", async () => {
    const row = (await search('subject:"re: re: movie night"', "cache"))[0]!;
    await client.cacheSync({ accounts: ["gmail"] });
    await gm.stop();
    gmStopped = true;
    const task = await client.call("item.create", {
      type: "task",
      title: "Plan the movie",
      area: "personal",
    });
    const linked = await client.call("item.link", { item_id: task.item.id, ref: row.ref });
    expect(linked.link).toMatchObject({
      account: "gmail",
      thread_key: row.thread_id,
      anchor_message_id: "<m3@example.com>",
    });
  });
});
