/**
 * How update_draft, send_draft and delete_draft take the old draft out of Drafts: expunged (UID
 * EXPUNGE of that message only) where the policy allows expunge and the server has UIDPLUS, otherwise
 * moved to Trash. (The policy-off case, moved to Trash, is in compose-reply-drafts.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capabilitiesWithout } from "../src/testing/dovecot.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

/** The ref of the draft with this subject, by a server search (a server without UIDPLUS need not name it). */
async function draftRef(env: MailEnv, subject: string): Promise<string> {
  const { rows } = await env.client.search({
    query: `in:drafts subject:"${subject}"`,
    accounts: ["work"],
    source: "server",
  });
  expect(rows).toHaveLength(1);
  return rows[0]!.ref;
}

describe("with allow_expunge on and a server with UIDPLUS", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv({ work: { allow_expunge: true } });
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("expunges the old draft on update and the draft on delete; Trash gets nothing", async () => {
    const d = await env.client.call("draft.create", {
      account: "work",
      to: ["bob@example.com"],
      subject: "v1",
    });
    const u = await env.client.call("draft.update", { ref: d.draft_ref!, subject: "v2" });
    expect(u.draft_ref).toMatch(/^m1\./);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(1);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(0);
    expect(await env.client.call("draft.delete", { ref: u.draft_ref! })).toEqual({
      ref: u.draft_ref,
      deleted: true,
    });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(0);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(0);
    // Deleting again is idempotent: the draft is already gone.
    expect(await env.client.call("draft.delete", { ref: u.draft_ref! })).toEqual({
      ref: u.draft_ref,
      deleted: false,
    });
  });
});

describe("with allow_expunge on and a server without UIDPLUS", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv({ work: { allow_expunge: true } }, capabilitiesWithout("UIDPLUS"));
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("moves the old draft to Trash instead (a plain EXPUNGE could take other messages)", async () => {
    const d = await env.client.call("draft.create", {
      account: "work",
      to: ["bob@example.com"],
      subject: "w1",
    });
    expect(d.status).toBe("draft");
    await env.client.call("draft.update", { ref: await draftRef(env, "w1"), subject: "w2" });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(1);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(1);
    await env.client.call("draft.delete", { ref: await draftRef(env, "w2") });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(0);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(2);
  });
});

describe("a server with neither UIDPLUS nor MOVE", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv({ work: { allow_expunge: true } }, capabilitiesWithout("UIDPLUS", "MOVE"));
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("refuses to remove a draft (a move would need a plain EXPUNGE) and leaves it in Drafts", async () => {
    await env.client.call("draft.create", { account: "work", to: ["bob@example.com"], subject: "x1" });
    await expect(env.client.call("draft.delete", { ref: await draftRef(env, "x1") })).rejects.toMatchObject({
      reason: "UNSUPPORTED",
    });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(1);
    expect(await env.dv.messageCount("alice", "Trash")).toBe(0);
  });
});
