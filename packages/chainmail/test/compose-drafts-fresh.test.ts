/**
 * A draft saved by reply or forward with draft: true is in the very next `search in:drafts`, as one
 * saved by create_draft is: the write sends the account's next search to the server until the cache
 * has caught up, even though the call names the account only through the original's ref.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeRef } from "../src/refs.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;
let originalRef: string;

beforeAll(async () => {
  env = await startSendEnv();
  const r = await env.dv.appendMessage(
    "alice",
    "INBOX",
    buildMessage({
      from: "Carol <carol@example.org>",
      to: ["alice@example.com"],
      subject: "Venue options",
      date: new Date("2026-11-30T10:00:00Z"),
      messageId: "<venue-1@example.org>",
      text: "Three venues to choose from.\n",
    }),
  );
  originalRef = encodeRef({ account: "work", folder: "INBOX", uidValidity: r.uidValidity, uid: r.uid });
  const { accounts } = await env.client.cacheSync({ accounts: ["work"] });
  expect(accounts.map((a) => a.ok)).toEqual([true]);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

async function drafts(subject: string) {
  const res = await env.client.search({ query: `in:drafts subject:"${subject}"`, accounts: ["work"] });
  return { source: res.source, refs: res.rows.map((r) => r.ref) };
}

describe("drafts saved by reply and forward", () => {
  it("the cache answers in:drafts once synced (so the check below is not trivially the server's)", async () => {
    expect((await drafts("Venue options")).source).toBe("cache");
  });

  it("a reply saved as a draft is in an immediate search in:drafts", async () => {
    const res = await env.client.call("reply", { ref: originalRef, body: "The second one.", draft: true });
    expect(res.status).toBe("draft");
    const found = await drafts("Re: Venue options");
    expect(found.refs).toContain(res.draft_ref);
    expect(env.relay.received).toHaveLength(0);
  });

  it("a forward saved as a draft is in an immediate search in:drafts", async () => {
    await env.client.cacheSync({ accounts: ["work"] });
    expect((await drafts("Venue options")).source).toBe("cache");
    const res = await env.client.call("forward", {
      ref: originalRef,
      to: ["dave@example.org"],
      body: "For you.",
      draft: true,
    });
    expect(res.status).toBe("draft");
    expect((await drafts("Fwd: Venue options")).refs).toContain(res.draft_ref);
  });

  it("an updated draft is found under its new subject at once", async () => {
    await env.client.cacheSync({ accounts: ["work"] });
    const created = await env.client.call("draft.create", {
      account: "work",
      subject: "First words",
      body: "x",
    });
    await env.client.cacheSync({ accounts: ["work"] });
    const updated = await env.client.call("draft.update", {
      ref: created.draft_ref!,
      subject: "Second words",
    });
    expect((await drafts("Second words")).refs).toEqual([updated.draft_ref]);
  });
});
