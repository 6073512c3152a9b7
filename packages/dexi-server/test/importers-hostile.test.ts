/**
 * A bookmarks file and a feed item are someone else's text: each is read in one pass. The regular
 * expressions these readers once used read to the end of the text again at each `<H3>`, `<A` or
 * `<a` without an end: a crafted file or feed item of a megabyte held the server for minutes.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { parseBookmarks } from "../src/importers/bookmarks.js";
import { looksLikeHtml, parseFeed } from "../src/importers/feed.js";

const within = (ms: number, run: () => void) => {
  const started = Date.now();
  run();
  expect(Date.now() - started).toBeLessThan(ms);
};

it("reads a crafted bookmarks file in time in proportion to it", () => {
  within(2_000, () => {
    expect(parseBookmarks("<H3>".repeat(250_000))).toEqual([]);
    expect(parseBookmarks('<DT><A HREF="https://e.example/">'.repeat(30_000))).toEqual([]);
    expect(parseBookmarks("<".repeat(1_000_000))).toEqual([]);
  });
});

it("reads links, folders, entities, tags and descriptions as a browser writes them", () => {
  const items = parseBookmarks(
    [
      "<DL><p>",
      '<DT><H3 ADD_DATE="1">Work &amp; life</H3>',
      "<DL><p>",
      '<DT><A HREF="https://a.example/?x=1&amp;y=2" ADD_DATE="1700000000" TAGS="one,two">A <b>bold</b> &eacute;t&eacute;</A>',
      "<DD>What it is &lt;really&gt;",
      '<DT><A HREF="place:sort=8">Recent</A>',
      "</DL><p>",
      '<DT><A HREF="https://b.example/">B</A>',
      "</DL>",
    ].join("\n"),
  );
  expect(items.map((i) => [i.title, i.sourceUrl, i.folder, i.body, i.createdMs])).toEqual([
    [
      "A bold été",
      "https://a.example/?x=1&y=2",
      "Work & life",
      "What it is <really>\n\n#one #two",
      1700000000_000,
    ],
    ["B", "https://b.example/", null, "", null],
  ]);
});

it("tells a feed item's HTML from its text as /<[a-z][^>]*>/i does, in one pass", () => {
  const piece = fc.constantFrom("<", ">", "a", "Z", "1", " ", "/", "é");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
      const text = parts.join("");
      expect(looksLikeHtml(text)).toBe(/<[a-z][^>]*>/i.test(text));
    }),
    { numRuns: 5_000 },
  );
  within(1_000, () => expect(looksLikeHtml("<a".repeat(500_000))).toBe(false));
});

it("reads a feed item of 20,000 nested elements (its conversion overflowed the stack, failing the feed)", () => {
  const deep = `${"<div>".repeat(20_000)}deep words${"</div>".repeat(20_000)}`;
  const xml = `<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><item><title>Deep</title><link>https://e.example/1</link><guid>1</guid><description><![CDATA[${deep}]]></description></item><item><title>Next</title><link>https://e.example/2</link><guid>2</guid><description>plain</description></item></channel></rss>`;
  const feed = parseFeed(xml, { file: "/tmp/deep.xml" });
  expect(feed.items.map((i) => i.title)).toEqual(["Deep", "Next"]);
});
