/**
 * Batch outcomes say what the server did. A Dovecot with the ACL plugin refuses changes in a folder
 * whose ACL grants only lookup and read; Dovecots that do not advertise UIDPLUS (and MOVE) show that
 * expunge and move never remove messages the call did not name.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACL_CONFIG, capabilitiesWithout } from "../src/testing/dovecot.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { folderState, msg, refOf, subjects } from "./support/organize.js";

describe("a folder the server will not change (ACL lookup + read only)", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv({ work: { allow_expunge: true } }, ACL_CONFIG);
    const c = await env.dv.connect("alice");
    await c.mailboxCreate("Locked");
    await c.logout();
    await env.dv.appendMessage("alice", "Locked", msg("Locked one"));
    await env.dv.appendMessages("alice", "INBOX", [
      { raw: msg("Free one") },
      { raw: msg("Free two") },
      { raw: msg("Free three") },
      { raw: msg("Free four") },
    ]);
    // The owner keeps only lookup and read on Locked: no insert, store, delete or expunge.
    env.dv.setAcl("alice", "Locked", "lr");
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("counts a refused MOVE as failed and leaves the message where it is", async () => {
    const locked = await refOf(env, 'in:Locked subject:"Locked one"');
    const free = await refOf(env, 'subject:"Free one"');
    const res = await env.client.move({ refs: [locked, free], folder: "Archive" });
    expect(res.succeeded).toBe(1);
    expect(res.failed).toBe(1);
    expect(res.outcomes[0]!.error).toMatchObject({ reason: "UNSUPPORTED" });
    expect(res.outcomes[0]!.error!.message).toContain("refused MOVE");
    expect(res.outcomes[0]!.new_ref).toBeUndefined();
    expect(typeof res.outcomes[1]!.new_ref).toBe("string");
    expect(await subjects(env, "Locked")).toEqual(["Locked one"]);
    expect(await subjects(env, "Archive")).toEqual(["Free one"]);
    const audit = (await env.client.readAudit({ action: "move" })).rows[0]!;
    expect(audit.summary).toContain("1 ok, 1 failed");
  });

  it("counts a refused COPY into the folder as failed; when every ref fails the call fails", async () => {
    const free = await refOf(env, 'subject:"Free two"');
    await expect(env.client.copy({ refs: [free], folder: "Locked" })).rejects.toMatchObject({
      reason: "UNSUPPORTED",
      message: expect.stringContaining("refused COPY"),
    });
    expect(await subjects(env, "Locked")).toEqual(["Locked one"]);
    expect((await env.client.readAudit({ action: "copy" })).rows[0]).toMatchObject({ decision: "error" });
  });

  it("counts a refused STORE as failed and the flag is not set", async () => {
    const locked = await refOf(env, 'in:Locked subject:"Locked one"');
    const free = await refOf(env, 'subject:"Free two"');
    const res = await env.client.setFlags({ refs: [locked, free], add: ["flagged"] });
    expect(res).toMatchObject({ succeeded: 1, failed: 1 });
    expect(res.outcomes[0]!.error!.reason).toBe("UNSUPPORTED");
    expect(res.outcomes[1]!.error).toBeUndefined();
    expect(await folderState(env, "Locked")).toEqual([{ subject: "Locked one", flags: [] }]);
    expect((await folderState(env, "INBOX")).find((m) => m.subject === "Free two")!.flags).toEqual([
      "\\Flagged",
    ]);
  });

  it("counts a refused EXPUNGE and a refused trash as failed and the message stays", async () => {
    const locked = await refOf(env, 'in:Locked subject:"Locked one"');
    const free = await refOf(env, 'subject:"Free three"');
    const ex = await env.client.expunge({ refs: [locked, free] });
    expect(ex).toMatchObject({ succeeded: 1, failed: 1 });
    expect(ex.outcomes[0]!.error!.message).toContain("refused");
    expect(await subjects(env, "Locked")).toEqual(["Locked one"]);
    expect(await subjects(env, "INBOX")).not.toContain("Free three");

    const other = await refOf(env, 'subject:"Free four"');
    const tr = await env.client.trash({ refs: [other, locked] });
    expect(tr).toMatchObject({ succeeded: 1, failed: 1 });
    expect(tr.outcomes[1]!.error!.reason).toBe("UNSUPPORTED");
    expect(await subjects(env, "Locked")).toEqual(["Locked one"]);
    expect(await subjects(env, "Trash")).toEqual(["Free four"]);
  });
});

/** Another client marks a message \Deleted without expunging it, as mail clients do. */
async function markDeletedElsewhere(env: MailEnv, subject: string): Promise<void> {
  const c = await env.dv.connect("alice");
  try {
    const lock = await c.getMailboxLock("INBOX");
    try {
      const uids = await c.search({ subject }, { uid: true });
      expect(uids).toHaveLength(1);
      expect(await c.messageFlagsAdd(uids || [], ["\\Deleted"], { uid: true })).toBe(true);
    } finally {
      lock.release();
    }
  } finally {
    await c.logout();
  }
}

describe("a server without UIDPLUS or MOVE", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv({ work: { allow_expunge: true } }, capabilitiesWithout("UIDPLUS", "MOVE"));
    await env.dv.appendMessages("alice", "INBOX", [
      { raw: msg("Marked elsewhere") },
      { raw: msg("Target one") },
      { raw: msg("Target two") },
    ]);
    await markDeletedElsewhere(env, "Marked elsewhere");
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("refuses expunge, which could only be a plain EXPUNGE of every \\Deleted message", async () => {
    const target = await refOf(env, 'subject:"Target one"');
    await expect(env.client.expunge({ refs: [target] })).rejects.toMatchObject({
      reason: "UNSUPPORTED",
      message: expect.stringContaining("UIDPLUS"),
    });
    expect(await folderState(env, "INBOX")).toEqual([
      { subject: "Marked elsewhere", flags: ["\\Deleted"] },
      { subject: "Target one", flags: [] },
      { subject: "Target two", flags: [] },
    ]);
  });

  it("refuses a move, whose COPY + EXPUNGE fallback would expunge the other message too", async () => {
    const target = await refOf(env, 'subject:"Target two"');
    await expect(env.client.move({ refs: [target], folder: "Archive" })).rejects.toMatchObject({
      reason: "UNSUPPORTED",
    });
    expect(await subjects(env, "INBOX")).toEqual(["Marked elsewhere", "Target one", "Target two"]);
    expect(await subjects(env, "Archive")).toEqual([]);
  });
});

describe("a server with UIDPLUS but without MOVE", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv({}, capabilitiesWithout("MOVE"));
    await env.dv.appendMessages("alice", "INBOX", [{ raw: msg("Marked elsewhere") }, { raw: msg("Mover") }]);
    await markDeletedElsewhere(env, "Marked elsewhere");
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("moves by COPY and UID EXPUNGE of the named message only", async () => {
    const target = await refOf(env, "subject:Mover");
    const res = await env.client.move({ refs: [target], folder: "Archive" });
    expect(res).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await folderState(env, "INBOX")).toEqual([{ subject: "Marked elsewhere", flags: ["\\Deleted"] }]);
    expect(await subjects(env, "Archive")).toEqual(["Mover"]);
    const got = await env.client.getMessages({ refs: [res.outcomes[0]!.new_ref!] });
    expect(got.messages[0]!.subject).toBe("Mover");
  });
});
