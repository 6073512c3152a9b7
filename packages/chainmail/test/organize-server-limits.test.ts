/**
 * What the server leaves out of its answers, on a Dovecot with the ACL plugin. A folder the owner may
 * insert into but not read (a drop box) gets no COPYUID for a COPY or MOVE into it, as Dovecot hides
 * the new UIDs from a user who may not read them; a folder whose owner may only set \Seen has
 * PERMANENTFLAGS (\Seen), so a keyword cannot be stored there.
 *
 * Why not a Dovecot that does not advertise UIDPLUS: `imap_capability` changes only the list it
 * advertises, and it still answers COPY and MOVE with COPYUID (imapflow reads it whatever the list).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACL_CONFIG } from "../src/testing/dovecot.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";
import { folderState, msg, refOf, subjects } from "./support/organize.js";

const ALL_RIGHTS = "lrwstipekxa";
let env: MailEnv;

beforeAll(async () => {
  env = await startMailEnv({}, ACL_CONFIG);
  const c = await env.dv.connect("alice");
  await c.mailboxCreate("Drop");
  await c.mailboxCreate("SeenOnly");
  await c.logout();
  await env.dv.appendMessages("alice", "INBOX", [
    { raw: msg("Dropped by move") },
    { raw: msg("Dropped by copy") },
    { raw: msg("Free keyword") },
  ]);
  await env.dv.appendMessages("alice", "SeenOnly", [
    { raw: msg("Seen only one") },
    { raw: msg("Seen only two") },
  ]);
  env.dv.setAcl("alice", "Drop", "li");
  env.dv.setAcl("alice", "SeenOnly", "lrs");
});
afterAll(async () => {
  await env?.stop();
});

describe("a move or copy the server answers without COPYUID", () => {
  it("succeeds without a new_ref, and the message is where it was put", async () => {
    const moved = await refOf(env, 'subject:"Dropped by move"');
    const copied = await refOf(env, 'subject:"Dropped by copy"');
    const mv = await env.client.move({ refs: [moved], folder: "Drop" });
    expect(mv).toMatchObject({ succeeded: 1, failed: 0 });
    expect(mv.outcomes).toEqual([{ ref: moved }]);
    const cp = await env.client.copy({ refs: [copied], folder: "Drop" });
    expect(cp).toMatchObject({ succeeded: 1, failed: 0 });
    expect(cp.outcomes).toEqual([{ ref: copied }]);
    expect(await subjects(env, "INBOX")).toEqual(["Dropped by copy", "Free keyword"]);
    // The owner cannot read Drop until given the rights back.
    env.dv.setAcl("alice", "Drop", ALL_RIGHTS);
    expect(await subjects(env, "Drop")).toEqual(["Dropped by copy", "Dropped by move"]);
    expect((await env.client.readAudit({ action: "move" })).rows[0]!.summary).toContain("1 ok, 0 failed");
  });
});

describe("set_flags with a keyword the folder's PERMANENTFLAGS does not take", () => {
  it("fails that ref as UNSUPPORTED and changes nothing on it, not a success with the keyword dropped", async () => {
    const kept = await refOf(env, 'in:SeenOnly subject:"Seen only one"');
    const free = await refOf(env, 'subject:"Free keyword"');
    const res = await env.client.setFlags({ refs: [kept, free], add: ["seen", "$Project"] });
    expect(res).toMatchObject({ succeeded: 1, failed: 1 });
    expect(res.outcomes[0]!.error).toEqual({
      reason: "UNSUPPORTED",
      message: expect.stringContaining("cannot keep 1 of the flags"),
      hint: expect.stringContaining("Nothing was changed"),
      // The folder and the flag are outside text: in the detail, never in the message.
      detail: "folder: SeenOnly\nflags: $Project",
    });
    expect(res.outcomes[1]!.error).toBeUndefined();
    // imapflow would have stored \Seen alone here and answered true.
    expect(await folderState(env, "SeenOnly")).toEqual([
      { subject: "Seen only one", flags: [] },
      { subject: "Seen only two", flags: [] },
    ]);
    expect((await folderState(env, "INBOX")).find((m) => m.subject === "Free keyword")!.flags).toEqual([
      "$Project",
      "\\Seen",
    ]);
  });

  it("is the call's error when every ref fails, and a flag the folder keeps is still stored", async () => {
    const ref = await refOf(env, 'in:SeenOnly subject:"Seen only two"');
    await expect(env.client.setFlags({ refs: [ref], add: ["$Project"] })).rejects.toMatchObject({
      reason: "UNSUPPORTED",
      message: expect.stringContaining(
        "cannot keep 1 of the flags asked for; the folder and the flags are in detail",
      ),
      detail: "folder: SeenOnly\nflags: $Project",
    });
    expect(await env.client.setFlags({ refs: [ref], add: ["seen"] })).toMatchObject({
      succeeded: 1,
      failed: 0,
    });
    expect((await folderState(env, "SeenOnly")).find((m) => m.subject === "Seen only two")!.flags).toEqual([
      "\\Seen",
    ]);
  });
});
