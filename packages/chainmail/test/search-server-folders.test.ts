/**
 * The server path's folder list between searches (service/search/folder-lists.ts, withFolderList):
 * a search that names its folders reuses the folder list an earlier search took instead of asking
 * LIST again, and still answers exactly what a fresh daemon would when another client created,
 * renamed, deleted or filled folders in between. Also the ESORT answer reader (`RETURN (ALL)` in
 * sort order).
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { esortAll } from "../src/query/imap-run.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

let env: MailEnv;
let other: ImapFlow;

const msg = (subject: string, date = "2026-03-01T10:00:00Z") =>
  buildMessage({
    from: "Eve <eve@example.com>",
    to: ["alice@example.com"],
    subject,
    date: new Date(date),
    messageId: `<${subject.replace(/\W/g, "")}@example.com>`,
    text: "hello\n",
  });

beforeAll(async () => {
  env = await startMailEnv();
  other = await env.dv.connect("alice");
  for (const f of ["Projects", "Old"]) await other.mailboxCreate(f);
  await env.dv.appendMessage("alice", "Projects", msg("Project one"));
  await env.dv.appendMessage("alice", "Old", msg("Old one"));
}, 60_000);
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await env?.stop();
});

const search = (query: string) =>
  env.client.search({ query, accounts: ["work"], source: "server", limit: 25 });
const subjects = async (query: string) => (await search(query)).rows.map((r) => r.subject).sort();
const failure = (query: string) =>
  search(query).then(
    () => null,
    (e: unknown) => e as { reason?: string; message?: string; detail?: string },
  );

describe("a search that names its folders, after another client's change", () => {
  it("finds a folder another client created just before the search", async () => {
    // The daemon has taken its folder list: Fresh is not in it.
    expect(await subjects("in:Projects")).toEqual(["Project one"]);
    await other.mailboxCreate("Fresh");
    await other.append("Fresh", msg("Fresh one"));
    expect(await subjects("in:Fresh")).toEqual(["Fresh one"]);
    // Both named: one folder known before, one created since.
    await other.mailboxCreate("Fresher");
    await other.append("Fresher", msg("Fresher one"));
    expect(await subjects("in:Projects OR in:Fresher")).toEqual(["Fresher one", "Project one"]);
  });

  it("gives the new count of a folder another client changed between two searches", async () => {
    expect((await search("in:Projects")).count).toBe(1);
    await other.append("Projects", msg("Project two", "2026-03-02T10:00:00Z"));
    const after = await search("in:Projects");
    expect(after.count).toBe(2);
    expect(after.rows.map((r) => r.subject)).toEqual(["Project two", "Project one"]);
    await other.mailboxOpen("Projects");
    await other.messageDelete({ subject: "Project two" });
    await other.mailboxClose();
    expect((await search("in:Projects")).count).toBe(1);
  });

  it("follows a folder another client renamed: the old name is refused, the new one answers", async () => {
    expect(await subjects("in:Old")).toEqual(["Old one"]);
    await other.mailboxRename("Old", "Renamed");
    const err = await failure("in:Old");
    expect(err).toMatchObject({ reason: "NOT_FOUND" });
    expect(err!.detail).toContain("folder: Old");
    expect(await subjects("in:Renamed")).toEqual(["Old one"]);
  });

  it("answers from a folder another client deleted and created again under the same name", async () => {
    await other.mailboxCreate("Again");
    await other.append("Again", msg("Again first"));
    const first = await search("in:Again");
    expect(first.rows.map((r) => r.subject)).toEqual(["Again first"]);
    await other.mailboxDelete("Again");
    expect(await failure("in:Again")).toMatchObject({ reason: "NOT_FOUND" });
    await other.mailboxCreate("Again");
    await other.append("Again", msg("Again second"));
    const second = await search("in:Again");
    expect(second.rows.map((r) => r.subject)).toEqual(["Again second"]);
    // A new folder of that name is a new mailbox: its refs are not the old folder's.
    expect(second.rows[0]!.ref).not.toBe(first.rows[0]!.ref);
    const got = await env.client.getMessages({ refs: [second.rows[0]!.ref] });
    expect(got.messages.map((m) => m.subject)).toEqual(["Again second"]);
  });

  it("still searches every folder, a new one included, when the query names none", async () => {
    expect(await subjects("hello")).toContain("Project one");
    await other.mailboxCreate("Unnamed");
    await other.append("Unnamed", msg("Unnamed one"));
    expect(await subjects("hello")).toContain("Unnamed one");
    // Named beside a term that can match anywhere: every folder, the new one included.
    await other.mailboxCreate("Elsewhere");
    await other.append("Elsewhere", msg("Elsewhere one"));
    expect(await subjects("in:Projects OR subject:Elsewhere")).toEqual(["Elsewhere one", "Project one"]);
  });
});

describe("the same search again, in a folder that may have changed", () => {
  it("answers each change between two identical searches: another client's flags, appends and expunges, the daemon's own flags", async () => {
    await other.mailboxCreate("Same");
    for (let i = 0; i < 5; i++) await other.append("Same", msg(`Same ${i}`, `2026-03-0${i + 1}T10:00:00Z`));
    const unread = async () => {
      const res = await search("in:Same is:unread");
      return { count: res.count, subjects: res.rows.map((r) => r.subject) };
    };
    const all = ["Same 4", "Same 3", "Same 2", "Same 1", "Same 0"];
    expect(await unread()).toEqual({ count: 5, subjects: all });
    expect(await unread()).toEqual({ count: 5, subjects: all });
    // Another client reads one (a flag change: no message added or removed).
    await other.mailboxOpen("Same");
    await other.messageFlagsAdd({ subject: "Same 3" }, ["\\Seen"]);
    expect(await unread()).toEqual({ count: 4, subjects: ["Same 4", "Same 2", "Same 1", "Same 0"] });
    // A keyword the query does not read, then the same message unread again (it matches anew).
    await other.messageFlagsAdd({ subject: "Same 2" }, ["$Later"]);
    expect(await unread()).toEqual({ count: 4, subjects: ["Same 4", "Same 2", "Same 1", "Same 0"] });
    await other.messageFlagsRemove({ subject: "Same 3" }, ["\\Seen"]);
    expect(await unread()).toEqual({ count: 5, subjects: all });
    // Two read at once, one of them the newest.
    await other.messageFlagsAdd({ subject: "Same 4" }, ["\\Seen"]);
    await other.messageFlagsAdd({ subject: "Same 1" }, ["\\Seen"]);
    expect(await unread()).toEqual({ count: 3, subjects: ["Same 3", "Same 2", "Same 0"] });
    await other.messageFlagsRemove({ subject: "Same 4" }, ["\\Seen"]);
    await other.messageFlagsRemove({ subject: "Same 1" }, ["\\Seen"]);
    await other.messageFlagsAdd({ subject: "Same 3" }, ["\\Seen"]);
    expect(await unread()).toEqual({ count: 4, subjects: ["Same 4", "Same 2", "Same 1", "Same 0"] });
    // One arrives and another goes in the same interval: the number of messages stays the same.
    await other.append("Same", msg("Same 5", "2026-03-09T10:00:00Z"));
    await other.messageDelete({ subject: "Same 0" });
    expect(await unread()).toEqual({ count: 4, subjects: ["Same 5", "Same 4", "Same 2", "Same 1"] });
    // The daemon's own change, made through its own connection.
    const ref = (await search('in:Same subject:"Same 4"')).rows[0]!.ref;
    await env.client.setFlags({ refs: [ref], add: ["seen"] });
    expect(await unread()).toEqual({ count: 3, subjects: ["Same 5", "Same 2", "Same 1"] });
    await env.client.setFlags({ refs: [ref], remove: ["seen"] });
    expect(await unread()).toEqual({ count: 4, subjects: ["Same 5", "Same 4", "Same 2", "Same 1"] });
    // Arrivals alone: new mail, a read one (no match), and one imported with an old date (placed
    // by its arrival, not first).
    await other.append("Same", msg("Same 6"));
    expect(await unread()).toEqual({
      count: 5,
      subjects: ["Same 6", "Same 5", "Same 4", "Same 2", "Same 1"],
    });
    await other.append("Same", msg("Same read"), ["\\Seen"]);
    expect((await unread()).count).toBe(5);
    await other.append("Same", msg("Same imported"), [], new Date("2020-01-01T00:00:00Z"));
    expect(await unread()).toEqual({
      count: 6,
      subjects: ["Same 6", "Same 5", "Same 4", "Same 2", "Same 1", "Same imported"],
    });
    // New mail and a flag change together.
    await other.append("Same", msg("Same 7"));
    await other.messageFlagsAdd({ subject: "Same 5" }, ["\\Seen"]);
    expect(await unread()).toEqual({
      count: 6,
      subjects: ["Same 7", "Same 6", "Same 4", "Same 2", "Same 1", "Same imported"],
    });
    await other.mailboxClose();
  });
});

describe("esortAll", () => {
  const answer = (set: string | null, more: Array<{ type: string; value: string }> = []) => [
    [
      { type: "ATOM", value: "TAG" },
      { type: "STRING", value: "A1" },
    ],
    { type: "ATOM", value: "UID" },
    ...(set === null
      ? []
      : [
          { type: "ATOM", value: "ALL" },
          { type: "SEQUENCE", value: set },
        ]),
    ...more,
  ];

  it("reads the set in the order given, a range downwards when it runs downwards", () => {
    expect(esortAll(answer("1:3"))).toEqual([1, 2, 3]);
    expect(esortAll(answer("7,2:4,9:8,5"))).toEqual([7, 2, 3, 4, 9, 8, 5]);
    expect(
      esortAll(
        answer("12000", [
          { type: "ATOM", value: "COUNT" },
          { type: "ATOM", value: "1" },
        ]),
      ),
    ).toEqual([12000]);
  });

  it("answers no UIDs when nothing matched (no ALL)", () => {
    expect(
      esortAll(
        answer(null, [
          { type: "ATOM", value: "COUNT" },
          { type: "ATOM", value: "0" },
        ]),
      ),
    ).toEqual([]);
  });

  it("refuses a set it cannot read rather than guessing", () => {
    expect(() => esortAll(answer("1:*"))).toThrow(/unreadable set/);
    expect(() => esortAll(answer("a,b"))).toThrow(/unreadable set/);
  });
});
