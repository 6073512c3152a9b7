/**
 * Body shaping without `full`: quoted lines and the "… wrote:" line before them go, so does
 * everything after a "-- " line. The same as it was on every input (a property against the earlier
 * code as the model), and in time in proportion to a hostile body's lines, not their square.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyParts } from "../src/compose/body.js";
import { cutQuotesAndSignature } from "../src/imap/body.js";

/** The earlier code, kept as the model: a copy of the rest of the lines for every line. */
function model(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const sig = lines.findIndex((l) => l === "-- " || l === "--");
  const kept = sig >= 0 ? lines.slice(0, sig) : lines;
  const out: string[] = [];
  for (let i = 0; i < kept.length; i++) {
    const line = kept[i] as string;
    if (line.startsWith(">")) continue;
    const next = kept.slice(i + 1).find((l) => l.trim() !== "");
    if (/wrote:\s*$/i.test(line) && next?.startsWith(">")) continue;
    out.push(line);
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd();
}

describe("cutQuotesAndSignature", () => {
  it("drops the quote, its 'wrote:' line and the signature, and keeps a 'wrote:' line no quote follows", () => {
    const text = [
      "Sounds good.",
      "",
      "On Mon, Ann wrote:",
      "",
      "> the plan",
      "> more",
      "She wrote:",
      "no quote here",
      "-- ",
      "Bob",
    ].join("\r\n");
    expect(cutQuotesAndSignature(text)).toBe("Sounds good.\n\nShe wrote:\nno quote here");
  });

  it("gives what the earlier code gave, on any text of mail's lines (fast-check)", () => {
    const line = fc.constantFrom(
      "",
      " ",
      "> q",
      ">",
      "On Mon, Ann wrote:",
      "wrote:  ",
      "-- ",
      "--",
      "text",
      "\t",
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.boolean(), (lines, crlf) => {
        const text = lines.join(crlf ? "\r\n" : "\n");
        expect(cutQuotesAndSignature(text)).toBe(model(text));
      }),
      { numRuns: 500 },
    );
  });

  it("reads a hostile body of a million lines in time in proportion to them", () => {
    // (the earlier code took 3 s at 40,000 empty lines and grew with their square: the test's own
    // deadline is the guard, not a measurement)
    expect(cutQuotesAndSignature("\n".repeat(1_000_000))).toBe("");
    expect(cutQuotesAndSignature(`${"a wrote:\n\n".repeat(200_000)}> q`)).toBe(
      `${"a wrote:\n\n".repeat(199_999)}`.trimEnd(),
    );
  }, 10_000);
});

it("a reply's body with long runs of white space gets its signature and quote in time in proportion to it", () => {
  // (a body may carry a hostile message's text; /\s+$/ took time growing with the square of a run
  // not at the end: the test's deadline is the guard)
  const spaces = " ".repeat(500_000);
  const out = bodyParts({
    body: `a${spaces}b \n\t`,
    format: "text",
    signature: "Ann",
    quote: { intro: "On Monday, Bob wrote:", text: "the plan", style: "quote" },
  });
  expect(out.text).toBe(`a${spaces}b\n\nAnn\n\nOn Monday, Bob wrote:\n> the plan\n`);
}, 10_000);
