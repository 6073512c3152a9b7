/** The send path's one address model (src/compose/addresses.ts), case by case. */
import { describe, expect, it } from "vitest";
import { parseHeaderAddresses, parseMailbox } from "../src/compose/addresses.js";

describe("parseMailbox: exactly one mailbox in the envelope's spelling", () => {
  it("reads names, comments, IDN and quoted local parts", () => {
    expect(parseMailbox("Ann <ann@bücher.example>")).toEqual({
      name: "Ann",
      address: "ann@xn--bcher-kva.example",
    });
    expect(parseMailbox("ann@EXAMPLE.com (work)")).toEqual({ name: "", address: "ann@example.com" });
    expect(parseMailbox("ＡＮＮ@ｅｘａｍｐｌｅ.com")?.address).toBe("ＡＮＮ@example.com");
    expect(parseMailbox('"a,b"@example.com')?.address).toBe('"a,b"@example.com');
    expect(parseMailbox('"evil@y.com,x"@example.com')?.address).toBe('"evil@y.com,x"@example.com');
    expect(parseMailbox("=?utf-8?q?J=C3=B6rg?= <j@example.com>")?.name).toBe("Jörg");
  });

  it("refuses what is not one mailbox with a hostname domain", () => {
    for (const bad of [
      "evil@example.com/ü",
      "evil@example.com?",
      "evil@example.com#",
      "evil@example.com\\",
      "evil@exa_mple.com",
      "evil@[127.0.0.1]",
      "<evil@y.com,x@example.com>",
      "a@example.com, b@example.com",
      "team: a@example.com;",
      '"a\\"b"@example.com',
      "a\r\nBcc: x@y.com",
      "",
      "@example.com",
    ])
      expect(parseMailbox(bad), bad).toBeUndefined();
  });
});

describe("parseHeaderAddresses: a header's list, groups flattened, the unreadable kept as text", () => {
  it("flattens groups, refuses the whole value when the grammar does not accept it, and each bad mailbox", () => {
    expect(
      parseHeaderAddresses("team: a@example.com, B <b@example.com>;, c@example.com").addresses.map(
        (a) => a.address,
      ),
    ).toEqual(["a@example.com", "b@example.com", "c@example.com"]);
    expect(parseHeaderAddresses("<evil@y.com,x@example.com>")).toEqual({
      addresses: [],
      bad: ["<evil@y.com,x@example.com>"],
    });
    // Grammar-valid, but one domain is not a hostname: that mailbox is unreadable, the other kept.
    expect(parseHeaderAddresses("ok@example.com, evil@example.com/x")).toEqual({
      addresses: [{ name: "", address: "ok@example.com" }],
      bad: ["evil@example.com/x"],
    });
  });

  it("decodes an encoded word in a name only after the list is read, so it adds no address", () => {
    const r = parseHeaderAddresses("=?utf-8?q?evil=40y.com=2C?= <x@example.com>");
    expect(r.addresses).toEqual([{ name: "evil@y.com,", address: "x@example.com" }]);
    expect(r.bad).toEqual([]);
  });
});
