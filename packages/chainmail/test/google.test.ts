/**
 * Provider `google` against the X-GM-EXT-1 test server (test/support/gmail.ts): search via X-GM-RAW
 * in All Mail, set_labels add/remove with system labels, archive removing \Inbox, and get_thread
 * following X-GM-THRID.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { type Daemon, startDaemon } from "../src/daemon/server.js";
import { resolveHome } from "../src/home.js";
import { setSecret } from "../src/secrets.js";
import { generateCorpus } from "./support/corpus.js";
import { type GmailServer, startGmail } from "./support/gmail.js";

const corpus = generateCorpus({ threads: 2, fillers: 2, hugeBytes: 0 });
let gm: GmailServer;
let dir: string;
let daemon: Daemon;
let client: DaemonClient;

beforeAll(async () => {
  gm = await startGmail({
    user: "gina",
    password: "gina-pw",
    inbox: corpus.map((m) => ({ raw: m.raw, flags: m.flags ?? [] })),
  });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-gmail-"));
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  fs.writeFileSync(
    home.configFile,
    `[cache]
background = false

[[accounts]]
name = "gmail"
provider = "google"
address = "gina@example.com"
username = "gina"
[accounts.imap]
host = "127.0.0.1"
port = ${gm.port}
tls = "none"
`,
  );
  setSecret(home.secretsDir, "gmail", "gina-pw");
  daemon = await startDaemon({ home, log: () => undefined });
  client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
});
afterAll(async () => {
  client?.close();
  await daemon?.stop();
  await gm?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const labelsOf = async (ref: string) => (await client.getMessages({ refs: [ref] })).messages[0]!.labels;

describe("Google accounts", () => {
  it("searches All Mail with X-GM-RAW", async () => {
    const res = await client.search({ query: 'subject:"project thread 1"' });
    expect(res.source).toBe("server");
    expect(res.count).toBe(3);
    expect(new Set(res.rows.map((r) => r.folder))).toEqual(new Set(["[Gmail]/All Mail"]));
    const invoice = await client.search({ query: "from:carol has:attachment" });
    expect(invoice.rows.map((r) => r.subject)).toEqual(["Invoice with attachments"]);
    const none = await client.search({ query: "-in:inbox" });
    expect(none.count).toBe(0);
    // Replies share their thread's X-GM-THRID, which is the row's thread id.
    const ids = new Set(res.rows.map((r) => r.thread_id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^[0-9]+$/);
  });

  it("adds and removes labels, system labels included", async () => {
    const ref = (await client.search({ query: "from:carol" })).rows[0]!.ref;
    expect(await labelsOf(ref)).toEqual(["\\Inbox"]);
    const added = await client.setLabels({ refs: [ref], add: ["Receipts", "\\important", "\\Starred"] });
    expect(added).toMatchObject({ succeeded: 1, failed: 0 });
    expect(added.outcomes[0]!.new_ref).toBe(ref);
    expect(await labelsOf(ref)).toEqual(["Receipts", "\\Important", "\\Inbox", "\\Starred"]);
    expect((await client.search({ query: "label:receipts" })).rows.map((r) => r.ref)).toEqual([ref]);
    await client.setLabels({ refs: [ref], remove: ["Receipts", "\\Important"] });
    expect(await labelsOf(ref)).toEqual(["\\Inbox", "\\Starred"]);
    await expect(client.setLabels({ refs: [ref], add: ["\\Trash"] })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
  });

  it("archives by removing the \\Inbox label", async () => {
    const rows = (await client.search({ query: "subject:filler" })).rows;
    expect(rows.length).toBe(2);
    const res = await client.archive({ refs: [rows[0]!.ref] });
    expect(res).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await labelsOf(rows[0]!.ref)).toEqual([]);
    const inInbox = (await client.search({ query: "in:inbox subject:filler" })).rows.map((r) => r.ref);
    expect(inInbox).toEqual([rows[1]!.ref]);
  });

  it("get_thread follows X-GM-THRID", async () => {
    const row = (await client.search({ query: 'subject:"project thread 2"' })).rows[0]!;
    const t = await client.getThread({ ref: row.ref });
    expect(t.thread_id).toBe(row.thread_id);
    expect(t.messages.map((m) => m.subject)).toEqual([
      "Project thread 2",
      "Re: Project thread 2",
      "Re: Project thread 2",
    ]);
    expect(t.messages.every((m) => m.thread_id === row.thread_id && m.source === "server")).toBe(true);
  });

  it("answers from the cache with one row per message, from All Mail, as the server does", async () => {
    const query = 'subject:"project thread 1"';
    const server = await client.search({ query, source: "server" });
    expect(server.count).toBe(3);
    // A label folder holding the same messages: its copies must not show up as more matches.
    await client.createFolder({ account: "gmail", name: "Projects" });
    expect(await client.copy({ refs: server.rows.map((r) => r.ref), folder: "Projects" })).toMatchObject({
      succeeded: 3,
    });
    await client.cacheSync({ accounts: ["gmail"] });
    const cached = await client.search({ query, source: "cache" });
    expect(cached.source).toBe("cache");
    expect(cached.count).toBe(3);
    expect(cached.rows.map((r) => r.ref).sort()).toEqual(server.rows.map((r) => r.ref).sort());
    // in: still reaches the label folder.
    const inProjects = await client.search({ query: `in:projects ${query}`, source: "cache" });
    expect(inProjects.count).toBe(3);
    expect(new Set(inProjects.rows.map((r) => r.folder))).toEqual(new Set(["Projects"]));
  });
});
