import { describe, expect, it } from "vitest";
import { bindQuery, QueryParseError, type QueryNode, formatQuery, parseQuery } from "../src/query/index.js";

const fmt = (q: string) => formatQuery(parseQuery(q));
const err = (q: string): QueryParseError => {
  try {
    parseQuery(q);
  } catch (e) {
    if (e instanceof QueryParseError) return e;
    throw e;
  }
  throw new Error(`expected ${q} to fail`);
};

describe("parseQuery fields", () => {
  it("parses every field into its typed node", () => {
    const cases: Array<[string, QueryNode]> = [
      ["from:alice", { kind: "address", field: "from", value: "alice", phrase: false, pos: 1 }],
      ["to:bob@x.org", { kind: "address", field: "to", value: "bob@x.org", phrase: false, pos: 1 }],
      ["cc:team", { kind: "address", field: "cc", value: "team", phrase: false, pos: 1 }],
      ["bcc:boss", { kind: "address", field: "bcc", value: "boss", phrase: false, pos: 1 }],
      ['subject:"big news"', { kind: "subject", value: "big news", phrase: true, pos: 1 }],
      ["in:INBOX", { kind: "in", value: "INBOX", pos: 1 }],
      ["label:work", { kind: "label", value: "work", pos: 1 }],
      ["is:unread", { kind: "is", flag: "unread", pos: 1 }],
      ["is:read", { kind: "is", flag: "read", pos: 1 }],
      ["is:flagged", { kind: "is", flag: "flagged", pos: 1 }],
      ["is:starred", { kind: "is", flag: "flagged", pos: 1 }],
      ["is:answered", { kind: "is", flag: "answered", pos: 1 }],
      ["is:draft", { kind: "is", flag: "draft", pos: 1 }],
      ["has:attachment", { kind: "has_attachment", pos: 1 }],
      ["filename:pdf", { kind: "filename", value: "pdf", pos: 1 }],
      ["larger:10K", { kind: "size", op: "larger", bytes: 10240, pos: 1 }],
      ["smaller:2M", { kind: "size", op: "smaller", bytes: 2 * 1024 * 1024, pos: 1 }],
      ["larger:500", { kind: "size", op: "larger", bytes: 500, pos: 1 }],
      ["newer_than:7d", { kind: "age", op: "newer", amount: 7, unit: "d", pos: 1 }],
      ["older_than:3m", { kind: "age", op: "older", amount: 3, unit: "m", pos: 1 }],
      ["newer_than:1y", { kind: "age", op: "newer", amount: 1, unit: "y", pos: 1 }],
      ["after:2024/01/31", { kind: "date", op: "after", date: "2024-01-31", pos: 1 }],
      ["before:2024-2-3", { kind: "date", op: "before", date: "2024-02-03", pos: 1 }],
      ["account:work", { kind: "account", value: "work", pos: 1 }],
      ["hello", { kind: "text", value: "hello", phrase: false, pos: 1 }],
      ['"hello world"', { kind: "text", value: "hello world", phrase: true, pos: 1 }],
    ];
    for (const [q, node] of cases) expect(parseQuery(q), q).toEqual(node);
  });

  it("takes field names in any case, values as written", () => {
    expect(parseQuery("FROM:Alice")).toEqual({
      kind: "address",
      field: "from",
      value: "Alice",
      phrase: false,
      pos: 1,
    });
    expect(parseQuery("Is:STARRED")).toEqual({ kind: "is", flag: "flagged", pos: 1 });
    expect(parseQuery("HAS:Attachment")).toEqual({ kind: "has_attachment", pos: 1 });
  });

  it("treats the empty and blank query as match-all", () => {
    expect(parseQuery("")).toEqual({ kind: "all" });
    expect(parseQuery("   \t ")).toEqual({ kind: "all" });
  });

  it("keeps words with colons that are not field names, and unicode", () => {
    expect(parseQuery("10:30")).toEqual({ kind: "text", value: "10:30", phrase: false, pos: 1 });
    expect(parseQuery("Grüße")).toEqual({ kind: "text", value: "Grüße", phrase: false, pos: 1 });
    expect(parseQuery("e-mail")).toEqual({ kind: "text", value: "e-mail", phrase: false, pos: 1 });
  });
});

describe("parseQuery structure", () => {
  it("binds OR tighter than the implicit AND (as Gmail does)", () => {
    expect(fmt("a b OR c")).toBe("a (b OR c)");
    expect(fmt("a OR b c")).toBe("(a OR b) c");
    expect(fmt("a OR b OR c d")).toBe("(a OR b OR c) d");
  });

  it("accepts AND as an explicit no-op and lower-case or as a word", () => {
    expect(fmt("a AND b")).toBe("a b");
    expect(fmt("a or b")).toBe("a or b");
  });

  it("negates single terms, groups and fields; double negation cancels", () => {
    expect(fmt("-a b")).toBe("-a b");
    expect(fmt("-(a b)")).toBe("-(a b)");
    expect(fmt("-from:x OR is:unread")).toBe("(-from:x OR is:unread)");
    expect(fmt("--a")).toBe("a");
  });

  it("reads parentheses and {a b} groups (OR of the members)", () => {
    expect(fmt("(a OR b) c")).toBe("(a OR b) c");
    expect(fmt("{a b c} d")).toBe("(a OR b OR c) d");
    expect(fmt("{from:x from:y} -{is:read is:draft}")).toBe("(from:x OR from:y) -(is:read OR is:draft)");
    expect(fmt("{(a b) c}")).toBe("((a b) OR c)");
    expect(fmt("{a}")).toBe("a");
  });

  it("keeps phrases and quoted field values whole", () => {
    expect(parseQuery('from:"Jane Doe" "big deal"')).toEqual({
      kind: "and",
      children: [
        { kind: "address", field: "from", value: "Jane Doe", phrase: true, pos: 1 },
        { kind: "text", value: "big deal", phrase: true, pos: 17 },
      ],
    });
  });

  it("records 1-based positions of terms", () => {
    const ast = parseQuery("  foo  from:bar");
    expect(ast).toEqual({
      kind: "and",
      children: [
        { kind: "text", value: "foo", phrase: false, pos: 3 },
        { kind: "address", field: "from", value: "bar", phrase: false, pos: 8 },
      ],
    });
  });

  it("round-trips its canonical form", () => {
    for (const q of [
      "a (b OR c)",
      '-from:"x y" is:flagged',
      "(a OR b OR c) -(d e)",
      "larger:10240 after:2024-01-01 newer_than:7d",
    ]) {
      expect(fmt(fmt(q))).toBe(fmt(q));
    }
  });
});

