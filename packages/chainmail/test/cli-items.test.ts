/**
 * `chainmail item ...` through the built CLI against a running daemon: every item sub-command, its
 * --json output, the text list, and a refused flag value's exit code.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../src/errors.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let env: MailEnv;

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read field by field in the asserts
type Json = any;

/** Async: the daemon runs in this process, so a blocking spawn would stop it from answering. */
function run(
  ...args: string[]
): Promise<{ code: number | null; out: string; err: string; json: () => Json }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, CHAINMAIL_HOME: env.dir },
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

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages("alice", "INBOX", [
    {
      raw: "Message-ID: <cli.1@example.com>\r\nFrom: carol@example.com\r\nTo: alice@example.com\r\nSubject: CLI link\r\n\r\nhi\r\n",
    },
  ]);
});
afterAll(async () => {
  await env?.stop();
});

describe("chainmail item", () => {
  it("runs every item operation from the command line", async () => {
    const epic = (
      await run("item", "create", "--type", "epic", "--title", "Garden", "--area", "personal", "--json")
    ).json();
    expect(epic.item).toMatchObject({ type: "epic", area: "personal", priority: "p2" });
    const created = (
      await run(
        "item",
        "create",
        "--type",
        "task",
        "--title",
        "Plant roses",
        "--parent",
        epic.item.id,
        "--criterion",
        "bed dug",
        "--criterion",
        "roses in",
        "--due",
        "2027-04-01",
        "--estimate",
        "2.5",
        "--key",
        "roses",
        "--json",
      )
    ).json();
    const id = created.item.id as string;
    expect(created.item).toMatchObject({ due_date: "2027-04-01", estimate: 2.5, area: "personal" });
    expect(
      (
        await run(
          "item",
          "create",
          "--type",
          "task",
          "--title",
          "Plant roses",
          "--parent",
          epic.item.id,
          "--criterion",
          "bed dug",
          "--criterion",
          "roses in",
          "--due",
          "2027-04-01",
          "--estimate",
          "2.5",
          "--key",
          "roses",
          "--json",
        )
      ).json().duplicate,
    ).toBe(true);
    const [dug, roses] = created.criteria.map((c: { id: string }) => c.id);
    expect(
      (await run("item", "update", id, "--priority", "p1", "--clear", "estimate", "--json")).json().item,
    ).toMatchObject({
      priority: "p1",
      estimate: null,
    });
    const crit = (
      await run(
        "item",
        "criteria",
        id,
        "--edit",
        `${roses}=roses planted`,
        "--order",
        `${roses},${dug}`,
        "--add",
        "watered",
        "--json",
      )
    ).json();
    expect(crit.criteria.map((c: { text: string }) => c.text)).toEqual([
      "roses planted",
      "bed dug",
      "watered",
    ]);
    expect(
      (await run("item", "tick", id, dug, "--evidence", "photo", "--json")).json().criterion.ticked,
    ).toBe(true);
    expect((await run("item", "untick", id, dug, "--json")).json().criterion.ticked).toBe(false);
    const other = (
      await run("item", "create", "--type", "task", "--title", "Buy soil", "--area", "personal", "--json")
    ).json();
    expect((await run("item", "block", id, other.item.id, "--json")).json().changed).toBe(true);
    expect(
      (await run("item", "get", id, "--json")).json().blocked_by.map((b: { id: string }) => b.id),
    ).toEqual([other.item.id]);
    expect((await run("item", "unblock", id, other.item.id, "--json")).json().changed).toBe(true);

    const ref = (await run("search", "subject:CLI", "--source", "server", "--json")).json().rows[0]
      .ref as string;
    const link = (await run("item", "link", id, ref, "--note", "from the CLI", "--json")).json();
    expect(link.link).toMatchObject({ thread_key: "<cli.1@example.com>", note: "from the CLI" });
    expect(
      (await run("item", "unlink", id, "work", "<cli.1@example.com>", "--json")).json().revision,
    ).toBeGreaterThan(link.revision);

    const text = await run("item", "list", "--under", epic.item.id);
    expect(text.out).toMatch(new RegExp(`^${id}\\s+task\\s+backlog\\s+p1\\s+personal\\s.*Plant roses$`, "m"));
    expect(
      (await run("item", "list", "--inbox", "--json")).json().items.map((i: { id: string }) => i.id),
    ).toEqual([other.item.id]);
    expect((await run("item", "delete", epic.item.id, "--cascade", "--json")).json().ids).toEqual([
      epic.item.id,
      id,
    ]);
    expect((await run("item", "list", "--deleted", "--not-ongoing", "--json")).json().items).toHaveLength(3);
    expect((await run("item", "restore", epic.item.id, "--cascade", "--json")).json().ids).toEqual([
      epic.item.id,
      id,
    ]);
    const since = (await run("item", "list", "--changed-since", "0", "--limit", "2", "--json")).json();
    expect(since.items).toHaveLength(2);
    expect(since.next_page_token).toMatch(/^p1\./);
  });

  it("refuses a bad value with the daemon's message and exit code 2", async () => {
    const r = await run("item", "create", "--type", "chore", "--title", "x", "--area", "work");
    expect(r.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect(r.err).toMatch(/type must be "objective"/);
    expect((await run("item", "frobnicate")).code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect((await run("item", "list", "--ongoing", "--not-ongoing")).err).toContain("exclude each other");
  });
});
