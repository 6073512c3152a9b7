/**
 * The kit's fuzzer over every tool with the daemon and Dovecot behind it. Samples give real refs,
 * accounts, folders and a private dir, so cases get past the first check and reach the daemon.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertFuzzClean, fuzzTools } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainmailReasons } from "../src/index.js";
import { generateCorpus, type McpEnv, startMcpEnv } from "./helpers.js";

let m: McpEnv;
let dir: string;

beforeAll(async () => {
  m = await startMcpEnv({ work: { allow_expunge: true, allow_delete_folder: true } });
  const corpus = generateCorpus({ hugeBytes: 0, threads: 1, fillers: 2 });
  await m.env.dv.appendMessages(
    "alice",
    "INBOX",
    corpus.map((c) => ({ raw: c.raw })),
  );
  // The event log then holds the first sync's events, so a read_events case is answered at once.
  await m.daemonClient.cacheSync({});
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-mcp-fuzz-"));
  fs.chmodSync(dir, 0o700);
});
afterAll(async () => {
  await m?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("fuzzing every tool", () => {
  it("answers every case in time with a well-formed result and a declared reason", async () => {
    const rows = (
      await m.tools.ok<{ rows: Array<{ ref: string }> }>("search", { accounts: ["work"], limit: 200 })
    ).rows;
    const refs = rows.map((r) => r.ref);
    expect(refs.length).toBeGreaterThan(3);
    const { tools } = await m.client.listTools();
    expect(tools).toHaveLength(38);
    const report = await fuzzTools(m.client, {
      reasons: Object.keys(chainmailReasons),
      randomCases: 8,
      timeoutMs: 20_000,
      samples: {
        ref: refs.slice(0, 2),
        refs: [refs.slice(0, 3), refs.slice(3, 4)],
        account: ["work"],
        accounts: [["work"], ["work", "home"]],
        folder: ["Archive"],
        name: ["Fuzz/Inner"],
        from: ["Fuzz"],
        to: ["Fuzz Renamed"],
        part: ["2"],
        dir: [dir],
        query: ["from:carol", "subject:project"],
        add: [["seen", "$Fuzz"]],
        remove: [["seen"]],
        id: ["it_admin_work", "it_admin_personal"],
        item_id: ["it_admin_work"],
        blocked_by_id: ["it_admin_personal"],
        type: ["task", "epic"],
        title: ["Fuzzed item"],
        area: ["work"],
        thread_key: ["<fuzz@example.com>"],
        criteria: [["first", "second"]],
        group: ["fuzz"],
        kinds: [["new", "gap"]],
        in: ["INBOX"],
        subject: ["fuzz subject"],
        body: ["fuzz *body*"],
      },
    });
    if (process.env["FUZZ_VERBOSE"]) console.log(report.calls, report.outcomes);
    assertFuzzClean(report);
    expect(report.outcomes["ok"]).toBeGreaterThan(20);
    expect(report.outcomes["INVALID_ARGUMENT"]).toBeGreaterThan(100);
  }, 300_000);
});
