/**
 * Reasons and hints an agent can act on (issue 31, point 6), one row per case, on a real Dovecot: a
 * server's NO is a refusal with the reason its response code says, never SERVER_UNAVAILABLE's "try
 * again later"; outside text (the server's reply, folder names) is in `detail`, not in the message.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACL_CONFIG } from "../src/testing/dovecot.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { freePort } from "../src/testing/smtp.js";
import { msg, refOf } from "./support/organize.js";

interface Failure {
  reason: string;
  message: string;
  hint: string;
  detail?: string;
}

let env: MailEnv;
let msgId: string;

beforeAll(async () => {
  // SMTP points at a port nobody listens on: sending meets ECONNREFUSED.
  env = await startMailEnv({ smtpPort: await freePort() }, ACL_CONFIG);
  const c = await env.dv.connect("alice");
  // Created directly, so its parent exists only as a level (\Noselect): it holds no messages.
  await c.mailboxCreate("Levels/Leaf");
  await c.mailboxCreate("Locked");
  await c.logout();
  env.dv.setAcl("alice", "Locked", "lr");
  await env.dv.appendMessages("alice", "INBOX", [{ raw: msg("Table one") }, { raw: msg("Table two") }]);
  msgId = (await env.client.search({ query: 'subject:"Table one"', source: "server" })).rows[0]!.message_id!;
});
afterAll(async () => {
  await env?.stop();
});

/**
 * A ref of "Table one" that no longer names it: the message was moved to the other of INBOX and
 * Moved after the ref was taken.
 */
async function movedRef(): Promise<string> {
  const row = (
    await env.client.search({ query: 'subject:"Table one"', accounts: ["work"], source: "server" })
  ).rows[0]!;
  const moved = await env.client.move({
    refs: [row.ref],
    folder: row.folder === "Moved" ? "INBOX" : "Moved",
  });
  expect(moved.succeeded).toBe(1);
  return row.ref;
}

const failure = async (p: Promise<unknown>): Promise<Failure> => {
  try {
    await p;
  } catch (err) {
    return err as Failure;
  }
  throw new Error("expected a failure");
};

/** The one failing outcome of a batch, or the call's own failure when every ref failed. */
const batchFailure = async (p: Promise<{ outcomes: Array<{ error?: Failure }> }>): Promise<Failure> => {
  try {
    const res = await p;
    const e = res.outcomes.find((o) => o.error)?.error;
    if (!e) throw new Error("expected a failed outcome");
    return e;
  } catch (err) {
    return err as Failure;
  }
};

interface Row {
  name: string;
  run: () => Promise<Failure>;
  reason: string;
  /** Text the hint must contain (what the agent does next). */
  hint: RegExp;
  /** Outside text that belongs in detail and not in the message. */
  detail?: RegExp;
}

const ROWS: Row[] = [
  {
    name: 'create_folder "../escape" (the server says NO [CANNOT])',
    run: () => failure(env.client.createFolder({ account: "work", name: "../escape" })),
    reason: "INVALID_ARGUMENT",
    hint: /folder name/,
    detail: /Invalid mailbox name/,
  },
  {
    name: "copy to a \\Noselect folder",
    run: async () =>
      batchFailure(env.client.copy({ refs: [await refOf(env, 'subject:"Table two"')], folder: "Levels" })),
    reason: "INVALID_ARGUMENT",
    hint: /subfolders/,
    detail: /Levels/,
  },
  {
    name: "copy into a folder whose ACL forbids it (NO [NOPERM])",
    run: async () =>
      batchFailure(env.client.copy({ refs: [await refOf(env, 'subject:"Table two"')], folder: "Locked" })),
    reason: "UNSUPPORTED",
    hint: /rights/,
    detail: /[Pp]ermission/,
  },
  {
    name: "a ref whose message was moved",
    run: async () => {
      await env.client.createFolder({ account: "work", name: "Moved" });
      const ref = await refOf(env, 'subject:"Table one"');
      const moved = await env.client.move({ refs: [ref], folder: "Moved" });
      expect(typeof moved.outcomes[0]!.new_ref).toBe("string");
      return batchFailure(env.client.move({ refs: [ref], folder: "INBOX" }));
    },
    reason: "NOT_FOUND",
    hint: /new_ref.*search again/,
  },
  {
    name: "get_message with a ref whose message was moved",
    run: async () => {
      const ref = await refOf(env, 'in:Moved subject:"Table one"');
      await env.client.move({ refs: [ref], folder: "INBOX" });
      return failure(env.client.getMessages({ refs: [ref] }));
    },
    reason: "NOT_FOUND",
    hint: /new_ref/,
  },
  {
    name: "get_thread with a ref whose message was moved",
    run: async () => failure(env.client.getThread({ ref: await movedRef() })),
    reason: "NOT_FOUND",
    hint: /new_ref.*search again/,
  },
  {
    name: "save_raw_message with a ref whose message was moved",
    run: async () => failure(env.client.call("raw.save", { ref: await movedRef() })),
    reason: "NOT_FOUND",
    hint: /new_ref.*search again/,
  },
  {
    name: 'create_item with due_date "2026-13-01" (not INTERNAL)',
    run: () =>
      failure(
        env.client.call("item.create", { type: "task", title: "x", area: "work", due_date: "2026-13-01" }),
      ),
    reason: "INVALID_ARGUMENT",
    hint: /named argument/,
  },
  {
    name: "a draft saved into a Drafts folder whose ACL forbids it (APPEND: NO [NOPERM])",
    run: async () => {
      env.dv.setAcl("alice", "Drafts", "lr");
      // Dovecot caches a session's ACLs: the daemon's next call gets a new session.
      env.dv.doveadm(["kick", "alice"]);
      try {
        return await failure(env.client.call("draft.create", { account: "work", subject: "x", body: "y" }));
      } finally {
        env.dv.setAcl("alice", "Drafts", "lrwstipekxa");
        env.dv.doveadm(["kick", "alice"]);
      }
    },
    reason: "UNSUPPORTED",
    hint: /rights/,
    detail: /[Pp]ermission/,
  },
  {
    name: "an unknown query field (list:)",
    run: () => failure(env.client.search({ query: "list:work" })),
    reason: "INVALID_ARGUMENT",
    hint: /from:.*subject:.*in:.*rfc822msgid:/,
  },
  {
    name: "in: a folder that does not exist (server)",
    run: () => failure(env.client.search({ query: "in:Nonexistent", source: "server" })),
    reason: "NOT_FOUND",
    hint: /list_folders/,
    detail: /Nonexistent/,
  },
  {
    name: "send when the SMTP server refuses the connection (ECONNREFUSED)",
    run: () =>
      failure(env.client.call("send", { account: "work", to: ["bob@example.com"], subject: "x", body: "y" })),
    reason: "SERVER_UNAVAILABLE",
    hint: /test_account/,
  },
  {
    name: "an attachment file that does not exist",
    run: () =>
      failure(
        env.client.call("send", {
          account: "work",
          to: ["bob@example.com"],
          subject: "x",
          body: "y",
          attachments: ["/nonexistent/chainmail/report.pdf"],
        }),
      ),
    reason: "NOT_FOUND",
    hint: /path/,
  },
];

