/**
 * The quote of a reply or forward is a function of the original alone. A held send approved in the
 * client is built twice (for the question, and again when the answer comes back), and the question
 * is asked again when its text differs: a quote that named the time of building for an original
 * without a Date made every person slower than the turn of a second be asked again, round after round.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { forwardQuote, parseOriginal, replyQuote } from "../src/compose/original.js";

const raw = (date?: string) =>
  Buffer.from(
    [
      "From: Mallory <mallory@evil.test>",
      "To: alice@example.com",
      "Subject: invoice",
      "Message-ID: <inv@evil.test>",
      ...(date === undefined ? [] : [`Date: ${date}`]),
      "",
      "please pay",
      "",
    ].join("\r\n"),
  );

afterEach(() => {
  vi.useRealTimers();
});

describe("the quote of a reply or forward", () => {
  it("is the same at any two moments, with or without a Date in the original", async () => {
    const originals = await Promise.all([
      parseOriginal(raw()),
      parseOriginal(raw("Mon, 30 Nov 2026 10:00:00 +0000")),
      parseOriginal(raw("not a date")),
    ]);
    const moment = fc.date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true });
    fc.assert(
      fc.property(fc.constantFrom(...originals), moment, moment, (o, a, b) => {
        vi.useFakeTimers({ now: a });
        const first = [replyQuote(o), forwardQuote(o)];
        vi.setSystemTime(b);
        expect([replyQuote(o), forwardQuote(o)]).toEqual(first);
      }),
    );
  });

  it("names the original's Date, and no date when it has none", async () => {
    const dated = await parseOriginal(raw("Mon, 30 Nov 2026 10:00:00 +0000"));
    expect(replyQuote(dated).intro).toBe(
      "On Mon, 30 Nov 2026 10:00:00 GMT, Mallory <mallory@evil.test> wrote:",
    );
    expect(forwardQuote(dated).intro).toContain("\nDate: Mon, 30 Nov 2026 10:00:00 GMT\n");

    const undated = await parseOriginal(raw());
    expect(replyQuote(undated).intro).toBe("Mallory <mallory@evil.test> wrote:");
    expect(forwardQuote(undated).intro).toBe(
      [
        "---------- Forwarded message ---------",
        "From: Mallory <mallory@evil.test>",
        "Subject: invoice",
        "To: alice@example.com",
      ].join("\n"),
    );
  });
});
