/**
 * What `send-raw` makes of a prepared file before SMTP (src/compose/raw.ts with `asPrepared`): for any
 * spelling of the Bcc and Resent-Bcc headers a reader would honour (any case, blanks before the colon,
 * folded values), the sent bytes carry neither the header nor its addresses, the envelope carries the
 * Bcc addresses, and everything else is the file's own bytes (its Date and Message-ID kept).
 */
import fc from "fast-check";
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { draftForSending } from "../src/compose/raw.js";

const account = { address: "alice@example.com", aliases: [] as string[] };

const casing = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((ups) => [...name].map((c, i) => (ups[i] ? c.toUpperCase() : c.toLowerCase())).join(""));
const local = fc.stringMatching(/^[a-z][a-z0-9]{2,8}$/);

describe("a prepared message for send-raw", () => {
  it("loses every Bcc and Resent-Bcc header and keeps the rest byte for byte", async () => {
    await fc.assert(
      fc.asyncProperty(
        casing("bcc"),
        casing("resent-bcc"),
        fc.constantFrom("", " ", "\t"),
        fc.uniqueArray(local, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        async (bccName, resentName, blank, secrets, fold) => {
          const hidden = secrets.map((s) => `${s}@hidden.test`);
          const value = fold ? hidden.join(",\r\n ") : hidden.join(", ");
          const head = [
            "From: Alice <alice@example.com>",
            "To: bob@example.com",
            `${bccName}${blank}: ${value}`,
            "Subject: figures",
            `${resentName}${blank}: resent-${secrets[0]}@hidden.test`,
            "Date: Tue, 01 Dec 2026 10:00:00 +0000",
            "Message-ID: <fixed-1@example.com>",
          ];
          const body = "Body line one.\r\nBody line two.\r\n";
          const raw = Buffer.from(`${head.join("\r\n")}\r\n\r\n${body}`);
          const out = await draftForSending(raw, account, { asPrepared: true });
          const text = out.raw.toString("utf8");
          expect(text).not.toContain("hidden.test");
          const parsed = await simpleParser(out.raw);
          expect(parsed.headers.has("bcc")).toBe(false);
          expect(parsed.headers.has("resent-bcc")).toBe(false);
          expect(out.envelope.sort()).toEqual(["bob@example.com", ...hidden].sort());
          expect(out.foreignFrom).toBeUndefined();
          expect(out.messageId).toBe("<fixed-1@example.com>");
          for (const line of head.filter((l) => !/^(resent-)?bcc/i.test(l)))
            expect(text).toContain(`${line}\r\n`);
          expect(text.endsWith(`\r\n\r\n${body}`)).toBe(true);
          // What a hold saves keeps the Bcc, for the owner to send later.
          expect(out.held.equals(raw)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("adds a Message-ID and a Date only when the file has none, and the held copy gets the same Message-ID", async () => {
    const raw = Buffer.from("From: alice@example.com\r\nTo: bob@example.com\r\nSubject: bare\r\n\r\nhi\r\n");
    const out = await draftForSending(raw, account, { asPrepared: true });
    const sent = await simpleParser(out.raw);
    const held = await simpleParser(out.held);
    expect(sent.messageId).toBe(out.messageId);
    expect(held.messageId).toBe(out.messageId);
    expect(sent.date).toBeInstanceOf(Date);
  });
});
