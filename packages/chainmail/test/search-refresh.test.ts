/**
 * A server-path search sees what another client changed just before it, even when the daemon's
 * connection still has that folder selected from the previous call.
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
let other: ImapFlow;

const msg = (subject: string) =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject,
    date: new Date("2026-03-01T10:00:00Z"),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessage("alice", "INBOX", msg("Refresh one"));
  // The other client keeps INBOX selected, as a mail client does.
  other = await env.dv.connect("alice");
  await other.mailboxOpen("INBOX");
});
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await env?.stop();
});

const subjects = async (query: string) =>
  (await env.client.search({ query, accounts: ["work"], source: "server" })).rows
    .map((r) => r.subject)
    .sort();

describe("server-path search after another client's change", () => {
  it("finds a message another client appended since the last search", async () => {
    expect(await subjects("in:inbox subject:refresh")).toEqual(["Refresh one"]);
    await other.append("INBOX", msg("Refresh two"));
    expect(await subjects("in:inbox subject:refresh")).toEqual(["Refresh one", "Refresh two"]);
  });

  it("sees a flag another client set since the last search", async () => {
    expect(await subjects("in:inbox is:flagged")).toEqual([]);
    const uids = (await other.search({ subject: "Refresh one" }, { uid: true })) || [];
    expect(await other.messageFlagsAdd(uids, ["\\Flagged"], { uid: true })).toBe(true);
    expect(await subjects("in:inbox is:flagged")).toEqual(["Refresh one"]);
  });

  it("drops a message another client expunged since the last search", async () => {
    expect(await subjects("in:inbox subject:refresh")).toEqual(["Refresh one", "Refresh two"]);
    const uids = (await other.search({ subject: "Refresh two" }, { uid: true })) || [];
    expect(await other.messageDelete(uids, { uid: true })).toBe(true);
    expect(await subjects("in:inbox subject:refresh")).toEqual(["Refresh one"]);
  });
});

describe("a batch after another client's change to the selected folder", () => {
  it("reports a message another client expunged as NOT_FOUND, not as moved", async () => {
    await other.append("INBOX", msg("Gone soon"));
    const rows = (await env.client.search({ query: "in:inbox", accounts: ["work"], source: "server" })).rows;
    const gone = rows.find((r) => r.subject === "Gone soon")!.ref;
    const keep = rows.find((r) => r.subject === "Refresh one")!.ref;
    // A change selects INBOX read-write on the daemon's connection, where it stays.
    await env.client.setFlags({ refs: [keep], add: ["seen"] });
    const uids = (await other.search({ subject: "Gone soon" }, { uid: true })) || [];
    expect(await other.messageDelete(uids, { uid: true })).toBe(true);
    const res = await env.client.move({ refs: [gone, keep], folder: "Archive" });
    expect(res).toMatchObject({ succeeded: 1, failed: 1 });
    expect(res.outcomes[0]!.error!.reason).toBe("NOT_FOUND");
    expect(typeof res.outcomes[1]!.new_ref).toBe("string");
  });
});
