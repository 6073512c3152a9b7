/**
 * An HTML body's `<img src="name">` of an inline image is sent as `src="cid:..."`. The HTML is the
 * agent's (up to a megabyte, and it may carry a hostile message's text): the rewrite finds each tag
 * in one pass. The regular expression it replaced backtracked over the rest of the body at each
 * `<img` with no `>` after it: a body of such openings held the daemon for minutes.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { bodyParts } from "../src/compose/body.js";

const cids = new Map([
  ["logo.png", "logo-1@chainmail"],
  ["a&b.png", "amp-2@chainmail"],
]);
const html = (body: string) => bodyParts({ body, format: "html", htmlText: "t", cids }).html;

it("rewrites each img's src that names an inline image, and nothing else", () => {
  expect(html('<p>Hi <IMG alt="a > b" SRC="logo.png"> and <img src="other.png"></p>')).toBe(
    '<p>Hi <IMG alt="a > b" SRC="cid:logo-1@chainmail"> and <img src="other.png"></p>',
  );
  // The attribute value as HTML escapes it; an unterminated tag is left as it is
  expect(html('<img src="a&amp;b.png"/><img src="logo.png"')).toBe(
    '<img src="cid:amp-2@chainmail"/><img src="logo.png"',
  );
  expect(html('<imgx src="logo.png"> <img data-src="logo.png">')).toBe(
    '<imgx src="logo.png"> <img data-src="logo.png">',
  );
});

it("gives each well-formed tag its cid, whatever text and attributes surround it", () => {
  const text = fc.stringMatching(/^[^<]*$/);
  const attr = fc.constantFrom(
    'alt="x > y"',
    "class='a\"b'",
    'width="10"',
    "hidden",
    "title=\"<img src='logo.png'>\"",
  );
  const img = fc.record({
    before: fc.array(attr, { maxLength: 2 }),
    src: fc.constantFrom("logo.png", "a&amp;b.png", "other.png", ""),
    after: fc.array(attr, { maxLength: 2 }),
    close: fc.constantFrom(">", "/>", " >"),
  });
  fc.assert(
    fc.property(fc.array(fc.tuple(text, img), { maxLength: 6 }), text, (parts, tail) => {
      const tag = (i: (typeof parts)[number][1], src: string) =>
        `<img ${[...i.before, `src="${src}"`, ...i.after].join(" ")}${i.close}`;
      const input = parts.map(([t, i]) => t + tag(i, i.src)).join("") + tail;
      const want =
        parts
          .map(([t, i]) => {
            const cid = cids.get(i.src.replace("&amp;", "&"));
            return t + tag(i, cid ? `cid:${cid}` : i.src);
          })
          .join("") + tail;
      expect(html(input)).toBe(want);
    }),
  );
});

it("takes time in proportion to the body on openings without an end", () => {
  const started = Date.now();
  expect(html("<img ".repeat(200_000))).toBe("<img ".repeat(200_000));
  expect(html('<img src="'.repeat(100_000))).toBe('<img src="'.repeat(100_000));
  expect(html(`${'<img alt="'.repeat(100_000)}>`)).toHaveLength(1_000_001);
  // The old expression took minutes on the first of these; a linear pass takes milliseconds.
  expect(Date.now() - started).toBeLessThan(2_000);
});
