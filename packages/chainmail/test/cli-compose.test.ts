/**
 * The built CLI's compose commands against the daemon, Dovecot and the SMTP relay: reply, forward,
 * draft create|update|send|delete and outbox list, with --text, --html-file and --json, each message
 * read back as the relay received it; a flag a command does not take is INVALID_ARGUMENT (exit 2).
 * (send with --text and --html-file, and outbox confirm|release, are in compose-crash.test.ts.)
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../src/errors.js";
import { encodeRef } from "../src/refs.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: SendEnv;
let originalRef: string;

/** What the compose and outbox commands print with --json. */
interface CliJson {
  status?: string;
  draft_ref?: string;
  rows?: Array<{ key: string; status: string; tool: string }>;
  [field: string]: unknown;
}

/** The built CLI, run without blocking this process (the daemon under test runs in it). */
function cli(
  args: string[],
): Promise<{ code: number | null; out: string; err: string; json: () => CliJson }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--home", env.dir, "--json", ...args], {
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
    child.on("close", (code) => resolve({ code, out, err, json: () => JSON.parse(out) as CliJson }));
  });
}

const last = async () => simpleParser(env.relay.received.at(-1)!.raw);

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  env = await startSendEnv();
  const raw = [
    "From: Carol <carol@example.org>",
    "To: alice@example.com",
    "Cc: dave@example.org",
    "Subject: Offsite",
    "Message-ID: <offsite-1@example.org>",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="b1"',
    "",
    "--b1",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Where shall we meet?",
    "--b1",
    'Content-Type: application/pdf; name="map.pdf"',
    'Content-Disposition: attachment; filename="map.pdf"',
    "",
    "%PDF map",
    "--b1--",
    "",
  ].join("\r\n");
  const r = await env.dv.appendMessage("alice", "INBOX", raw);
  originalRef = encodeRef({ account: "work", folder: "INBOX", uidValidity: r.uidValidity, uid: r.uid });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("chainmail reply and forward", () => {
  it("reply --all --text sends a threaded plain-text reply to everyone, and a repeat is a duplicate", async () => {
    const args = ["reply", originalRef, "--all", "--text", "--body", "The *usual* place."];
    const r = await cli(args);
    expect(r.code, r.err).toBe(0);
    expect(r.json()).toMatchObject({ status: "sent", idempotency_key: expect.stringMatching(/^d1\./) });
    const m = await last();
    expect(env.relay.received.at(-1)!.to.sort()).toEqual(["carol@example.org", "dave@example.org"]);
    expect(m.subject).toBe("Re: Offsite");
    expect(m.inReplyTo).toBe("<offsite-1@example.org>");
    expect(m.html).toBe(false);
    expect(m.text).toContain("The *usual* place.");
    expect(m.text).toContain("> Where shall we meet?");
    const n = env.relay.received.length;
    expect((await cli(args)).json()).toMatchObject({ status: "duplicate", original_status: "sent" });
    expect(env.relay.received.length).toBe(n);
  });

  it("reply --html-file sends that HTML with --body as its text part; reply --draft saves it", async () => {
    const html = path.join(env.dir, "reply.html");
    fs.writeFileSync(html, "<p>See you <b>there</b></p>");
    const r = await cli(["reply", originalRef, "--html-file", html, "--body", "See you there (text)"]);
    expect(r.code, r.err).toBe(0);
    const m = await last();
    expect(m.html).toContain("<b>there</b>");
    expect(m.text).toContain("See you there (text)");
    const before = await env.dv.messageCount("alice", "Drafts");
    const n = env.relay.received.length;
    const d = await cli(["reply", originalRef, "--draft", "--body", "later"]);
    expect(d.json()).toEqual({ status: "draft", draft_ref: expect.stringMatching(/^m1\./) });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(before + 1);
    expect(env.relay.received.length).toBe(n);
  });

  it("forward carries the original's attachments unless --no-attachments", async () => {
    let r = await cli(["forward", originalRef, "--to", "bob@example.com", "--body", "FYI"]);
    expect(r.code, r.err).toBe(0);
    let m = await last();
    expect(m.subject).toBe("Fwd: Offsite");
    expect(m.attachments.map((a) => a.filename)).toEqual(["map.pdf"]);
    r = await cli(["forward", originalRef, "--to", "bob@example.com", "--body", "FYI 2", "--no-attachments"]);
    expect(r.code, r.err).toBe(0);
    m = await last();
    expect(m.attachments).toEqual([]);
  });
});

describe("chainmail draft", () => {
  it("create, update (keeping what it leaves out), send and delete", async () => {
    const start = await env.dv.messageCount("alice", "Drafts");
    const c = await cli([
      "draft",
      "create",
      "work",
      "--to",
      "bob@example.com",
      "--bcc",
      "hidden@example.org",
      "--subject",
      "CLI draft",
      "--body",
      "first",
    ]);
    expect(c.code, c.err).toBe(0);
    const created = c.json();
    expect(created).toEqual({ status: "draft", draft_ref: expect.stringMatching(/^m1\./) });
    const u = await cli(["draft", "update", created.draft_ref!, "--body", "second"]);
    expect(u.code, u.err).toBe(0);
    const updated = u.json();
    expect(updated.draft_ref).not.toBe(created.draft_ref);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(start + 1);
    const s = await cli(["draft", "send", updated.draft_ref!, "--key", "cli-draft-1"]);
    expect(s.code, s.err).toBe(0);
    expect(s.json()).toMatchObject({ status: "sent", idempotency_key: "cli-draft-1" });
    const relayed = env.relay.received.at(-1)!;
    expect(relayed.to.sort()).toEqual(["bob@example.com", "hidden@example.org"]);
    const m = await simpleParser(relayed.raw);
    expect(m.subject).toBe("CLI draft");
    expect(m.text).toContain("second");
    expect(m.bcc).toBeUndefined();
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(start);

    const gone = (await cli(["draft", "create", "work", "--subject", "bin me"])).json();
    const del = await cli(["draft", "delete", gone.draft_ref!]);
    expect(del.code, del.err).toBe(0);
    expect(del.json()).toEqual({ ref: gone.draft_ref, deleted: true });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(start);
  });

  it("refuses a ref outside Drafts with exit code 2", async () => {
    const r = await cli(["draft", "delete", originalRef]);
    expect(r.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect(r.json()).toMatchObject({ error: { reason: "INVALID_ARGUMENT" } });
  });
});

describe("flags and the outbox", () => {
  it("refuses a flag the command does not take instead of dropping it", async () => {
    const n = env.relay.received.length;
    for (const args of [
      ["reply", originalRef, "--subject", "ignored?"],
      ["forward", originalRef, "--to", "bob@example.com", "--all"],
      ["send", "work", "--to", "bob@example.com", "--subject", "s", "--draft"],
      ["draft", "send", originalRef, "--to", "bob@example.com"],
      ["draft", "create", "work", "--key", "k"],
      ["outbox", "list", "--to", "bob@example.com"],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    }
    expect(env.relay.received.length).toBe(n);
  });

  it("outbox list shows the sends with their keys and status", async () => {
    const r = await cli(["outbox", "list"]);
    expect(r.code, r.err).toBe(0);
    const rows = r.json().rows ?? [];
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: "cli-draft-1", status: "sent", tool: "send_draft" }),
      ]),
    );
    expect(rows.filter((x) => x.tool === "reply").length).toBeGreaterThanOrEqual(2);
  });
});
