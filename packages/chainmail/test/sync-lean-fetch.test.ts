// The lean header FETCH (src/imap/raw-fetch.ts) against imapflow's, over the realistic corpus and
// a few hard messages in the test Dovecot: the messages both give, and every row, FTS term and
// thread key both syncs write, for the initial sync and for a catch-up with `new` events.
import net from "node:net";
import path from "node:path";
import type { FetchMessageObject, ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CacheDb, openCache, syncAccount, syncFolder } from "../src/cache/index.js";
import { RAW_FETCH_MIN, type SyncEvents } from "../src/cache/sync.js";
import { searchRowOf } from "../src/events/sync-sink.js";
import { RawFetch, type SyncedMessage, headerItems } from "../src/imap/raw-fetch.js";
import { generateCorpus } from "../src/testing/corpus.js";
import { startGmail } from "../src/testing/gmail.js";
import { mailboxMessage } from "../src/testing/mailbox.js";
import { type CacheEnv, PASSWORD, USER, startCacheEnv } from "./support/cache-env.js";
import { ImapFlow as Flow } from "imapflow";

const A = "personal";
const N = 240;
let env: CacheEnv;

const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");
/** Mail that is hard to read: 8-bit headers, quotes and parentheses, a forwarded message, RFC 2231. */
const HARD = [
  crlf(`From: "Jürgen \\"JJ\\" Müller" <j@x.example>
To: undisclosed-recipients:;
Subject: Straße (draft) "v2" \\ naïve)
Date: Tue, 01 Dec 2026 10:00:00 +0000
Message-ID: <hard1@x.example>
References: <r1@x.example>
 <r2@x.example>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

Grüße
`),
  crlf(`From: =?ISO-8859-1?Q?Andr=E9?= <andre@x.example>
To: a@x.example, "B, Person" <b@x.example>
Cc: =?UTF-8?B?5pel5pys6Kqe?= <jp@x.example>
Subject: =?UTF-8?Q?Fwd=3A_caf=C3=A9_=28menu=29?=
Date: Wed, 02 Dec 2026 10:00:00 +0100
Message-ID: <hard2@x.example>
In-Reply-To: <hard1@x.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: text/plain; charset=us-ascii

see the forwarded mail
--b1
Content-Type: message/rfc822
Content-Disposition: attachment

From: Inner <inner@y.example>
Subject: inner "subject" (x)
Message-ID: <inner@y.example>
Content-Type: text/html; charset=utf-8

<p>inner</p>
--b1
Content-Type: application/pdf; name*=utf-8''Rechnung%20%28M%C3%A4rz%29.pdf
Content-Disposition: attachment; filename*=utf-8''Rechnung%20%28M%C3%A4rz%29.pdf
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--b1--
`),
];

let messages: string[];

beforeAll(async () => {
  env = await startCacheEnv();
  const now = new Date("2026-12-01T00:00:00Z");
  messages = [
    ...HARD,
    ...generateCorpus({ threads: 2, fillers: 4 }).map((m) => m.raw),
    ...Array.from({ length: N }, (_, i) => mailboxMessage(i, N, { now }).raw),
  ];
  for (const [i, raw] of messages.entries())
    await env.append("INBOX", raw, i % 3 ? ["\\Seen"] : [], new Date(now.getTime() + i * 60_000));
});
afterAll(async () => {
  await env?.close();
});

/** Everything a sync wrote: both tables of every message, in UID order, and every FTS term instance. */
function snapshot(db: CacheDb) {
  const rows = db
    .prepare("SELECT * FROM messages m JOIN message_meta mm ON mm.id = m.id ORDER BY m.folder_id, m.uid")
    .all();
  db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, 'messages_fts', 'instance')",
  );
  const terms = db
    .prepare("SELECT term, doc, col, offset FROM temp.fts_terms ORDER BY doc, col, offset")
    .all();
  const folders = db
    .prepare(
      "SELECT account, path, role, uidvalidity, uidnext, highestmodseq, server_count, complete, cached_count, with_body, labelled FROM folders",
    )
    .all();
  return { rows, terms, folders };
}

/** A fetched message without the fields imapflow adds that the cache never reads (its MD5 id). */
function comparable(m: FetchMessageObject | SyncedMessage) {
  const { id, emailId, flagColor, ...rest } = m as FetchMessageObject;
  return rest;
}

async function bothFetches(c: ImapFlow, uids: string) {
  const lock = await c.getMailboxLock("INBOX", { readOnly: true });
  try {
    const viaFlow: FetchMessageObject[] = [];
    const q = {
      uid: true,
      flags: true,
      envelope: true,
      size: true,
      bodyStructure: true,
      internalDate: true,
      headers: ["references"],
    };
    for await (const m of c.fetch(uids, q, { uid: true })) viaFlow.push(m);
    const raw = RawFetch.open(c);
    expect(raw).not.toBeNull();
    const viaRaw = await raw?.fetch(uids, headerItems(c, false));
    raw?.close();
    // imapflow reads the connection again afterwards
    const status = await c.status("INBOX", { messages: true });
    expect(status ? status.messages : null).toBe(messages.length);
    return { viaFlow: viaFlow.map(comparable), viaRaw: (viaRaw ?? []).map(comparable) };
  } finally {
    lock.release();
  }
}

