/** What counts as a widening of the policy, and the diffs the audit log records. */
import fc from "fast-check";
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
      own_addresses: [],
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

  it("never lets the meet approve in the client unless both policies do, whatever else they say (property)", () => {
    const policy = fc.record({
      allow_expunge: fc.boolean(),
      allow_delete_folder: fc.boolean(),
      allowed_recipients: fc.option(fc.subarray(["a@x.com", "@x.com", "b@y.com", "@y.com"]), {
        nil: undefined,
      }),
      max_recipients: fc.option(fc.nat(50), { nil: undefined }),
      max_attachment_bytes: fc.option(fc.nat(1000), { nil: undefined }),
      hold_approval: fc.constantFrom("owner" as const, "client" as const, undefined),
    });
    fc.assert(
      fc.property(policy, policy, (a, b) => {
        const m = meet(gatesOf(a), gatesOf(b));
        const both = a.hold_approval === "client" && b.hold_approval === "client";
        expect(m.hold_approval).toBe(both ? "client" : "owner");
        // The meet is never wider than either side, so a file's "client" waits for a confirmed one.
        expect(widens(gatesOf(a), m)).toBe(false);
        expect(widens(gatesOf(b), m)).toBe(false);
        expect(widens(gatesOf(a), gatesOf({ ...a, hold_approval: "client" }))).toBe(
          a.hold_approval !== "client",
        );
      }),
    );
  });
});
