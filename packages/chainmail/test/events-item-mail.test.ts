/**
 * item_mail against a real Dovecot: a reply another client delivers on a thread that the items
 * store (here a function of the test, injected into startDaemon as the lead wires the real one)
 * links to an item raises item_mail; `item` reads it, and the default kinds leave it out.
 */
import type { ImapFlow } from "imapflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { startDaemon } from "../src/daemon/server.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const base = { from: "Eve <eve@example.com>", to: ["alice@example.com"], text: "hello\n" };
let env: MailEnv;
let other: ImapFlow;
const linkedCalls: string[] = [];

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessage(
    "alice",
    "INBOX",
    buildMessage({
      ...base,
      subject: "Plan",
      date: new Date("2026-03-01T10:00:00Z"),
      messageId: "<Plan@example.com>",
    }),
  );
  env.client.close();
  await env.daemon.stop();
  env.daemon = await startDaemon({
    home: env.home,
    log: () => undefined,
    linkedItems: (account, key) => {
      linkedCalls.push(`${account} ${key}`);
      return account === "work" && key === "<plan@example.com>" ? ["it_1"] : [];
    },
    itemPath: (id) => (id === "it_1" ? ["it_1"] : null),
  });
  env.client = new DaemonClient({ socketPath: env.home.socketPath, client: "cli" });
  await env.client.cacheSync({ accounts: ["work"] });
  other = await env.dv.connect("alice");
});
afterAll(async () => {
  await other?.logout().catch(() => undefined);
  await env?.stop();
});

describe("item_mail", () => {
  it("comes from a new reply on a linked thread, and only there", async () => {
    const start = (await env.client.watchStatus()).last_id;
    await other.append(
      "INBOX",
      buildMessage({
        ...base,
        subject: "Re: Plan",
        date: new Date("2026-03-02T10:00:00Z"),
        messageId: "<reply@example.com>",
        inReplyTo: "<Plan@example.com>",
        references: ["<Plan@example.com>"],
      }),
    );
    await other.append(
      "INBOX",
      buildMessage({
        ...base,
        subject: "Unrelated",
        date: new Date("2026-03-02T11:00:00Z"),
        messageId: "<u@example.com>",
      }),
    );
    await env.client.cacheSync({ accounts: ["work"] });
    expect(linkedCalls).toContain("work <plan@example.com>");

    const plain = await env.client.readEvents({ cursor: start });
    expect(plain.events.map((e) => [e.kind, e.row?.subject])).toEqual([
      ["new", "Re: Plan"],
      ["new", "Unrelated"],
    ]);
    const byItem = await env.client.readEvents({ cursor: start, item: "it_1" });
    expect(byItem.events).toHaveLength(1);
    expect(byItem.events[0]).toMatchObject({
      kind: "item_mail",
      item_id: "it_1",
      thread_key: "<plan@example.com>",
      folder: "INBOX",
      row: { subject: "Re: Plan" },
    });
    const named = await env.client.readEvents({ cursor: start, kinds: ["item_mail"] });
    expect(named.events.map((e) => e.kind)).toEqual(["item_mail"]);
    // A second sync finds nothing new and records nothing again.
    await env.client.cacheSync({ accounts: ["work"] });
    expect(
      (await env.client.readEvents({ cursor: byItem.next_cursor, kinds: ["item_mail", "new"] })).events,
    ).toEqual([]);
  });
});