describe("reasons and hints", () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const e = await row.run();
      expect(e.reason, JSON.stringify(e)).toBe(row.reason);
      expect(e.hint).toMatch(row.hint);
      if (row.reason !== "SERVER_UNAVAILABLE") expect(e.hint).not.toMatch(/try again later/i);
      expect(e.message).not.toContain("server text");
      if (row.detail) {
        expect(e.detail).toMatch(row.detail);
        expect(e.message).not.toMatch(row.detail);
      }
    });
  }

  it("names the refused SMTP connection without calling it the server's text", async () => {
    const e = await failure(
      env.client.call("send", { account: "work", to: ["bob@example.com"], subject: "x2", body: "y" }),
    );
    expect(e.message).toMatch(/ECONNREFUSED/);
    expect(e.message).not.toMatch(/untrusted|«/);
    expect(e.hint).not.toMatch(/list_folders/);
  });

  it("the attachment hint is about the path, not list_folders", async () => {
    const e = await failure(
      env.client.call("send", {
        account: "work",
        to: ["bob@example.com"],
        subject: "x",
        body: "y",
        attachments: ["/nonexistent/chainmail/report.pdf"],
      }),
    );
    expect(e.hint).not.toMatch(/list_folders/);
  });
});

describe("rfc822msgid: and in: from the server and from the cache", () => {
  it("finds a message by its Message-ID, with or without angle brackets, from both sources", async () => {
    const bare = msgId.replace(/^<|>$/g, "");
    const server = await env.client.search({ query: `rfc822msgid:${msgId}`, source: "server" });
    expect(server.rows.map((r) => r.subject)).toEqual(["Table one"]);
    expect((await env.client.search({ query: `rfc822msgid:${bare}`, source: "server" })).count).toBe(1);
    // A Message-ID that only contains this one is not it.
    expect((await env.client.search({ query: `rfc822msgid:${bare.slice(1)}`, source: "server" })).count).toBe(
      0,
    );
    await env.client.cacheSync({ accounts: ["work"] });
    const cache = await env.client.search({
      query: `rfc822msgid:${bare}`,
      accounts: ["work"],
      source: "cache",
    });
    expect(cache.source).toBe("cache");
    expect(cache.rows.map((r) => r.ref)).toEqual(
      server.rows.filter((r) => r.account === "work").map((r) => r.ref),
    );
  });

  it("refuses in: a folder that does not exist from the cache too, and still answers in: an empty one", async () => {
    await env.client.cacheSync({ accounts: ["work"] });
    const e = await failure(
      env.client.search({ query: "in:Nonexistent", accounts: ["work"], source: "cache" }),
    );
    expect(e).toMatchObject({ reason: "NOT_FOUND" });
    expect(e.detail).toContain("Nonexistent");
    await env.client.createFolder({ account: "work", name: "Empty" });
    expect((await env.client.search({ query: "in:Empty", accounts: ["work"] })).count).toBe(0);
    expect(
      (await env.client.search({ query: "in:inbox", accounts: ["work"], source: "server" })).count,
    ).toBeGreaterThan(0);
    expect(
      (await env.client.search({ query: "in:anywhere", accounts: ["work"], source: "server" })).count,
    ).toBeGreaterThan(0);
  });
});
