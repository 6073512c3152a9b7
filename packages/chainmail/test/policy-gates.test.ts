/** What counts as a widening of the policy, and the diffs the audit log records. */
import { describe, expect, it } from "vitest";
import type { Policy } from "../src/config.js";
import { CLOSED, diffGates, gatesOf, meet, widens } from "../src/policy/gates.js";

const p = (x: Partial<Policy>): Policy => ({ allow_expunge: false, allow_delete_folder: false, ...x });
const g = (x: Partial<Policy>) => gatesOf(p(x));

describe("policy gates", () => {
  it("calls a new address, a new domain, a removed list and a higher limit widenings", () => {
    const base = g({ allowed_recipients: ["a@x.com"], max_recipients: 5, max_attachment_bytes: 100 });
    expect(
      widens(
        base,
        g({ allowed_recipients: ["a@x.com", "b@x.com"], max_recipients: 5, max_attachment_bytes: 100 }),
      ),
    ).toBe(true);
    expect(
      widens(base, g({ allowed_recipients: ["@x.com"], max_recipients: 5, max_attachment_bytes: 100 })),
    ).toBe(true);
    expect(widens(base, g({ max_recipients: 5, max_attachment_bytes: 100 }))).toBe(true);
    expect(
      widens(base, g({ allowed_recipients: ["a@x.com"], max_recipients: 6, max_attachment_bytes: 100 })),
    ).toBe(true);
    expect(widens(base, g({ allowed_recipients: ["a@x.com"], max_recipients: 5 }))).toBe(true);
    expect(widens(base, { ...base, allow_expunge: true })).toBe(true);
    expect(widens(base, { ...base, allow_delete_folder: true })).toBe(true);
  });

  it("calls an address under an allowed domain, a lower limit and a case change no widening", () => {
    const base = g({ allowed_recipients: ["@X.com"], max_recipients: 5 });
    expect(widens(base, g({ allowed_recipients: ["a@x.com"], max_recipients: 5 }))).toBe(false);
    expect(widens(base, g({ allowed_recipients: ["@x.COM"], max_recipients: 2 }))).toBe(false);
    expect(widens(CLOSED, CLOSED)).toBe(false);
  });

  it("meets a mixed change field by field", () => {
    const confirmed = g({
      allowed_recipients: ["a@x.com", "@y.com"],
      max_recipients: 5,
      allow_expunge: true,
    });
    const file = g({ allowed_recipients: ["b@y.com", "c@z.com"], max_recipients: 9 });
    expect(meet(file, confirmed)).toEqual({
      allow_expunge: false,
      allow_delete_folder: false,
      allowed_recipients: ["b@y.com"],
      max_recipients: 5,
      max_attachment_bytes: null,
    });
    expect(diffGates(confirmed, file)).toEqual([
      "allow_expunge true → false",
      "allowed_recipients +b@y.com +c@z.com -@y.com -a@x.com",
      "max_recipients 5 → 9",
    ]);
  });
});
