/**
 * Every CLI command prints text by default and JSON with --json, and exits non-zero when it did not
 * do what it was asked: the built CLI against a running daemon, real Dovecot and a real SMTP server.
 * Outside text (a subject, an item's title, a folder name) reaches the terminal as plain text, never
 * as an escape sequence or a bidi override.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { human } from "../src/cli/human/index.js";
import { REASONS } from "../src/errors.js";
import { buildMessage } from "../src/testing/corpus.js";
import { freePort } from "../src/testing/smtp.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: SendEnv;

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read field by field in the asserts
type Json = any;

/** Async: the daemon runs in this process, so a blocking spawn would stop it from answering. */
function run(
  ...args: string[]
): Promise<{ code: number | null; out: string; err: string; json: () => Json }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, CHAINMAIL_HOME: env.dir, TZ: "UTC" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => resolve({ code, out, err, json: () => JSON.parse(out) }));
  });
}

/** Text output: neither JSON nor a control or bidi character a terminal would act on. */
function expectText(out: string, what: string): void {
  expect(out.trimStart().startsWith("{"), `${what} prints JSON: ${out}`).toBe(false);
  expect(out, what).not.toMatch(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach the terminal
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/,
  );
}

/** Where each header word starts: a column's cells start there on every line. */
function expectAligned(out: string, header: string[]): void {
  const lines = out.split("\n").filter(Boolean);
  const head = lines.findIndex((l) => l.startsWith(header[0]!));
  expect(head, out).toBeGreaterThanOrEqual(0);
  const starts = header.map((h) => lines[head]!.indexOf(h));
  expect(
    starts.every((s, i) => i === 0 || s > starts[i - 1]!),
    out,
  ).toBe(true);
  for (const line of lines.slice(head + 1)) {
    if (!line.includes("  ")) continue; // a summary line after the table
    for (const s of starts.slice(1)) expect(line[s - 1], `${line}\n${lines[head]}`).toBe(" ");
  }
}

const HOSTILE = "Pay \u001b[2J\u001b]0;pwned\u0007now \u202egnp.exe\u202c";
let ref: string;

