import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { connectStdio } from "@mcpforge/toolkit/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { createNotesApp } from "../src/app.js";
import { RecordingPublisher, tempDir } from "./helpers.js";

const run = promisify(execFile);
const CLI = fileURLToPath(new URL("../dist/bin/notes-status-mcp.js", import.meta.url));

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
});

describe("the built bin over stdio", () => {
  it("serves tools, keeps data in --db, and publish-due writes the outbox", async () => {
    const dir = tempDir("notes-e2e");
    try {
      const db = join(dir.path, "data", "notes.db");
      const outbox = join(dir.path, "outbox.jsonl");
      const env = { NOTES_STATUS_OUTBOX: outbox, XDG_DATA_HOME: join(dir.path, "xdg") };
      const conn = await connectStdio({
        command: process.execPath,
        args: [CLI, "--db", db, "--no-scheduler"],
        env,
      });
      const { tools } = await conn.client.listTools();
      expect(tools).toHaveLength(12);
      const created = (await conn.client.callTool({
        name: "create_note",
        arguments: { content: "from e2e", tags: ["E2E"], status: "ready" },
      })) as CallToolResult;
      const id = (created.structuredContent as { note: { id: string } }).note.id;
      const soon = new Date(Date.now() + 1500).toISOString();
      const scheduled = (await conn.client.callTool({
        name: "schedule_notes",
        arguments: { notes: [{ id, scheduledAt: soon }] },
      })) as CallToolResult;
      expect(scheduled.isError).toBeFalsy();
      const missing = (await conn.client.callTool({
        name: "get_note",
        arguments: { id: "nope" },
      })) as CallToolResult;
      expect(missing.isError).toBe(true);
      expect((missing.structuredContent as { error: { message: string } }).error.message).toBe(
        "Note not found: nope",
      );
      await conn.close();

      await new Promise((r) => setTimeout(r, 1600));
      const { stdout } = await run(process.execPath, [CLI, "publish-due", "--db", db], {
        env: { ...process.env, ...env },
      });
      expect(JSON.parse(stdout)).toMatchObject({ published: [id], failed: [], restacked: [], recycled: [] });
      const line = JSON.parse(readFileSync(outbox, "utf8").trim());
      expect(line).toMatchObject({
        event: "note.published",
        note: { id, content: "from e2e", tags: ["e2e"] },
      });

      // The data survived the restart: a new server sees the note as published.
      const again = await connectStdio({ command: process.execPath, args: [CLI, "--db", db], env });
      const listed = (await again.client.callTool({
        name: "list_notes",
        arguments: { status: "published" },
      })) as CallToolResult;
      expect(listed.structuredContent).toMatchObject({ total: 1, notes: [{ id, status: "published" }] });
      await again.close();
    } finally {
      dir.cleanup();
    }
  });

  it("uses the XDG data dir by default and accepts --db :memory:", async () => {
    const dir = tempDir("notes-xdg");
    try {
      const env = { XDG_DATA_HOME: dir.path, NOTES_STATUS_DB: "" };
      const conn = await connectStdio({ command: process.execPath, args: [CLI], env });
      await conn.client.callTool({ name: "create_note", arguments: { content: "default place" } });
      await conn.close();
      expect(existsSync(join(dir.path, "notes-status-mcp", "notes.db"))).toBe(true);
      const mem = await connectStdio({ command: process.execPath, args: [CLI, "--db", ":memory:"], env });
      const listed = (await mem.client.callTool({ name: "list_notes", arguments: {} })) as CallToolResult;
      expect(listed.structuredContent).toMatchObject({ total: 0 });
      await mem.close();
    } finally {
      dir.cleanup();
    }
  });

  it("gives up on a note after --give-up-after (or $NOTES_STATUS_GIVE_UP_AFTER) failed runs", async () => {
    const dir = tempDir("notes-giveup");
    try {
      // A note due now, in a database of its own.
      const dueNote = async (name: string) => {
        const db = join(dir.path, name);
        const hourAgo = () => new Date(Date.now() - 3_600_000);
        const app = await createNotesApp({ db, clock: hourAgo, publisher: new RecordingPublisher() });
        const id = (await app.notes.create({ content: "doomed", status: "ready" })).id;
        await app.notes.schedule([{ id, scheduledAt: new Date(Date.now() - 60_000).toISOString() }]);
        await app.close();
        return { db, id };
      };
      // The outbox path is a folder, so every publish fails.
      const publishDue = (db: string, flags: string[], giveUpAfter: string) =>
        run(process.execPath, [CLI, "publish-due", "--db", db, "--outbox", dir.path, ...flags], {
          env: { ...process.env, NOTES_STATUS_GIVE_UP_AFTER: giveUpAfter },
        }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      const one = await dueNote("one.db");
      const byEnv = await publishDue(one.db, [], "1");
      expect(byEnv).toMatchObject({ code: 1 });
      expect(JSON.parse(byEnv.stdout)).toMatchObject({ failed: [{ id: one.id }], gaveUp: [one.id] });
      const two = await dueNote("two.db");
      const byFlag = await publishDue(two.db, ["--give-up-after", "3"], "1");
      expect(JSON.parse(byFlag.stdout)).toMatchObject({ failed: [{ id: two.id }], gaveUp: [] });
      for (const [flags, env] of [
        [["--give-up-after", "0"], ""],
        [[], "eight"],
      ] as const) {
        const bad = await publishDue(one.db, [...flags], env);
        expect(bad).toMatchObject({ code: 2 });
        expect(bad.stderr).toMatch(
          /(--give-up-after|NOTES_STATUS_GIVE_UP_AFTER) takes a whole number of runs/,
        );
      }
    } finally {
      dir.cleanup();
    }
  });

  it("reads flags as node:util parseArgs does: --flag=value, and publish-due after the flags", async () => {
    const dir = tempDir("notes-args");
    try {
      const outbox = join(dir.path, "outbox.jsonl");
      const { stdout } = await run(process.execPath, [
        CLI,
        "--db=:memory:",
        `--outbox=${outbox}`,
        "publish-due",
      ]);
      expect(JSON.parse(stdout)).toMatchObject({ published: [], failed: [], gaveUp: [] });
      const twice = await run(process.execPath, [CLI, "publish-due", "publish-due"]).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(twice).toMatchObject({ code: 2 });
      expect((twice as { stderr: string }).stderr).toMatch(/unknown argument publish-due/);
    } finally {
      dir.cleanup();
    }
  });

  it("exits 2 with a message on a bad flag, and a webhook without a secret", async () => {
    const bad = await run(process.execPath, [CLI, "--bogus"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toMatch(/unknown argument --bogus/);
    const hook = await run(
      process.execPath,
      [CLI, "publish-due", "--db", ":memory:", "--webhook-url", "http://127.0.0.1:9/x"],
      {
        env: { ...process.env, NOTES_STATUS_WEBHOOK_SECRET: "" },
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(hook).toMatchObject({ code: 2 });
    expect((hook as { stderr: string }).stderr).toMatch(/webhook-secret/);
  });
});
