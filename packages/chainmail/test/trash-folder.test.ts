/**
 * trash_folder, drafts_folder and sent_folder name the role folders of a server without SPECIAL-USE:
 * the organizing `trash` and the draft tools' removal both move into trash_folder, not into the folder
 * with the \Trash role; drafts are saved to drafts_folder and only a ref there is a draft; Sent
 * copies go to sent_folder.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeRef, encodeRef } from "../src/refs.js";
import { configToml } from "../src/testing/mailenv.js";
import { type SendEnv, startSendEnv } from "../src/testing/sendenv.js";

let env: SendEnv;

beforeAll(async () => {
  env = await startSendEnv();
  for (const name of ["Bin", "MyDrafts", "MySent"]) await env.client.createFolder({ account: "work", name });
  const toml = configToml(env.dv, { smtpPort: env.relay.port }).replace(
    'archive_folder = "Archive"',
    'archive_folder = "Archive"\ntrash_folder = "Bin"\ndrafts_folder = "MyDrafts"\nsent_folder = "MySent"',
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
    expect(await env.dv.messageCount("alice", "Bin")).toBe(1);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(0);
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
    expect(await env.dv.messageCount("alice", "Bin")).toBe(2);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(0);
  });

  it("drafts_folder is the account's Drafts: drafts go there, and a ref in the \\Drafts-role folder is no draft", async () => {
    const before = await env.dv.messageCount("alice", "MyDrafts");
    const d = await env.client.call("draft.create", {
      account: "work",
      to: ["bob@example.com"],
      subject: "mine",
    });
    expect(decodeRef(d.draft_ref ?? "").folder).toBe("MyDrafts");
    expect(await env.dv.messageCount("alice", "MyDrafts")).toBe(before + 1);
    const r = await env.dv.appendMessage("alice", "Drafts", "Subject: elsewhere\r\n\r\nx\r\n", ["\\Draft"]);
    const other = encodeRef({ account: "work", folder: "Drafts", uidValidity: r.uidValidity, uid: r.uid });
    await expect(env.client.call("draft.delete", { ref: other })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
    });
    // send_draft sends it and takes it out of drafts_folder (into trash_folder: expunge is off).
    const sent = await env.client.call("draft.send", { ref: d.draft_ref ?? "" });
    expect(sent.status).toBe("sent");
    expect(await env.dv.messageCount("alice", "MyDrafts")).toBe(before);
    expect(await env.dv.messageCount("alice", "Bin")).toBe(3);
  });

  it("sent_folder is where the Sent copy goes", async () => {
    const before = await env.dv.messageCount("alice", "MySent");
    const res = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "copy to MySent",
      body: "b",
    });
    expect(res.status).toBe("sent");
    expect(decodeRef(res.sent_ref ?? "").folder).toBe("MySent");
    expect(await env.dv.messageCount("alice", "MySent")).toBe(before + 1);
    expect(await env.dv.messageCount("alice", "Sent")).toBe(0);
  });
});