describe("parse errors", () => {
  it("names the 1-based position and what was expected", () => {
    const e = err("(from:alice b");
    expect(e).toBeInstanceOf(QueryParseError);
    expect(e.message).toBe('Expected ")" at position 14');
    expect(e.position).toBe(14);
    expect(e.expected).toBe('")"');
  });

  it.each([
    ["a OR", 5, "a term"],
    ["OR a", 1, 'a term before "OR"'],
    ["a )", 3, "end of query"],
    ["()", 2, "a term"],
    ["{}", 2, "a term"],
    ["{a b", 5, '"}"'],
    ["- a", 2, 'a term after "-"'],
    ["a -", 4, 'a term after "-"'],
    ["from:", 6, 'a value after "from:"'],
    ["is:bogus", 4, "one of unread, read, flagged, starred, answered, draft"],
    ["has:pdf", 5, '"attachment"'],
    ["larger:big", 8, "a size like 500, 10K or 2M"],
    ["newer_than:7w", 12, "an age like 7d, 3m or 1y"],
    ["after:2024/02/30", 7, "a date like 2024/01/31 or 2024-01-31"],
    ['"open', 6, `'"' to close the phrase opened at position 1`],
    ['a ""', 4, "text inside the quotes"],
    ["a AND", 6, 'a term after "AND"'],
  ])("%s -> position %i", (q, position, expected) => {
    const e = err(q);
    expect(e.position).toBe(position);
    expect(e.expected).toBe(expected);
    expect(e.message).toBe(`Expected ${expected} at position ${position}`);
  });

  it("refuses unknown fields with their position", () => {
    const e = err("hello colour:red");
    expect(e.message).toBe('Unknown field "colour" at position 7');
    expect(e.position).toBe(7);
  });

  it("refuses nesting deeper than the limit instead of overflowing the stack", () => {
    expect(err("(".repeat(100) + "a" + ")".repeat(100)).expected).toMatch(/nested/);
    expect(err("-".repeat(5000) + "a").expected).toMatch(/nested/);
  });
});

describe("fuzz", () => {
  // A small deterministic PRNG so a failure is reproducible from the seed in the message
  const rng = (seed: number) => () => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const alphabet = [
    "(",
    ")",
    "{",
    "}",
    '"',
    "-",
    ":",
    " ",
    "OR",
    "AND",
    "from:",
    "is:",
    "in:",
    "larger:",
    "after:",
    "a",
    "b",
    "ü",
    "日",
    "\u0000",
    "\n",
    "10K",
    "2024/01/01",
    "7d",
    "x:",
  ];

  it("never throws anything but QueryParseError, and every success re-parses to itself", () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const len = Math.floor(r() * 20);
      let q = "";
      for (let i = 0; i < len; i++) q += alphabet[Math.floor(r() * alphabet.length)];
      try {
        const ast = parseQuery(q);
        const canon = formatQuery(ast);
        if (ast.kind !== "none")
          expect(formatQuery(parseQuery(canon)), `seed ${seed}: ${JSON.stringify(q)}`).toBe(canon);
      } catch (e) {
        if (!(e instanceof QueryParseError))
          throw new Error(`seed ${seed}: ${JSON.stringify(q)} threw ${String(e)}`);
        expect(e.position).toBeGreaterThanOrEqual(1);
        expect(e.position).toBeLessThanOrEqual(q.length + 1);
      }
    }
  });

  it("handles random bytes of any length", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed * 7);
      const q = Array.from({ length: Math.floor(r() * 200) }, () =>
        String.fromCharCode(Math.floor(r() * 0x3000)),
      ).join("");
      try {
        parseQuery(q);
      } catch (e) {
        expect(e, JSON.stringify(q)).toBeInstanceOf(QueryParseError);
      }
    }
  });
});

describe("terms with no letter or digit", () => {
  // bindQuery, which the cache's and the server's plans both start from, leaves them out
  const bound = (q: string) => formatQuery(bindQuery(parseQuery(q), {}));
  it("leave their AND, OR and NOT, as Gmail ignores them", () => {
    expect(bound("invoice OR ...")).toBe("invoice");
    expect(bound("invoice -!! from:@")).toBe("invoice");
    expect(bound('-(... OR "?!") invoice')).toBe("invoice");
    expect(bound("(... !!) OR (from:ann subject:&)")).toBe("from:ann");
    expect(bound("...")).toBe("");
    expect(bound("-...")).toBe("");
    for (const kept of ["invoice OR from:ann", "会議 OR ü", "-invoice 2026"])
      expect(bound(kept)).toBe(formatQuery(parseQuery(kept)));
  });
});
