/**
 * The operator's `cache evict` and `cache rebuild` against a real Dovecot, with cache.db read back
 * from its file: eviction drops body text oldest first (by date, or until enough bytes are freed) and
 * never a header; the words of an evicted body stay in the FTS index on purpose, so text search still
 * finds the message (the same refs as the server) while cached reading fetches the body from the
 * server. A rebuild drops the account's cache, its searches go to the server until the new pass ends,
 * and to the cache after. Only the CLI client may run them.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { type MailEnv, startMailEnv } from "../src/testing/index.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: MailEnv;
const YEARS = [2020, 2021, 2022, 2023, 2024, 2025];
/** A word each message's body alone holds. */
const word = (y: number) => `zebracorn${y}`;

function message(y: number): string {
  return [
    "From: Carol <carol@example.org>",
    "To: alice@example.com",
    `Subject: report ${y}`,
    `Date: Mon, 06 Jan ${y} 10:00:00 +0000`,
    `Message-ID: <report-${y}@example.org>`,
    "Content-Type: text/plain; charset=utf-8",
    "",
    `The figures of ${y}: ${word(y)} and ${"filler ".repeat(50)}`,
    "",
  ].join("\r\n");
}

/** cache.db as it is on disk, read by another connection. */
function cached() {
  const db = new Database(env.home.cacheFile, { readonly: true, fileMustExist: true });
  try {
    const n = (sql: string) => (db.prepare(sql).get("work") as { n: number }).n;
    return {
      headers: n(
        "SELECT count(*) AS n FROM message_meta x JOIN messages m ON m.id = x.id WHERE m.account = ?",
      ),
      bodies: n(
        "SELECT count(*) AS n FROM bodies b JOIN messages m ON m.id = b.message_rowid WHERE m.account = ?",
      ),
      bodyBytes: n(
        "SELECT coalesce(sum(b.bytes), 0) AS n FROM bodies b JOIN messages m ON m.id = b.message_rowid WHERE m.account = ?",
      ),
      withText: (
        db
          .prepare(
            "SELECT x.subject FROM bodies b JOIN messages m ON m.id = b.message_rowid JOIN message_meta x ON x.id = m.id WHERE m.account = ? ORDER BY x.subject",
          )
          .all("work") as { subject: string }[]
      ).map((r) => r.subject),
    };
  } finally {
    db.close();
  }
}

function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--home", env.dir, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString("utf8");
    });
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const search = (query: string, source?: "auto" | "server" | "cache") =>
  env.client.search({
    query: `account:work ${query}`,
    limit: 50,
    snippets: true,
    ...(source ? { source } : {}),
  });

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  env = await startMailEnv();
  const c = await env.dv.connect("alice");
  try {
    // Arrival times in the past (INTERNALDATE), which eviction orders and filters by.
    for (const y of YEARS) await c.append("INBOX", message(y), [], new Date(`${y}-01-06T10:00:00Z`));
  } finally {
    await c.logout();
  }
  const { accounts } = await env.client.cacheSync({ accounts: ["work"] });
  expect(accounts[0]).toMatchObject({ ok: true, added: YEARS.length });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("cache evict", () => {
  it("drops the bodies that arrived before a date, never a header; their words still find them", async () => {
    const before = cached();
    expect(before).toMatchObject({ headers: YEARS.length, bodies: YEARS.length });
    const r = await env.client.call("cache.evict", { account: "work", before: "2022-06-01" });
    const after = cached();
    expect(r).toEqual({ account: "work", bodies: 3, bytes: before.bodyBytes - after.bodyBytes });
    expect(after.headers).toBe(YEARS.length);
    expect(after.withText).toEqual(["report 2023", "report 2024", "report 2025"]);

    // Kept on purpose: the FTS words of an evicted body, so the cache answers like the server.
    for (const y of [2020, 2023]) {
      const fromCache = await search(word(y));
      const fromServer = await search(word(y), "server");
      expect(fromCache.source).toBe("cache");
      expect(fromCache.rows.map((x) => x.ref)).toEqual(fromServer.rows.map((x) => x.ref));
      expect(fromCache.rows).toHaveLength(1);
      // The evicted body's snippet comes from the server, the others' from stored text.
      expect(fromCache.rows[0]!.snippet).toContain(word(y));
    }
    // Reading an evicted message still gives its whole body (from the server).
    const ref = (await search(word(2020))).rows[0]!.ref;
    const got = await env.client.getMessages({ refs: [ref] });
    expect(JSON.stringify(got)).toContain(word(2020));
    const status = await env.client.cacheStatus({ accounts: ["work"] });
    const inbox = status.accounts[0]!.folders.find((f) => f.name === "INBOX")!;
    expect(inbox.headers_cached).toBe(YEARS.length);
    // Body coverage counts bodies indexed for search, which eviction leaves indexed.
    expect(inbox.body_coverage).toBe(1);
  });

  it("drops the oldest bodies until the bytes asked for are freed", async () => {
    const before = cached();
    const r = await env.client.call("cache.evict", { account: "work", bytes: 1 });
    expect(r).toMatchObject({ bodies: 1 });
    expect(r.bytes).toBe(before.bodyBytes - cached().bodyBytes);
    expect(cached().withText).toEqual(["report 2024", "report 2025"]);
    expect(cached().headers).toBe(YEARS.length);
    const cli1 = await cli(["cache", "evict", "--account", "work", "--before", "2019-01-01"]);
    expect(cli1.code, cli1.err).toBe(0);
    expect(cli1.out.trim()).toBe("evicted 0 bodies, 0 bytes of work");
    const bad = await cli(["cache", "evict", "--before", "not a date"]);
    expect(bad.code).toBe(2);
  });
});

