/**
 * trash_folder names the Trash of a server without SPECIAL-USE: the organizing `trash` and the draft
 * tools' removal both move into it, not into the folder with the \Trash role.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeRef } from "../src/refs.js";
import { configToml, type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;

async function count(folder: string): Promise<number> {
  const c = await env.dv.connect("alice");
  try {
    const s = await c.status(folder, { messages: true });
    return s ? (s.messages ?? 0) : -1;
  } finally {
    await c.logout().catch(() => undefined);
  }
}

beforeAll(async () => {
  env = await startMailEnv();
  await env.client.createFolder({ account: "work", name: "Bin" });
  const toml = configToml(env.dv, {}).replace(
    'archive_folder = "Archive"',
    'archive_folder = "Archive"\ntrash_folder = "Bin"',
  );
  fs.writeFileSync(env.home.configFile, toml);
  const t = new Date(Date.now() + 5000);
  fs.utimesSync(env.home.configFile, t, t);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("trash_folder", () => {
  it("is where trash moves a message", async () => {
    await env.dv.appendMessage("alice", "INBOX", "Subject: binned\r\nMessage-ID: <binned@x>\r\n\r\nbye\r\n");
    const { rows } = await env.client.search({
      query: "subject:binned",
      accounts: ["work"],
      source: "server",
    });
    const res = await env.client.trash({ refs: [rows[0]!.ref] });
    expect(res.succeeded).toBe(1);
    const moved = res.outcomes[0] as { new_ref?: string };
    expect(decodeRef(moved.new_ref ?? "").folder).toBe("Bin");
    expect(await count("Bin")).toBe(1);
    expect(await count("Trash")).toBe(0);
  });

  it("is where the draft tools move a removed draft", async () => {
    const draft = await env.client.call("draft.create", {
      account: "work",
      to: ["bob@example.com"],
      subject: "d",
    });
    expect(draft.status).toBe("draft");
    const ref = draft.draft_ref ?? "";
    expect((await env.client.call("draft.delete", { ref })).deleted).toBe(true);
    expect(await count("Bin")).toBe(2);
    expect(await count("Trash")).toBe(0);
  });
});
