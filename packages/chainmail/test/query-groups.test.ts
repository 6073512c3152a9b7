/**
 * Parenthesized field groups (`subject:(dinner movie)`, with OR and negation inside) and item:
 * terms in the parser, the formatter and the IMAP compiler (which refuses item:).
 */
import { describe, expect, it } from "vitest";
import { compileToImap, formatQuery, parseQuery, QueryParseError } from "../src/query/index.js";

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

describe("field:(group)", () => {
  it("gives every word and phrase of the group to the field, with AND, OR, {} and - inside", () => {
    expect(parseQuery("subject:(dinner movie)")).toEqual({
      kind: "and",
      children: [
        { kind: "subject", value: "dinner", phrase: false, pos: 10 },
        { kind: "subject", value: "movie", phrase: false, pos: 17 },
      ],
    });
    expect(fmt("subject:(dinner OR movie)")).toBe("(subject:dinner OR subject:movie)");
    expect(fmt('subject:(dinner -"movie night")')).toBe('subject:dinner -subject:"movie night"');
    expect(fmt("from:({ann bob} -carol) report")).toBe("(from:ann OR from:bob) -from:carol report");
    expect(fmt("subject:(a (b OR c))")).toBe("subject:a (subject:b OR subject:c)");
    expect(fmt("is:(unread flagged)")).toBe("is:unread is:flagged");
    expect(fmt("larger:(1K -2M)")).toBe("larger:1024 -larger:2097152");
    expect(fmt("-subject:(dinner movie)")).toBe("-(subject:dinner subject:movie)");
  });

  it("checks values as the field does, and refuses a field or an empty group inside", () => {
    expect(err("is:(unread maybe)").message).toBe(
      "Expected one of unread, read, flagged, starred, answered, draft at position 12",
    );
    expect(err("subject:(from:ann)").message).toBe(
      "Expected a word or phrase inside subject:( ) at position 10",
    );
    expect(err("subject:(to:(x))").message).toBe(
      "Expected a word or phrase inside subject:( ) at position 10",
    );
    expect(err("subject:()").message).toBe("Expected a term at position 10");
    expect(err("subject:(dinner").message).toBe('Expected ")" at position 16');
  });

  it("compiles a group for IMAP SEARCH the same as the terms written out", () => {
    const now = new Date("2026-12-01T00:00:00Z");
    const a = compileToImap(parseQuery("subject:(dinner OR movie) from:(-ann)"), now);
    const b = compileToImap(parseQuery("(subject:dinner OR subject:movie) -from:ann"), now);
    expect(a?.search).toEqual(b?.search);
    expect(a?.exact).toBe(true);
  });
});

describe("item:", () => {
  it("parses into an item leaf and prints back", () => {
    expect(parseQuery("item:it_admin_work")).toEqual({ kind: "item", value: "it_admin_work", pos: 1 });
    expect(fmt("item:(it_a OR it_b) -from:ann")).toBe("(item:it_a OR item:it_b) -from:ann");
  });

  it("is refused by the IMAP compiler, since the server knows nothing of work items", () => {
    expect(() => compileToImap(parseQuery("dinner item:it_a"), new Date())).toThrow(
      "item: searches need the cache, so the mail server cannot answer them",
    );
  });
});
