/**
 * read_events through MCP against a real Dovecot: another IMAP client's delivery arrives as a new
 * event with its row untrusted; a long-poll is answered as soon as the mail is synced; a cancelled
 * wait acknowledges nothing; a group name outside the rule is refused.
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INJECTION_TEXT, type McpEnv, isUntrusted, startMcpEnv } from "./helpers.js";

let m: McpEnv;
let other: ImapFlow;

const raw = (subject: string) =>
  [
    "From: Eve <eve@example.com>",
    "To: alice@example.com",
    `Subject: ${subject}`,
    "Date: Sun, 01 Mar 2026 10:00:00 +0000",
    `Message-ID: <${subject.replace(/\W/g, "").slice(0, 40)}@example.com>`,
    "",
    "hello",
    "",
  ].join("\r\n");

type Events = { events: Array<Record<string, unknown>>; next_cursor: number };
const sync = () => m.daemonClient.cacheSync({ accounts: ["work"] });

beforeAll(async () => {
  m = await startMcpEnv();
  other = await m.env.dv.connect("alice");
  await sync();
});
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await m?.close();
});

describe("read_events", () => {
  it("returns a delivered message as a new event with its row untrusted, and acknowledges a group", async () => {
    await m.tools.ok<Events>("read_events", { group: "agent", limit: 200 });
    const subject = `Hello ${INJECTION_TEXT}`.slice(0, 120);
    await other.append("INBOX", raw(subject));
    await sync();
    const r = await m.tools.ok<Events>("read_events", { group: "agent" });
    expect(r.events.map((e) => e["kind"])).toEqual(["new"]);
    const row = r.events[0]!["row"] as Record<string, unknown>;
    expect(isUntrusted(row["subject"])).toBe(true);
    expect(row["subject"]).toEqual({ untrusted: subject });
    expect(typeof row["ref"]).toBe("string");
    expect(r.events[0]!["folder"]).toEqual({ untrusted: "INBOX" });
    expect((await m.tools.ok<Events>("read_events", { group: "agent" })).events).toEqual([]);
    const audit = await m.daemonClient.readAudit({ action: "watch.read", limit: 1 });
    expect(audit.rows[0]).toMatchObject({ client: "mcp", decision: "allowed" });
  });

  it("returns item events with what changed and the revision when kinds names item", async () => {
    const start = (await m.daemonClient.watchStatus()).last_id;
    const made = await m.tools.ok<{ item: { id: string; revision: number } }>("create_item", {
      type: "task",
      title: "Reply to Eve",
      area: "work",
    });
    const r = await m.tools.ok<Events>("read_events", { cursor: start, kinds: ["item"] });
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({
      kind: "item",
      account: null,
      item_id: made.item.id,
      change: "created",
      revision: made.item.revision,
    });
    // Opt-in: the default kinds leave it out.
    const plain = await m.tools.ok<Events>("read_events", { cursor: start });
    expect(plain.events.filter((e) => e["kind"] === "item")).toEqual([]);
  });

  it("answers a waiting read as soon as mail arrives", async () => {
    const t0 = Date.now();
    const waiting = m.tools.ok<Events>("read_events", { group: "agent", wait_seconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    await other.append("INBOX", raw("Arrives while waiting"));
    await sync();
    const r = await waiting;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r.events.map((e) => (e["row"] as { subject: unknown }).subject)).toEqual([
      { untrusted: "Arrives while waiting" },
    ]);
  });

  it("acknowledges nothing when the caller cancels mid-wait", async () => {
    await m.tools.ok<Events>("read_events", { group: "cancel", limit: 200 });
    const before = (await m.daemonClient.watchGroups()).groups.find((g) => g.name === "cancel")!.acked;
    const ac = new AbortController();
    const call = m.client
      .callTool(
        { name: "read_events", arguments: { group: "cancel", wait_seconds: 30 } },
        { signal: ac.signal },
      )
      .catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    expect(await call).toBeInstanceOf(Error);
    await other.append("INBOX", raw("After the cancel"));
    await sync();
    await new Promise((r) => setTimeout(r, 200));
    expect((await m.daemonClient.watchGroups()).groups.find((g) => g.name === "cancel")!.acked).toBe(before);
    const r = await m.tools.ok<Events>("read_events", { group: "cancel" });
    expect(r.events.map((e) => (e["row"] as { subject: unknown }).subject)).toEqual([
      { untrusted: "After the cancel" },
    ]);
  });

  it("acknowledges nothing when the caller cancels after the daemon answered, before the result went out", async () => {
    const acked = async () =>
      (await m.daemonClient.watchGroups()).groups.find((g) => g.name === "late")?.acked;
    await m.tools.ok<Events>("read_events", { group: "late", limit: 200 });
    await new Promise((r) => setTimeout(r, 100));
    const before = await acked();
    await other.append("INBOX", raw("Cancelled late"));
    await sync();
    // Hold the daemon's answer inside the MCP server: the daemon has replied with the page, the
    // MCP result is not out yet, and the caller cancels in between.
    const readEvents = m.daemonClient.readEvents;
    let answered: () => void = () => undefined;
    const reached = new Promise<void>((r) => {
      answered = r;
    });
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    m.daemonClient.readEvents = async (p) => {
      const r = await readEvents(p);
      answered();
      await held;
      return r;
    };
    try {
      const ac = new AbortController();
      const call = m.client
        .callTool({ name: "read_events", arguments: { group: "late" } }, { signal: ac.signal })
        .catch((e: Error) => e);
      await reached;
      ac.abort();
      expect(await call).toBeInstanceOf(Error);
      release();
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      m.daemonClient.readEvents = readEvents;
    }
    expect(await acked()).toBe(before);
    const r = await m.tools.ok<Events>("read_events", { group: "late" });
    expect(r.events.map((e) => (e["row"] as { subject: unknown }).subject)).toEqual([
      { untrusted: "Cancelled late" },
    ]);
    // Delivered this time: acknowledged once the result went out, so the next read is empty.
    expect((await m.tools.ok<Events>("read_events", { group: "late" })).events).toEqual([]);
    expect(await acked()).toBe(r.next_cursor);
    const audit = await m.daemonClient.readAudit({ action: "watch.ack", limit: 1 });
    expect(audit.rows[0]).toMatchObject({ client: "mcp", decision: "allowed" });
  });

  it("refuses a reserved or malformed group name, and cursor with group", async () => {
    expect((await m.tools.fails("read_events", { group: "cache.x" })).reason).toBe("INVALID_ARGUMENT");
    expect((await m.tools.fails("read_events", { group: "Upper" })).reason).toBe("INVALID_ARGUMENT");
    const both = await m.tools.fails("read_events", { group: "agent", cursor: 0 });
    expect(both.reason).toBe("INVALID_ARGUMENT");
    expect(both.message).toContain("cursor and group");
  });
});