describe("cache rebuild", () => {
  it("drops the account's cache, answers its searches from the server until synced, and from the cache after", async () => {
    const rebuilding = env.client.call("cache.rebuild", { accounts: ["work"] });
    // Sent after the rebuild on the same connection: the daemon has dropped the cache by then.
    const meanwhile = await search(word(2021));
    expect(meanwhile.source).toBe("server");
    expect(meanwhile.rows).toHaveLength(1);
    const report = await rebuilding;
    expect(report.accounts).toEqual([
      expect.objectContaining({
        account: "work",
        dropped: expect.objectContaining({ messages: YEARS.length, bodies: 2 }),
        sync: expect.objectContaining({ ok: true, added: YEARS.length }),
      }),
    ]);
    // Synced again from nothing: every header and every body is back.
    expect(cached()).toMatchObject({ headers: YEARS.length, bodies: YEARS.length });
    const after = await search(word(2021));
    expect(after.source).toBe("cache");
    expect(after.rows.map((x) => x.ref)).toEqual(meanwhile.rows.map((x) => x.ref));
    const again = await cli(["cache", "rebuild", "--account", "work"]);
    expect(again.code, again.err).toBe(0);
    expect(again.out.trim()).toBe(
      `work\tdropped ${YEARS.length} message(s), ${YEARS.length} bodies\tsynced ${report.accounts[0]!.sync.folders} folder(s), ${YEARS.length} message(s), ${YEARS.length} bodies`,
    );
    const rows = (await env.client.readAudit({ action: "cache.rebuild" })).rows;
    expect(rows[0]).toMatchObject({ client: "cli", account: "work", decision: "allowed" });
  });

  it("waits, with the daemon answering, while another program holds cache.db's write lock past SQLite's 5 s wait", async () => {
    // Another program with the file open in a transaction (an sqlite3 shell, a backup)
    const other = new Database(env.home.cacheFile);
    other.exec("BEGIN IMMEDIATE");
    let released = false;
    try {
      const rebuilding = env.client.call("cache.rebuild", { accounts: ["work"] });
      const answered: string[] = [];
      void rebuilding.then(() => answered.push("rebuild"));
      await new Promise((r) => setTimeout(r, 300));
      // The daemon's thread is not in SQLite's busy wait: a search still answers meanwhile
      expect((await search(word(2025))).rows).toHaveLength(1);
      answered.push("search");
      await new Promise((r) => setTimeout(r, 6_000));
      expect(answered).toEqual(["search"]);
      other.exec("ROLLBACK");
      released = true;
      const report = await rebuilding;
      expect(report.accounts).toEqual([
        expect.objectContaining({
          account: "work",
          dropped: expect.objectContaining({ messages: YEARS.length }),
          sync: expect.objectContaining({ ok: true, added: YEARS.length }),
        }),
      ]);
      expect(cached()).toMatchObject({ headers: YEARS.length, bodies: YEARS.length });
    } finally {
      if (!released) other.exec("ROLLBACK");
      other.close();
    }
  });

  it("is refused to an MCP client, as evict is", async () => {
    const mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    try {
      await expect(mcp.call("cache.rebuild", { accounts: ["work"] })).rejects.toMatchObject({
        reason: "POLICY_DENIED",
      });
      await expect(mcp.call("cache.evict", { account: "work", bytes: 1 })).rejects.toMatchObject({
        reason: "POLICY_DENIED",
      });
      expect(cached()).toMatchObject({ headers: YEARS.length, bodies: YEARS.length });
    } finally {
      mcp.close();
    }
  });
});
