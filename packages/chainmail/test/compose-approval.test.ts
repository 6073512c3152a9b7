/**
 * hold_approval = "client" at the daemon: `send.judge` judges the exact envelope and sends and saves
 * nothing; `approved` sends a held message exactly once (counted at the SMTP server), only from the
 * `mcp` client on an account whose confirmed policy says "client", and the audit row says the
 * person approved it in the client. Anything else is refused before anything is sent or saved.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { MailError } from "../src/errors.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;
let mcp: DaemonClient;

const CLIENT_POLICY = 'allowed_recipients = ["bob@example.com"]\nhold_approval = "client"\n';
const approval = { by: "client" as const, answer_id: "q0.test-answer" };
/** An approval of a send as judged now: it names the judgement's fingerprint. */
async function approvedFor(params: Record<string, unknown>) {
  const j = await mcp.call("send.judge", { op: "send", params });
  if (j.hold_approval !== "client") throw new Error("judged as an owner account");
  return { ...approval, judged: j.fingerprint };
}
/** An approval refused before anything is judged (its fingerprint is never compared). */
const approved = { ...approval, judged: "d1.never-judged" };

beforeAll(async () => {
  env = await startSendEnv({ work: { sendPolicy: CLIENT_POLICY } });
  mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
}, 60_000);

afterAll(async () => {
  mcp?.close();
  await env?.stop();
});

const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MailError);
  return err as MailError;
};