beforeAll(async () => {
  if (!fs.existsSync(CLI))
    throw new Error("build chainmail first (npx turbo run build --filter=@mcpforge/chainmail)");
  env = await startSendEnv({ work: { sendPolicy: 'allowed_recipients = ["bob@example.com"]\n' } });
  await env.dv.appendMessage(
    "alice",
    "INBOX",
    buildMessage({
      from: "Eve <eve@example.com>",
      to: ["alice@example.com"],
      subject: HOSTILE,
      date: new Date("2026-03-01T10:00:00Z"),
      messageId: "<hostile@example.com>",
      text: "body \u001b[31mred\u001b[0m\n",
    }),
  );
  ref = (await env.client.search({ query: "in:inbox", accounts: ["work"], source: "server" })).rows[0]!.ref;
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

describe("text by default, JSON with --json", () => {
  it("reading: get and search show the hostile subject as plain text", async () => {
    for (const args of [
      ["get", ref],
      ["search", "in:inbox", "--source", "server"],
      ["thread", ref],
    ]) {
      const r = await run(...args);
      expect(r.code, r.err).toBe(0);
      expectText(r.out, args[0]!);
      expect(r.out).toContain("Pay ");
      expect(r.out).toContain("gnp.exe");
    }
    expect((await run("get", ref, "--json")).json().messages[0].subject).toBe(HOSTILE);
    const search = await run("search", "in:inbox", "--source", "server");
    expectAligned(search.out, ["DATE", "ACCOUNT", "FOLDER", "FROM", "REF", "SUBJECT"]);
    expect(search.out).toMatch(
      /^2026-03-01 10:00:00 UTC\s+work\s+INBOX\s+eve@example\.com\s+m\d\.\S+\s+Pay /m,
    );
    expect(search.out).toMatch(/^1 match\(es\)$/m);
    expect((await run("get", ref)).out).toMatch(/^date: 2026-03-01 10:00:00 UTC$/m);
  });

  it("the batch commands: one aligned row per ref and a count", async () => {
    const r = await run("flags", ref, "--add", "flagged");
    expect(r.code, r.err).toBe(0);
    expectText(r.out, "flags");
    expectAligned(r.out, ["REF", "OUTCOME", "DETAIL"]);
    expect(r.out).toMatch(new RegExp(`^${ref.replace(/\./g, "\\.")}\\s+ok`, "m"));
    expect(r.out).toContain("flags: 1 done, 0 failed");
    expect((await run("flags", ref, "--remove", "flagged", "--json")).json()).toMatchObject({
      succeeded: 1,
      failed: 0,
    });
  });

  it("raw: where the file went, as key: value", async () => {
    const dir = fs.mkdtempSync(path.join(env.dir, "raw-"));
    fs.chmodSync(dir, 0o700);
    const r = await run("raw", ref, "--dir", dir);
    expect(r.code, r.err).toBe(0);
    expectText(r.out, "raw");
    const saved = /^saved:\s+(\S+)$/m.exec(r.out)?.[1];
    expect(saved && fs.existsSync(saved), r.out).toBe(true);
    expect(r.out).toMatch(/^type:\s+message\/rfc822$/m);
  });

  it("send, outbox and a held send: readable rows, and exit 4 when the policy held the send", async () => {
    const sent = await run(
      "send",
      "work",
      "--to",
      "bob@example.com",
      "--subject",
      "Hi",
      "--body",
      "x",
      "--key",
      "h-1",
    );
    expect(sent.code, sent.err).toBe(0);
    expect(sent.out).toMatch(/^status: sent$/m);
    const n = env.relay.received.length;
    const held = await run(
      "send",
      "work",
      "--to",
      "eve@elsewhere.test",
      "--subject",
      "Hi",
      "--body",
      "x",
      "--key",
      "h-2",
    );
    expect(held.code, held.out).toBe(REASONS.POLICY_DENIED.exitCode);
    expect(held.out).toMatch(/^status: held$/m);
    expect(env.relay.received.length).toBe(n);

    const list = await run("outbox");
    expect(list.code, list.err).toBe(0);
    expectText(list.out, "outbox");
    expectAligned(list.out, ["KEY", "ACCOUNT", "TOOL", "STATUS", "CREATED", "UPDATED", "MESSAGE-ID"]);
    expect(list.out).toMatch(/^h-1\s+work\s+send_email\s+sent\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/m);
    expect((await run("outbox", "--json")).json().rows.map((x: { key: string }) => x.key)).toContain("h-1");

    // Confirming a send that is not awaiting a decision changed nothing.
    const confirm = await run("outbox", "confirm", "h-1");
    expect(confirm.code).toBe(REASONS.CONFLICT.exitCode);
    expect(confirm.out).toContain("not awaiting a decision");
  });

  it("audit: aligned columns with readable times", async () => {
    const r = await run("audit", "--limit", "5");
    expect(r.code, r.err).toBe(0);
    expectText(r.out, "audit");
    expectAligned(r.out, ["TIME", "CLIENT", "ACTION", "ACCOUNT", "DECISION", "SUMMARY"]);
    expect(r.out).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+cli\s+\S+/m);
    expect(r.out).not.toMatch(/\d\dT\d\d:/);
    expect((await run("audit", "--limit", "5", "--json")).json().rows).toHaveLength(5);
    expect((await run("audit", "--since", "2999-01-01T00:00:00Z")).out.trim()).toBe("no audit rows match");
  });

  it("item: a list in columns, one item as key: value, a hostile title as plain text", async () => {
    const created = await run(
      "item",
      "create",
      "--type",
      "task",
      "--title",
      HOSTILE,
      "--area",
      "personal",
      "--due",
      "2026-12-31",
    );
    expect(created.code, created.err).toBe(0);
    expectText(created.out, "item create");
    const id = /^id:\s+(\S+)$/m.exec(created.out)?.[1];
    expect(id, created.out).toBeTruthy();
    expect(created.out).toMatch(/^due:\s+2026-12-31$/m);

    const list = await run("item", "list");
    expect(list.code, list.err).toBe(0);
    expectText(list.out, "item list");
    expectAligned(list.out, ["ID", "TYPE", "STATE", "PRIO", "AREA", "DUE", "FLAGS", "TITLE"]);
    expect(list.out).toMatch(
      new RegExp(`^${id}\\s+task\\s+backlog\\s+p2\\s+personal\\s+2026-12-31\\s+-\\s+Pay `, "m"),
    );

    const got = await run("item", "get", id!);
    expectText(got.out, "item get");
    expect(got.out).toMatch(/^title:\s+Pay \[2J\]0;pwnednow gnp\.exe$/m);
    expect(got.out).toMatch(/^created:\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m);

    const del = await run("item", "delete", id!);
    expect(del.code, del.err).toBe(0);
    expect(del.out).toMatch(new RegExp(`^deleted: ${id}$`, "m"));
    expect((await run("item", "restore", id!, "--json")).json().ids).toEqual([id]);
  });

  it("watch status and groups delete: key: value, exit 3 for a group that does not exist", async () => {
    const s = await run("watch", "status");
    expect(s.code, s.err).toBe(0);
    expectText(s.out, "watch status");
    expect(s.out).toMatch(/^events kept:\s+\d+$/m);
    const d = await run("watch", "groups", "delete", "nobody");
    expect(d.code).toBe(REASONS.NOT_FOUND.exitCode);
    expect(d.out.trim()).toBe("no group named nobody");
  });

  it("cache sync: a row per account; exit 7 when the account's pass failed", async () => {
    const ok = await run("cache", "sync", "--account", "work");
    expect(ok.code, ok.err).toBe(0);
    expectText(ok.out, "cache sync");
    expectAligned(ok.out, ["ACCOUNT", "RESULT", "FOLDERS", "ADDED", "REMOVED", "BODIES", "EVICTED", "NOTE"]);
    expect(ok.out).toMatch(/^work\s+synced\s+\d+/m);
    env.writeConfig({ work: { port: await freePort() } });
    await env.confirmPolicy(); // a new port waits for the owner
    try {
      const failed = await run("cache", "sync", "--account", "work");
      expect(failed.code, failed.out).toBe(REASONS.SERVER_UNAVAILABLE.exitCode);
      expect(failed.out).toMatch(/^work\s+failed\s.*SERVER_UNAVAILABLE/m);
    } finally {
      env.writeConfig({});
      await env.confirmPolicy();
    }
  });
});

describe("the text of a thread", () => {
  it("lists a member that could not be read with its reason and the server's text, made terminal-safe", () => {
    const text = human("thread", {
      thread_id: "<t@example.com>",
      messages: [],
      truncated: false,
      omitted_refs: [],
      errors: [
        {
          ref: "m1.x",
          error: {
            reason: "UNSUPPORTED",
            message: "the IMAP server of account work refused to FETCH the message",
            hint: "Try again later.",
            detail: "server: NO \u001b[31mno\u001b[0m\nsecond line",
          },
        },
      ],
      partial: [
        {
          account: "work",
          folder: "Arch\u001b[2Jive",
          error: {
            reason: "UNSUPPORTED",
            message: "the IMAP server refused the SEARCH of this folder",
            hint: "",
          },
        },
      ],
      source: "server",
    });
    expect(text).toContain("0 message(s), 1 could not be read, 1 folder(s) not searched");
    expect(text).toContain(
      "folder Arch[2Jive: not searched: UNSUPPORTED: the IMAP server refused the SEARCH",
    );
    expect(text).toContain("ref m1.x: error: UNSUPPORTED: the IMAP server of account work refused");
    expect(text).toContain("[server: NO [31mno[0m; second line]");
    expect(text).not.toContain("\u001b");
  });
});

describe("the docs' example of the text output", () => {
  it("audit-log.mdx shows what the CLI prints for its rows", () => {
    const page = fs.readFileSync(
      path.join(pkg, "../../apps/docs/content/docs/chainmail/audit-log.mdx"),
      "utf8",
    );
    const example = /Without `--json` the rows are aligned columns[^\n]*\n\n```text\n([\s\S]*?)\n```/.exec(
      page,
    )?.[1];
    expect(example, "the example block").toBeTruthy();
    // The rows the example shows, read back from it; printed again they must give the same text.
    const rows = example!
      .split("\n")
      .slice(1)
      .map((line, i) => {
        const [date, time, , client, action, account, decision, ...summary] = line.split(/ +/);
        return {
          id: i,
          time: `${date}T${time}Z`,
          client,
          action,
          account,
          decision,
          summary: summary.join(" "),
        };
      });
    const tz = process.env["TZ"];
    process.env["TZ"] = "UTC";
    try {
      expect(human("audit", { rows })).toBe(example);
    } finally {
      if (tz === undefined) delete process.env["TZ"];
      else process.env["TZ"] = tz;
    }
  });
});
