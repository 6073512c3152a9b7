/**
 * `chainmail watch` through the built CLI against a daemon over a real Dovecot: one page with
 * --once, a stream that prints mail another client delivers and stops on SIGINT, and the status and
 * group commands.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../src/errors.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: MailEnv;

const cliEnv = () => ({ ...process.env, CHAINMAIL_HOME: env.dir });
/** The daemon runs in this process, so the CLI is awaited, never run synchronously. */
const run = (args: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.once("exit", (code) => resolve({ code, out, err }));
  });
const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject,
    date: new Date("2026-03-01T10:00:00Z"),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

beforeAll(async () => {
  env = await startMailEnv();
  await env.client.cacheSync({ accounts: ["work"] });
});
afterAll(async () => {
  await env?.stop();
});

describe("chainmail watch", () => {
  it("prints one page of events with --once, as JSON lines", async () => {
    const r = await run(["watch", "--cursor", "0", "--once", "--json", "--account", "work"]);
    expect(r.code).toBe(0);
    const events = r.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; folder?: string });
    expect(events.some((e) => e.kind === "gap" && e.folder === "INBOX")).toBe(true);
  });

  it("streams mail another client delivers, and stops cleanly on SIGINT", async () => {
    const child = spawn(process.execPath, [CLI, "watch", "--group", "cli", "--kind", "new"], {
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    // A new group starts at the log's end at its first read: deliver the mail only once the CLI has
    // made that read (the group exists), however long a loaded machine takes to start it.
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      const { groups } = await env.client.call("watch.groups", {});
      if (groups.some((g) => g.name === "cli")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const other = await env.dv.connect("alice");
    await other.append("INBOX", msg("Streamed to the CLI"));
    await other.logout();
    await env.client.cacheSync({ accounts: ["work"] });
    for (const until = Date.now() + 20_000; Date.now() < until && !out.includes("Streamed to the CLI"); )
      await new Promise((r) => setTimeout(r, 50));
    const line = out.split("\n").find((l) => l.includes("Streamed to the CLI"))!;
    expect(line.split("\t").slice(2, 5)).toEqual(["new", "work", "INBOX"]);
    expect(line).toContain("eve@example.com");
    const code = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    child.kill("SIGINT");
    expect(await code).toBe(0);
  });

  it("reports status and groups, and deletes a group", async () => {
    const status = JSON.parse((await run(["watch", "status", "--json"])).out) as {
      last_id: number;
      groups: number;
    };
    expect(status.last_id).toBeGreaterThan(0);
    expect(status.groups).toBe(1);
    const groups = await run(["watch", "groups"]);
    expect(groups.code).toBe(0);
    expect(groups.out).toMatch(/^cli\tacked \d+\tpending \d+/);
    expect(JSON.parse((await run(["watch", "groups", "delete", "cli", "--json"])).out)).toEqual({
      group: "cli",
      deleted: true,
    });
    expect((await run(["watch", "groups"])).out.trim()).toBe("");
  });

  it("refuses bad flags with exit code 2", async () => {
    expect((await run(["watch", "--kind", "bogus"])).code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect((await run(["watch", "--group", "g", "--cursor", "1"])).code).toBe(
      REASONS.INVALID_ARGUMENT.exitCode,
    );
    expect((await run(["watch", "--group", "cache.x", "--once"])).code).toBe(
      REASONS.INVALID_ARGUMENT.exitCode,
    );
  });
});
