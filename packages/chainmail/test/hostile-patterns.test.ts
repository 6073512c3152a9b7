/**
 * Text a stranger controls, read in time in proportion to it: a query term (the agent's, up to 2,000
 * characters), a header's Message-IDs (a sender's, of any length), an IMAP server's refusal text.
 * Each reader gives what the regular expression it replaced gave (that expression is the model in a
 * property), without its backtracking, which was cubic or quadratic on the crafted inputs below.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { messageFields } from "../src/imap/parser-bounds.js";
import { responseCode } from "../src/imap/raw-fetch.js";
import { isWholeAddress } from "../src/query/sql.js";
import { firstMessageId, messageIds } from "../src/thread-key.js";

const within = (ms: number, run: () => void) => {
  const started = Date.now();
  run();
  expect(Date.now() - started).toBeLessThan(ms);
};

it("a whole address is what /^[!#-~]+@[!#-~]+\\.[!#-~]+$/ says it is", () => {
  const model = (v: string) => /^[!#-~]+@[!#-~]+\.[!#-~]+$/.test(v);
  const piece = fc.constantFrom("a", "@", ".", "b", " ", '"', "é", "-");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
      const v = parts.join("");
      expect(isWholeAddress(v)).toBe(model(v));
    }),
    { numRuns: 5_000 },
  );
  for (const v of ["ann@example.com", "a@b.c", "@b.c", "a@.c", "a@b.", "a@b", "a b@c.d", "a@b@c.d"])
    expect(isWholeAddress(v), v).toBe(model(v));
  // The model takes some 5 s on this 4,000-character term (0.6 s at the query's bound of 2,000);
  // one pass takes microseconds.
  within(1_000, () => expect(isWholeAddress(`@${"@.".repeat(1_000)}${"..".repeat(999)}\u0000`)).toBe(false));
});

it("a refusal's [CODE] and text are what the earlier expression read", () => {
  const model = (text: string) => {
    const m = /^\[([^\]\s]+)[^\]]*\]\s*(.*)$/s.exec(text);
    return m ? { code: m[1], rest: m[2] } : undefined;
  };
  const piece = fc.constantFrom("[", "]", " ", "\n", "ALERT", "x", "\t");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 10 }), (parts) => {
      const text = parts.join("");
      expect(responseCode(text)).toEqual(model(text));
    }),
    { numRuns: 5_000 },
  );
  expect(responseCode("[SERVERBUG] Internal error")).toEqual({ code: "SERVERBUG", rest: "Internal error" });
  within(1_000, () => expect(responseCode(`[[${"[".repeat(1_000_000)}`)).toBeUndefined());
});

it("Message-IDs in a header are read in one pass, whatever the header holds", () => {
  expect(messageIds("<a@b> <c@d>\r\n <e@f>")).toEqual(["<a@b>", "<c@d>", "<e@f>"]);
  expect(firstMessageId("Re: <x@y> (<z@w>)")).toBe("<x@y>");
  expect(firstMessageId("no id")).toBeNull();
  // Quadratic before: `<` after `<` with no `>` anywhere, a megabyte of it
  within(1_000, () => {
    expect(messageIds("<".repeat(1_000_000))).toEqual([]);
    expect(firstMessageId(`${"<a ".repeat(300_000)}<ok@id>`)).toBe("<ok@id>");
  });
});

it("keeps of a header only the fields a Message is made of, with their folded lines", () => {
  const header = Buffer.from(
    "Received: from a\r\n by b\r\nTo: ann@example.com,\r\n bob@example.com\r\nX-Trace: 1\r\n\t2\r\nSubject: Hi\r\nFROM : Eve <eve@example.com>\r\n\r\n",
  );
  expect(messageFields(header).toString()).toBe(
    "To: ann@example.com,\r\n bob@example.com\r\nSubject: Hi\r\nFROM : Eve <eve@example.com>\r\n\r\n",
  );
  within(1_000, () => expect(messageFields(Buffer.from("X-A: b\r\n".repeat(500_000))).length).toBe(4));
});
