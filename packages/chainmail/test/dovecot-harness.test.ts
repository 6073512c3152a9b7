import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";

let dv: Dovecot;
beforeAll(async () => {
  dv = await startDovecot({
    users: [
      { name: "alice", password: "pw-a" },
      { name: "bob", password: "pw-b" },
    ],
  });
});
afterAll(async () => {
  await dv?.stop();
});

describe("dovecot harness", () => {
  it("greets, logs in and lists the special-use folders", async () => {
    const c = await dv.connect("alice");
    const list = await c.list();
    const uses = Object.fromEntries(list.map((f) => [f.path, f.specialUse ?? ""]));
    expect(uses).toMatchObject({
      INBOX: "\\Inbox",
      Drafts: "\\Drafts",
      Sent: "\\Sent",
      Trash: "\\Trash",
      Archive: "\\Archive",
      Junk: "\\Junk",
    });
    expect(c.capabilities.has("UIDPLUS")).toBe(true);
    expect(c.capabilities.has("MOVE")).toBe(true);
    await c.logout();
  });

  it("appends messages with flags and keeps users apart", async () => {
    const raw =
      "From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\nMessage-ID: <1@x>\r\n\r\nbody\r\n";
    const r1 = await dv.appendMessage("alice", "INBOX", raw, ["\\Seen"]);
    const r2 = await dv.appendMessage("alice", "INBOX", raw);
    expect(r2.uid).toBe(r1.uid + 1);
    expect(r1.uidValidity).toBeGreaterThan(0);
    const c = await dv.connect("bob");
    const st = await c.status("INBOX", { messages: true });
    expect((st || undefined)?.messages).toBe(0);
    await c.logout();
    const a = await dv.connect("alice");
    await a.mailboxOpen("INBOX");
    const msg = await a.fetchOne(String(r1.uid), { flags: true }, { uid: true });
    expect(msg && [...(msg.flags ?? [])]).toContain("\\Seen");
    await a.logout();
  });

  // Before the wrong password: after a failed login Dovecot holds the address's next logins for seconds.
  it("counts a user's logged-in IMAP sessions", async () => {
    expect(dv.sessionCount("alice")).toBe(0);
    const a = await dv.connect("alice");
    const b = await dv.connect("alice");
    const other = await dv.connect("bob");
    expect(dv.sessionCount("alice")).toBe(2);
    await a.logout();
    await b.logout();
    await other.logout();
    for (let i = 0; i < 50 && dv.sessionCount("alice") + dv.sessionCount("bob") > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(dv.sessionCount("alice")).toBe(0);
    expect(dv.sessionCount("bob")).toBe(0);
  });

  it("rejects a wrong password", async () => {
    dv.users[0]!.password = "wrong";
    await expect(dv.connect("alice")).rejects.toThrow();
    dv.users[0]!.password = "pw-a";
  });

  it("runs doveadm against the instance", () => {
    const out = dv.doveadm(["mailbox", "list", "-u", "alice"]);
    expect(out).toContain("Archive");
  });
});