describe("hold_approval = client at the daemon", () => {
  it("judges a send the policy would hold without sending, saving or recording it", async () => {
    const params = {
      account: "work",
      to: ["Mallory <mallory@evil.test>", "bob@example.com"],
      subject: "judge me",
      body: "line one\nline two",
    };
    const j = await mcp.call("send.judge", { op: "send", params });
    expect(j).toMatchObject({
      outcome: "hold",
      hold_approval: "client",
      blocked: ["mallory@evil.test"],
      too_many_recipients: false,
      too_large: false,
      recipients: ["mallory@evil.test", "bob@example.com"],
      subject: "judge me",
      idempotency_key: expect.stringMatching(/^d1\./),
    });
    if (j.hold_approval !== "client") throw new Error("judged as an owner account");
    expect(j.excerpt.startsWith("line one\nline two")).toBe(true);
    expect(env.relay.transactions()).toHaveLength(0);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(0);
    expect((await env.client.call("outbox.list", {})).rows).toHaveLength(0);
    // The judgement's key is the key the send runs under.
    const held = await mcp.call("send", params);
    expect(held).toMatchObject({ status: "held", idempotency_key: j.idempotency_key });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(1);
    expect(env.relay.transactions()).toHaveLength(0);
    // The account's own recipients: the judge says send.
    const fine = await mcp.call("send.judge", {
      op: "send",
      params: { account: "work", to: ["bob@example.com"], subject: "fine" },
    });
    expect(fine).toMatchObject({ outcome: "send", blocked: [] });
  });

  it("refuses a judge of params its operation would refuse", async () => {
    const err = await refusal(
      mcp.call("send.judge", { op: "send", params: { account: "work", subject: "x" } }),
    );
    expect(err.reason).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain("to");
  });

  it("sends an approved held message exactly once, audited as approved in the client; a retry sends nothing", async () => {
    const before = env.relay.transactions().length;
    const params = { account: "work", to: ["carol@elsewhere.test"], subject: "approved", body: "hello" };
    const approved = await approvedFor(params);
    const sent = await mcp.call("send", { ...params, approved });
    expect(sent).toMatchObject({ status: "sent", idempotency_key: expect.stringMatching(/^d1\./) });
    const tx = env.relay.transactions().slice(before);
    expect(tx).toEqual([{ from: "alice@example.com", rcpts: ["carol@elsewhere.test"] }]);
    const row = (await env.client.readAudit({ action: "send" })).rows[0];
    expect(row).toMatchObject({ client: "mcp", account: "work", decision: "allowed" });
    expect(row?.summary).toContain("approved in the client by the person (answer q0.test-answer)");
    expect(row?.summary).toContain("1 blocked recipient(s)");
    // The same approved call again (a client's replay), and the plain call: nothing more goes out.
    expect(await mcp.call("send", { ...params, approved })).toMatchObject({ status: "duplicate" });
    expect(await mcp.call("send", params)).toMatchObject({ status: "duplicate" });
    expect(await mcp.call("send.judge", { op: "send", params })).toMatchObject({ outcome: "duplicate" });
    expect(env.relay.transactions().length - before).toBe(1);
  });

  it("judges a send racing another of its key after that one ends: duplicate, not SEND_UNCONFIRMED", async () => {
    const params = {
      account: "work",
      to: ["dave@elsewhere.test"],
      subject: "in flight",
      idempotency_key: "flight-1",
    };
    const approved = await approvedFor(params);
    let release: () => void = () => undefined;
    env.relay.holdData(new Promise<void>((r) => (release = r)));
    const dataSent = env.relay.commands.filter((c) => /^DATA/i.test(c)).length;
    const first = mcp.call("send", { ...params, approved });
    // The first send is at the SMTP server, waiting for its reply: its outbox row says pending
    while (env.relay.commands.filter((c) => /^DATA/i.test(c)).length === dataSent)
      await new Promise((r) => setTimeout(r, 10));
    const second = mcp.call("send.judge", { op: "send", params });
    await new Promise((r) => setTimeout(r, 200));
    release();
    expect(await first).toMatchObject({ status: "sent" });
    expect(await second).toMatchObject({ outcome: "duplicate" });
  });

  it("names the Reply-To a message sets, of a new message and of a draft", async () => {
    const params = {
      account: "work",
      to: ["dave@elsewhere.test"],
      subject: "answers elsewhere",
      headers: { "Reply-To": "Boss <collector@evil.test>" },
    };
    expect(await mcp.call("send.judge", { op: "send", params })).toMatchObject({
      outcome: "hold",
      reply_to: "Boss <collector@evil.test>",
    });
    const draft = await mcp.call("draft.create", params);
    const ref = (draft as { draft_ref: string }).draft_ref;
    expect(await mcp.call("send.judge", { op: "draft.send", params: { ref } })).toMatchObject({
      outcome: "hold",
      reply_to: "Boss <collector@evil.test>",
    });
    const plain = await mcp.call("send.judge", { op: "send", params: { ...params, headers: {} } });
    expect(plain).not.toHaveProperty("reply_to");
  });

  it("sends a message held earlier once it is approved, and takes its held copy out of Drafts", async () => {
    const before = env.relay.transactions().length;
    const drafts = await env.dv.messageCount("alice", "Drafts");
    const params = { account: "work", to: ["dave@elsewhere.test"], subject: "held then approved" };
    const approved = await approvedFor(params);
    expect(await mcp.call("send", params)).toMatchObject({ status: "held" });
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts + 1);
    expect(await mcp.call("send", { ...params, approved })).toMatchObject({ status: "sent" });
    expect(env.relay.transactions().length - before).toBe(1);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts);
  });

  it("refuses approved from the cli client, and on an account left to its owner, before anything is sent or saved", async () => {
    const before = env.relay.transactions().length;
    const drafts = await env.dv.messageCount("alice", "Drafts");
    const fromCli = await refusal(
      env.client.call("send", {
        account: "work",
        to: ["eve@elsewhere.test"],
        subject: "cli approval",
        approved,
      }),
    );
    expect(fromCli.reason).toBe("POLICY_DENIED");
    expect(fromCli.message).toContain("only from the MCP client");
    // "home" has hold_approval "owner" (the default).
    const owner = await refusal(
      mcp.call("send", { account: "home", to: ["eve@elsewhere.test"], subject: "owner", approved }),
    );
    expect(owner.reason).toBe("POLICY_DENIED");
    expect(owner.message).toContain('hold_approval "owner"');
    expect(
      await mcp.call("send.judge", {
        op: "send",
        params: { account: "home", to: ["x@y.test"], subject: "s" },
      }),
    ).toEqual({ hold_approval: "owner" });
    expect(env.relay.transactions().length).toBe(before);
    expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts);
    const denied = (await env.client.readAudit({ action: "send" })).rows.filter(
      (r) => r.decision === "denied",
    );
    expect(denied.map((r) => r.client).sort()).toEqual(["cli", "mcp"]);
  });

  it("refuses an approval of another message: a file changed after the judgement sends and saves nothing", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-judged-"));
    try {
      const file = path.join(dir, "report.txt");
      fs.writeFileSync(file, "the report shown\n");
      const params = {
        account: "work",
        to: ["gina@elsewhere.test"],
        subject: "swapped",
        attachments: [file],
      };
      const j = await mcp.call("send.judge", { op: "send", params });
      if (j.hold_approval !== "client") throw new Error("judged as an owner account");
      // The judgement names the file the person is shown: its name, size and SHA-256.
      expect(j.files).toEqual([
        {
          name: "report.txt",
          bytes: 17,
          sha256: createHash("sha256").update("the report shown\n").digest("hex"),
        },
      ]);
      const before = env.relay.transactions().length;
      const drafts = await env.dv.messageCount("alice", "Drafts");
      fs.writeFileSync(file, "the secret swapped\n");
      const err = await refusal(
        mcp.call("send", { ...params, approved: { ...approval, judged: j.fingerprint } }),
      );
      expect(err.reason).toBe("CONFLICT");
      expect(err.message).toContain("not the one the person was shown");
      expect(env.relay.transactions().length).toBe(before);
      expect(await env.dv.messageCount("alice", "Drafts")).toBe(drafts);
      expect((await env.client.readAudit({ action: "send" })).rows[0]).toMatchObject({ decision: "denied" });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an approval when the account's From name changed in config.toml after the judgement; judged again, it sends once", async () => {
    const params = { account: "work", to: ["ivan@elsewhere.test"], subject: "renamed", body: "hi" };
    const j = await mcp.call("send.judge", { op: "send", params });
    if (j.hold_approval !== "client") throw new Error("judged as an owner account");
    const before = env.relay.transactions().length;
    env.writeConfig({ work: { sendPolicy: CLIENT_POLICY, displayName: "The Board of Directors" } });
    try {
      const err = await refusal(
        mcp.call("send", { ...params, approved: { ...approval, judged: j.fingerprint } }),
      );
      expect(err.reason).toBe("CONFLICT");
      expect(err.message).toContain("the account's config");
      expect(env.relay.transactions().length).toBe(before);
      // The same input judged under the config as it is now: the key is the same (a retry of the
      // same call replays), the fingerprint not, and that approval sends, once.
      const again = await mcp.call("send.judge", { op: "send", params });
      if (again.hold_approval !== "client") throw new Error("judged as an owner account");
      expect(again.idempotency_key).toBe(j.idempotency_key);
      expect(again.fingerprint).not.toBe(j.fingerprint);
      const sent = await mcp.call("send", {
        ...params,
        approved: { ...approval, judged: again.fingerprint },
      });
      expect(sent).toMatchObject({ status: "sent" });
      expect(env.relay.transactions().length - before).toBe(1);
    } finally {
      env.writeConfig({ work: { sendPolicy: CLIENT_POLICY } });
    }
  });

  it("shows text below a run of blank lines, says how much is left out, and an HTML part that says something else", async () => {
    const j = await mcp.call("send.judge", {
      op: "send",
      params: {
        account: "work",
        to: ["hank@elsewhere.test"],
        subject: "hidden",
        body_format: "html",
        body: `<p>Wire the money.</p>`,
        html_text: `Lunch?${"\n".repeat(30)}${Array.from({ length: 12 }, (_, i) => `line ${i}`).join("\n")}`,
      },
    });
    if (j.hold_approval !== "client") throw new Error("judged as an owner account");
    expect(j.excerpt).toBe(`Lunch?\n\n${Array.from({ length: 6 }, (_, i) => `line ${i}`).join("\n")}`);
    // line 6 to line 11, and the account's signature ("-- " and its line).
    expect(j.more_lines).toBe(8);
    expect(j.html_excerpt).toContain("Wire the money.");
    expect(j.files).toEqual([]);
  });

  it("takes hold_approval = client only once the owner confirms it", async () => {
    env.writeConfig({ work: { sendPolicy: 'allowed_recipients = ["bob@example.com"]\n' } });
    const params = { account: "work", to: ["frank@elsewhere.test"], subject: "narrowed" };
    // Back to "owner" is a narrowing: at once.
    expect(await mcp.call("send.judge", { op: "send", params })).toEqual({ hold_approval: "owner" });
    expect((await refusal(mcp.call("send", { ...params, approved }))).reason).toBe("POLICY_DENIED");
    // "client" again is a widening: it waits for `chainmail policy confirm`.
    env.writeConfig({ work: { sendPolicy: CLIENT_POLICY } });
    expect(await mcp.call("send.judge", { op: "send", params })).toEqual({ hold_approval: "owner" });
    const pending = (await env.client.call("policy.status", {})) as unknown;
    expect(JSON.stringify(pending)).toContain("hold_approval owner → client");
    await env.confirmPolicy();
    expect(await mcp.call("send.judge", { op: "send", params })).toMatchObject({ hold_approval: "client" });
  });
});