describe("the lean header FETCH", () => {
  it("gives every message exactly as imapflow's fetch does", async () => {
    const c = await env.client();
    const { viaFlow, viaRaw } = await bothFetches(c, "1:*");
    expect(viaFlow).toHaveLength(messages.length);
    expect(viaRaw).toEqual(viaFlow);
    const hard = viaRaw.find((m) => m.envelope?.messageId === "<hard2@x.example>");
    expect(hard?.envelope?.subject).toBe("Fwd: café (menu)");
    expect(hard?.bodyStructure?.childNodes?.[1]?.envelope?.subject).toBe('inner "subject" (x)');
  });

  it("hands imapflow the responses that were not its own (another client's new mail)", async () => {
    const c = await env.client();
    const lock = await c.getMailboxLock("INBOX", { readOnly: true });
    try {
      const before = c.mailbox ? c.mailbox.exists : 0;
      const raw =
        "From: a@x.example\r\nSubject: while fetching\r\nMessage-ID: <during@x.example>\r\n\r\nhi\r\n";
      await env.append("INBOX", raw, [], new Date());
      messages.push(raw);
      const lean = RawFetch.open(c);
      const got = await lean?.fetch("1:2", headerItems(c, false));
      lean?.close();
      expect(got?.map((m) => m.uid)).toEqual([1, 2]);
      // Dovecot tells of the new message (EXISTS) before the FETCH's tagged OK
      for (let i = 0; i < 50 && c.mailbox && c.mailbox.exists === before; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(c.mailbox ? c.mailbox.exists : null).toBe(before + 1);
    } finally {
      lock.release();
    }
  });

  it("writes the same rows, FTS terms and thread keys as the imapflow path", async () => {
    const dbs = ["flow", "raw"].map((n) => openCache(path.join(env.dir, `${n}.db`)));
    const [flowDb, rawDb] = dbs as [CacheDb, CacheDb];
    const c = await env.client();
    const a = await syncFolder(flowDb, c, A, "INBOX", { headerFetch: "imapflow", batchSize: 100 });
    const b = await syncFolder(rawDb, c, A, "INBOX", { headerFetch: "raw", batchSize: 100 });
    expect(b).toEqual(a);
    expect(a.added).toBe(messages.length);
    const [sa, sb] = [snapshot(flowDb), snapshot(rawDb)];
    expect(sa.rows).toHaveLength(messages.length);
    expect(sa.terms.length).toBeGreaterThan(messages.length * 5);
    expect(sb).toEqual(sa);

    // A catch-up of many new messages: the same rows and the same `new` events, each told
    // inside the transaction that stores it
    const now = new Date("2026-12-02T00:00:00Z");
    const more = Array.from(
      { length: RAW_FETCH_MIN + 10 },
      (_, i) => mailboxMessage(N + i, 2 * N, { now }).raw,
    );
    for (const raw of more) await env.append("INBOX", raw, [], now);
    messages.push(...more);
    const heard = (db: CacheDb) => {
      const out: unknown[] = [];
      const events: SyncEvents = {
        gap: () => undefined,
        added: (f, m) => out.push({ inTx: db.inTransaction, row: searchRowOf(f, m), msg: comparable(m) }),
        flags: () => undefined,
        expunged: () => undefined,
      };
      return { out, events };
    };
    const ha = heard(flowDb);
    const hb = heard(rawDb);
    const ca = await syncFolder(flowDb, c, A, "INBOX", { headerFetch: "imapflow", events: ha.events });
    const cb = await syncFolder(rawDb, c, A, "INBOX", { events: hb.events });
    expect(cb).toEqual(ca);
    expect(ca.added).toBe(more.length);
    expect(ha.out).toHaveLength(more.length);
    expect(hb.out).toEqual(ha.out);
    expect(hb.out.every((e) => (e as { inTx: boolean }).inTx)).toBe(true);
    expect(snapshot(rawDb)).toEqual(snapshot(flowDb));
    for (const db of dbs) db.close();
  });
});

/**
 * A proxy in front of the test Dovecot that damages the server's answer to the second lean FETCH
 * (an ENVELOPE list opened twice), as a broken server or a corrupted stream would.
 */
async function damagingProxy(port: number): Promise<{ port: number; close(): void }> {
  const server = net.createServer((inbound) => {
    const outbound = net.connect(port, "127.0.0.1");
    let leanCommands = 0;
    let damaged = false;
    inbound.on("data", (d: Buffer) => {
      leanCommands += d.toString("latin1").match(/^CMF\d+ /gm)?.length ?? 0;
      outbound.write(d);
    });
    outbound.on("data", (d: Buffer) => {
      let s = d.toString("latin1");
      if (leanCommands >= 2 && !damaged && s.includes("ENVELOPE (")) {
        s = s.replace("ENVELOPE (", "ENVELOPE ((");
        damaged = true;
      }
      inbound.write(Buffer.from(s, "latin1"));
    });
    inbound.on("close", () => outbound.destroy());
    outbound.on("close", () => inbound.destroy());
    inbound.on("error", () => undefined);
    outbound.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

describe("a connection dropped during the lean FETCH", () => {
  it("fails the sync with whole batches committed, and the next sync completes", async () => {
    // Enough batches that the ones already on the wire when the kick lands cannot hold them all.
    const n = 400;
    await (await env.client()).mailboxCreate("Dropped");
    await env.dovecot.appendMessages(
      USER,
      "Dropped",
      Array.from({ length: n }, (_, i) => ({ raw: mailboxMessage(i, n).raw })),
    );
    const db = openCache(path.join(env.dir, "dropped.db"));
    try {
      const c = await env.client();
      let batches = 0;
      await expect(
        syncFolder(db, c, A, "Dropped", {
          headerFetch: "raw",
          batchSize: 10,
          onBatch: () => {
            // the server ends the session while the next batch's FETCH is on the wire
            if (++batches === 2) env.dovecot.doveadm(["kick", USER]);
          },
        }),
      ).rejects.toThrow();
      const count = () => (db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
      expect(count() % 10).toBe(0);
      expect(count()).toBeGreaterThanOrEqual(20);
      expect(count()).toBeLessThan(n);
      const cut = db.prepare("SELECT complete, last_error FROM folders").get() as {
        complete: number;
        last_error: string;
      };
      expect(cut.complete).toBe(0);
      expect(cut.last_error).toMatch(/\S/);
      const r = await syncFolder(db, await env.client(), A, "Dropped", { headerFetch: "raw", batchSize: 10 });
      expect(r.added).toBeGreaterThan(0);
      expect(count()).toBe(n);
      expect(db.prepare("SELECT complete FROM folders").get()).toEqual({ complete: 1 });
    } finally {
      db.close();
    }
  });
});

describe("a malformed FETCH response", () => {
  it("fails the sync with a clear error and commits no row of the batch it was in", async () => {
    const proxy = await damagingProxy(env.dovecot.port);
    const db = openCache(path.join(env.dir, "damaged.db"));
    const c = new Flow({
      host: "127.0.0.1",
      port: proxy.port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: USER, pass: PASSWORD },
      logger: false,
    });
    c.on("error", () => undefined);
    await c.connect();
    try {
      await expect(syncFolder(db, c, A, "INBOX", { headerFetch: "raw", batchSize: 50 })).rejects.toThrow(
        /malformed response/,
      );
      // The first batch (the newest 50) is whole; nothing of the second
      const n = (db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
      expect(n).toBe(50);
      const f = db.prepare("SELECT complete, uidnext, last_error FROM folders").get() as {
        complete: number;
        uidnext: number | null;
        last_error: string;
      };
      expect(f).toMatchObject({ complete: 0, uidnext: null });
      expect(f.last_error).toMatch(/malformed response/);
      expect(c.usable).toBe(false);
    } finally {
      c.close();
      db.close();
      proxy.close();
    }
  });
});

describe("the lean header FETCH on a Gmail-style server", () => {
  it("writes the same rows with labels and thread ids as the imapflow path", async () => {
    const gm = await startGmail({
      user: "gina",
      password: "gina-pw",
      inbox: [
        ...HARD.map((raw) => ({ raw, labels: ["\\Inbox", "&AMQ-rger", "Work stuff"] })),
        ...generateCorpus({ threads: 2, fillers: 3 }).map((m, i) => ({
          raw: m.raw,
          flags: m.flags ?? [],
          labels: i % 2 ? ["\\Inbox"] : ["\\Important", "Project"],
        })),
      ],
    });
    const dbs: CacheDb[] = [];
    try {
      const results = [];
      for (const mode of ["imapflow", "raw"] as const) {
        const db = openCache(path.join(env.dir, `gmail-${mode}.db`));
        dbs.push(db);
        const c = new Flow({
          host: "127.0.0.1",
          port: gm.port,
          secure: false,
          doSTARTTLS: false,
          auth: { user: "gina", pass: "gina-pw" },
          logger: false,
        });
        c.on("error", () => undefined);
        await c.connect();
        expect(c.capabilities.has("X-GM-EXT-1")).toBe(true);
        results.push(await syncAccount(db, c, "gmail", { headerFetch: mode }));
        await c.logout();
      }
      expect(results[1]).toEqual(results[0]);
      const [a, b] = dbs.map(snapshot) as [ReturnType<typeof snapshot>, ReturnType<typeof snapshot>];
      expect(a.rows.length).toBeGreaterThan(HARD.length);
      expect(a.rows.some((r) => (r as { labels_json: string }).labels_json.includes("Ärger"))).toBe(true);
      expect(a.rows.every((r) => (r as { gm_thread_id: string | null }).gm_thread_id)).toBe(true);
      expect(b).toEqual(a);
    } finally {
      for (const db of dbs) db.close();
      await gm.stop();
    }
  });
});
