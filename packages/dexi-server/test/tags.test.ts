import { describe, expect, it } from "vitest";
import { checkTag, parseTags, tagCandidates } from "../src/domain/tags.js";

const tags = (text: string) => parseTags(text).map((t) => t.tag);

describe("tag rules", () => {
  it("finds #hashtags and @mentions, lower-cased, once each, in order of first appearance", () => {
    expect(tags("Reading #ML with @Vaswani, more #ml and #Papers")).toEqual(["#ml", "@vaswani", "#papers"]);
    expect(parseTags("#a @b")).toEqual([
      { tag: "#a", kind: "hashtag" },
      { tag: "@b", kind: "mention" },
    ]);
  });

  it("ends a tag at the first character that is not a letter, digit, _ or -", () => {
    expect(tags("#idea, #todo! (#wrapped) #one/two #emoji🎉 #a+b")).toEqual([
      "#idea",
      "#todo",
      "#wrapped",
      "#one",
      "#emoji",
      "#a",
    ]);
    expect(tags("#snake_case #kebab-case #x2")).toEqual(["#snake_case", "#kebab-case", "#x2"]);
    expect(tags("end of sentence #idea. and #dash- and #under_")).toEqual(["#idea", "#dash", "#under"]);
    expect(tags("#a#b")).toEqual(["#a"]);
  });

  it("lets mentions hold dots but not end with one", () => {
    expect(tags("ask @ada.lovelace. then @bob.")).toEqual(["@ada.lovelace", "@bob"]);
    expect(tags("#v1.2")).toEqual(["#v1"]);
  });

  it("ignores e-mail addresses, words with a sign inside, and URLs", () => {
    expect(tags("mail ann@example.com or ping @ann")).toEqual(["@ann"]);
    expect(tags("C# and F#, a#b, &#123; x/#y")).toEqual([]);
    expect(tags("see https://example.org/page#intro and http://x.y/@user #real")).toEqual(["#real"]);
    expect(tags("www.site.com/#frag mailto:me@x.org ftp://h/#f")).toEqual([]);
    expect(tags("[link](https://a.b/c#d) #after")).toEqual(["#after"]);
  });

  it("needs a letter, and at most 64 characters", () => {
    expect(tags("issue #123 in #2024 but #2024q1")).toEqual(["#2024q1"]);
    expect(tags(`#${"a".repeat(64)}`)).toEqual([`#${"a".repeat(64)}`]);
    expect(tags(`#${"a".repeat(65)}`)).toEqual([]);
    expect(tags("# heading and ## sub and #")).toEqual([]);
  });

  it("handles any script, combining marks, and case folding", () => {
    expect(tags("#Ünïcode #日本語 @Łukasz #café")).toEqual(["#ünïcode", "#日本語", "@łukasz", "#café"]);
    expect(tags("#cafe\u0301")).toEqual(["#café"]);
    expect(tags("(#tag) [#b] {#c} \"#d\" '#e'")).toEqual(["#tag", "#b", "#c", "#d", "#e"]);
    expect(tags("line\n#start\t#tab")).toEqual(["#start", "#tab"]);
  });

  it("reads a caller's tag: signed as written, a bare word as either kind", () => {
    expect(tagCandidates("#ML")).toEqual(["#ml"]);
    expect(tagCandidates("@Bob")).toEqual(["@bob"]);
    expect(tagCandidates(" rust ")).toEqual(["#rust", "@rust"]);
  });
});

describe("checkTag: a tag a person gives must parse back to exactly itself", () => {
  it("accepts and normalises tags that round-trip; a bare word is the hashtag", () => {
    expect(checkTag("ML")).toEqual({ ok: true, tag: "#ml" });
    expect(checkTag("@Ada.Lovelace")).toEqual({ ok: true, tag: "@ada.lovelace" });
    expect(checkTag("#2024q1")).toEqual({ ok: true, tag: "#2024q1" });
  });

  it("refuses the others with what the parser reads instead and the rule that decides it", () => {
    expect(checkTag("#work.notes")).toEqual({
      ok: false,
      tag: "#work.notes",
      readAs: ["#work"],
      problem: 'a hashtag ends at "."',
    });
    expect(checkTag("@bob.")).toMatchObject({
      ok: false,
      readAs: ["@bob"],
      problem: 'a tag cannot end with "."',
    });
    expect(checkTag("#a#b")).toMatchObject({ ok: false, readAs: ["#a"], problem: 'a hashtag ends at "#"' });
    expect(checkTag("#123")).toMatchObject({
      ok: false,
      readAs: [],
      problem: "a tag needs at least one letter",
    });
  });
});

describe("parseTags on a hostile text", () => {
  it("drops trailing - . _ in time in proportion to them, not their square", () => {
    // A feed item's or another user's note: 200,000 dashes after "#a" (the test's deadline guards
    // against the square, it measures nothing)
    const dashes = "-".repeat(200_000);
    expect(tags(`#a${dashes} and @b${"._".repeat(100_000)}`)).toEqual(["#a", "@b"]);
    expect(tags(`#a${dashes}b`)).toEqual([]);
    expect(tags("#idea. #x-_. #-._")).toEqual(["#idea", "#x"]);
  }, 10_000);
});
