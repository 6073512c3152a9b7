/**
 * A property of the send path, judged at the SMTP server: whatever address text a stranger or an
 * agent writes (lists, groups, comments, quoted local parts, encoded words, IDN, obsolete routes,
 * stray `,;<>"\`), every RCPT TO the server is asked for is inside the allow-list and no transaction
 * names more than max_recipients. Generated for send_email (tool input), reply with all (the
 * original's headers APPENDed to Dovecot) and send_draft (a draft's headers APPENDed to Drafts).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../../src/client/index.js";
import { encodeRef } from "../../src/refs.js";
import { type SendEnv, smtpMailboxDomain, startSendEnv } from "../../src/testing/index.js";

const ALLOW = ["@example.com", "boss@partner.org"];
const MAX = 3;
const RUNS = 20;

let env: SendEnv;
let agent: DaemonClient;

beforeAll(async () => {
  env = await startSendEnv({
    work: { sendPolicy: `allowed_recipients = ${JSON.stringify(ALLOW)}\nmax_recipients = ${MAX}\n` },
  });
  agent = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
}, 60_000);

afterAll(async () => {
  agent?.close();
  await env?.stop();
});

const local = fc.constantFrom(
  "bob",
  "a.b",
  "x+tag",
  '"a,b"',
  '"evil@y.com,x"',
  '"a\\"b"',
  '"a b"',
  "jörg",
  "évil",
  "a..b",
  ".a",
  "a\\b",
  "",
);
const domain = fc.constantFrom(
  "example.com",
  "EXAMPLE.com",
  "example.com.",
  "sub.example.com",
  "partner.org",
  "y.com",
  "evil.test",
  "bücher.example",
  "xn--bcher-kva.example",
  "example.com/ü",
  "example.com?",
  "example.com#x",
  "example.com\\",
  "exa_mple.com",
  "[127.0.0.1]",
  "example .com",
  "example.com (evil.test)",
  "ｅｘａｍｐｌｅ.com",
);
const name = fc.constantFrom(
  "",
  "Ann",
  '"Ann, Boss"',
  '"x@example.com"',
  "=?utf-8?q?evil=40y.com=2C?=",
  "=?utf-8?b?QW5u?=",
  "Ann (comment)",
  "x@example.com",
  '"a\\"b"',
);
const mailbox = fc
  .tuple(name, local, domain, fc.boolean())
  .map(([n, l, d, angle]) => (angle || n ? `${n} <${l}@${d}>` : `${l}@${d}`));
const route = fc.tuple(domain, local, domain).map(([r, l, d]) => `<@${r}:${l}@${d}>`);
const stray = fc.constantFrom(",", ";", "<", ">", '"', "\\", ":", "@", " ", "(", ")");
const group = fc
  .tuple(fc.constantFrom("team", '"a:b"', "x@y.com"), fc.array(mailbox, { maxLength: 3 }))
  .map(([g, ms]) => `${g}: ${ms.join(", ")};`);
const piece = fc.oneof(mailbox, mailbox, route, group, stray);
/** A few pieces joined with separators, at times glued together. */
const hostile = fc
  .tuple(fc.array(piece, { minLength: 1, maxLength: 4 }), fc.constantFrom(", ", ",", " ", "", ";"))
  .map(([ps, sep]) => ps.join(sep));
/** Plain addresses too, so that some sends are allowed and the server is asked at all. */
const plain = fc
  .tuple(
    fc.constantFrom("", "Bob ", '"B, ob" '),
    fc.constantFrom("bob", "alice", "x.y"),
    fc.constantFrom("example.com", "EXAMPLE.COM", "partner.org"),
  )
  .map(([n, l, d]) => (n ? `${n}<${l}@${d}>` : `${l}@${d}`));
const addressText = fc.oneof({ arbitrary: plain, weight: 2 }, { arbitrary: hostile, weight: 3 });

let sentAny = 0;
let runId = 0;

function judgeSink(): void {
  for (const t of env.relay.transactions()) {
    expect(t.rcpts.length, JSON.stringify(t)).toBeLessThanOrEqual(MAX);
    for (const r of t.rcpts) {
      // One RFC 5321 mailbox by the sink's own grammar, its domain or whole address allowed.
      const d = smtpMailboxDomain(r);
      expect(d, r).toBeDefined();
      expect(
        ALLOW.some((rule) => (rule.startsWith("@") ? `@${d}` === rule : r.toLowerCase() === rule)),
        r,
      ).toBe(true);
    }
  }
}

async function attempt(run: () => Promise<{ status: string }>): Promise<void> {
  try {
    const res = await run();
    if (res.status === "sent") sentAny++;
  } catch (err) {
    // A refusal is fine; only what reached SMTP is judged. An unexpected failure is not.
    expect(["INVALID_ARGUMENT", "CONFLICT"]).toContain((err as { reason?: string }).reason);
  }
  judgeSink();
}

async function append(folder: string, headers: string[]): Promise<string> {
  const id = ++runId;
  const raw = [...headers, `Subject: prop ${id}`, `Message-ID: <prop-${id}@y.test>`, "", `body ${id}`, ""];
  const r = await env.dv.appendMessage("alice", folder, raw.join("\r\n"));
  return encodeRef({ account: "work", folder, uidValidity: r.uidValidity, uid: r.uid });
}

/** A header line for a generated value (no line breaks can be generated, so it stays one header). */
const line = (name: string, value: string) => `${name}: ${value}`;

describe("every RCPT TO is inside the allow-list and within max_recipients", () => {
  it("send_email with hostile to/cc/bcc", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(addressText, { minLength: 1, maxLength: 3 }),
        fc.array(addressText, { maxLength: 2 }),
        fc.array(addressText, { maxLength: 2 }),
        async (to, cc, bcc) => {
          const id = ++runId;
          await attempt(() =>
            agent.call("send", { account: "work", to, cc, bcc, subject: `p${id}`, body: "x" }),
          );
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it("reply with all to an original with hostile From, Reply-To, To and Cc", async () => {
    await fc.assert(
      fc.asyncProperty(
        addressText,
        fc.option(addressText, { nil: undefined }),
        addressText,
        fc.option(addressText, { nil: undefined }),
        fc.boolean(),
        async (from, replyTo, to, cc, all) => {
          const ref = await append("INBOX", [
            line("From", from),
            ...(replyTo === undefined ? [] : [line("Reply-To", replyTo)]),
            line("To", to),
            ...(cc === undefined ? [] : [line("Cc", cc)]),
          ]);
          await attempt(() => agent.call("reply", { ref, all, body: "answer" }));
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it("send_draft of a draft with hostile To, Cc and Bcc (any spacing before the colon)", async () => {
    await fc.assert(
      fc.asyncProperty(
        addressText,
        fc.option(addressText, { nil: undefined }),
        fc.option(addressText, { nil: undefined }),
        fc.constantFrom("", " ", "\t"),
        async (to, cc, bcc, gap) => {
          const ref = await append("Drafts", [
            "From: alice@example.com",
            `To${gap}: ${to}`,
            ...(cc === undefined ? [] : [`Cc${gap}: ${cc}`]),
            ...(bcc === undefined ? [] : [`bcc${gap}: ${bcc}`]),
          ]);
          await attempt(() => agent.call("draft.send", { ref }));
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it("sent some of them (the property is not met by refusing everything)", () => {
    expect(sentAny).toBeGreaterThan(0);
  });
});
