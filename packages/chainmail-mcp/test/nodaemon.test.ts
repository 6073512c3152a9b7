/**
 * With no daemon at start the server still starts: it lists the 36 ungated tools, and every call fails
 * with DAEMON_UNAVAILABLE (bad arguments are still INVALID_ARGUMENT, checked before any daemon call).
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { DaemonClient } from "@mcpforge/chainmail";
import {
  assertFuzzClean,
  connectInMemory,
  fuzzTools,
  type Session,
  session,
} from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainmailReasons, createChainmailMcpServer, loadGateState, UNREACHABLE } from "../src/index.js";

const SOCKET = "/nonexistent/chainmail-mcp-test/run/chainmail.sock";
let conn: Awaited<ReturnType<typeof connectInMemory>>;
let tools: Session;
const logged: string[] = [];

beforeAll(async () => {
  const client = new DaemonClient({ socketPath: SOCKET, client: "mcp" });
  const kit = createChainmailMcpServer({ client, log: (l) => logged.push(l) });
  conn = await connectInMemory(kit, { scopes: [] });
  tools = session(conn.client);
});
afterAll(async () => {
  await conn?.close();
});

const REF = "m1.WyJ3b3JrIiwiSU5CT1giLDEsMV0"; // ["work","INBOX",1,1]
const MINIMAL: Record<string, Record<string, unknown>> = {
  list_accounts: {},
  test_account: { account: "work" },
  list_folders: {},
  create_folder: { account: "work", name: "A" },
  rename_folder: { account: "work", from: "A", to: "B" },
  search: {},
  get_message: { refs: [REF] },
  get_thread: { ref: REF },
  download_attachment: { ref: REF, part: "2" },
  save_raw_message: { ref: REF },
  move: { refs: [REF], folder: "Archive" },
  copy: { refs: [REF], folder: "Archive" },
  archive: { refs: [REF] },
  trash: { refs: [REF] },
  set_flags: { refs: [REF], add: ["seen"] },
  set_labels: { refs: [REF], add: ["Work"] },
  cache_status: {},
  create_item: { type: "task", title: "t", area: "work" },
  update_item: { id: "it_admin_work" },
  get_item: { id: "it_admin_work" },
  list_items: {},
  delete_item: { id: "it_x" },
  restore_item: { id: "it_x" },
  edit_criteria: { item_id: "it_x" },
  tick_criterion: { item_id: "it_x", criterion_id: "cr_x", ticked: false },
  set_blocker: { item_id: "it_x", blocked_by_id: "it_y", linked: true },
  link_thread: { item_id: "it_x", ref: REF },
  unlink_thread: { item_id: "it_x", account: "work", thread_key: "<a@b>" },
  read_events: {},
  send_email: { account: "work", to: ["bob@example.com"], subject: "s" },
  reply: { ref: REF },
  forward: { ref: REF, to: ["bob@example.com"] },
  create_draft: { account: "work" },
  update_draft: { ref: REF },
  send_draft: { ref: REF },
  delete_draft: { ref: REF },
};

describe("no daemon", () => {
  it("lists the 36 ungated tools", async () => {
    const { tools } = await conn.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(MINIMAL).sort());
    expect(logged.some((l) => l.includes("cannot read the policy"))).toBe(true);
  });

  it("fails every call with DAEMON_UNAVAILABLE, naming the socket", async () => {
    for (const [name, args] of Object.entries(MINIMAL)) {
      const e = await tools.fails(name, args);
      expect(e.reason, name).toBe("DAEMON_UNAVAILABLE");
      expect(e.message).toContain(SOCKET);
      expect(e.hint).toContain("chainmail daemon");
    }
  });

  it("still checks arguments first", async () => {
    expect((await tools.fails("search", { limit: 500 })).reason).toBe("INVALID_ARGUMENT");
    expect((await tools.fails("move", { refs: [REF] })).reason).toBe("INVALID_ARGUMENT");
  });

  it("answers the fuzzer with declared reasons only", async () => {
    const report = await fuzzTools(conn.client, { reasons: Object.keys(chainmailReasons), randomCases: 10 });
    assertFuzzClean(report);
    expect(report.outcomes["DAEMON_UNAVAILABLE"]).toBeGreaterThan(0);
    expect(report.outcomes["INVALID_ARGUMENT"]).toBeGreaterThan(0);
  });
});

describe("a daemon that accepts but never answers", () => {
  it("gates the tools off after the check's timeout instead of holding up tools/list", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-mcp-hung-"));
    const socketPath = path.join(dir, "hung.sock");
    const server = net.createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const client = new DaemonClient({ socketPath, client: "mcp", timeoutMs: 60_000 });
    try {
      const started = Date.now();
      expect(await loadGateState(client, () => undefined, 200)).toEqual(UNREACHABLE);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      client.close();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
