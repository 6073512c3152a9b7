/** What counts as a widening of the policy, and the diffs the audit log records. */
import { describe, expect, it } from "vitest";
import type { Policy } from "../src/config.js";
import { CLOSED, diffGates, gatesFrom, gatesOf, meet, widens } from "../src/policy/gates.js";

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
      hold_approval: "owner",
    });
    expect(diffGates(confirmed, file)).toEqual([
      "allow_expunge true → false",
      "allowed_recipients +b@y.com +c@z.com -@y.com -a@x.com",
      "max_recipients 5 → 9",
    ]);
  });

  it("calls hold_approval client a widening, owner a narrowing, and reads a row from before it as owner", () => {
    const owner = g({ max_recipients: 5 });
    const client = g({ max_recipients: 5, hold_approval: "client" });
    expect(owner.hold_approval).toBe("owner");
    expect(widens(owner, client)).toBe(true);
    expect(widens(client, owner)).toBe(false);
    expect(meet(owner, client).hold_approval).toBe("owner");
    expect(meet(client, client).hold_approval).toBe("client");
    expect(CLOSED.hold_approval).toBe("owner");
    expect(diffGates(owner, client)).toEqual(["hold_approval owner → client"]);
    // A confirmed row stored before the gate existed: the gate reads closed, the rest as stored.
    const { hold_approval: _gone, ...old } = client;
    expect(gatesFrom(JSON.parse(JSON.stringify(old)))).toEqual(owner);
    expect(gatesFrom(JSON.parse(JSON.stringify(client)))).toEqual(client);
  });
});
