// What a held send's question names of an HTML body: every address it links to or loads, as a mail
// program reads them (entities decoded, CSS included), which no text of the question shows otherwise.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { htmlLinks, MAX_LINKS_SHOWN } from "../src/compose/html-links.js";

describe("the addresses an HTML body points to", () => {
  it("names links, images, styles and frames, entities decoded, once each", () => {
    const html = [
      '<p>See <a href="https://evil.example/?ssn=123-45-6789">the minutes</a>.</p>',
      '<img src="&#104;ttps://track.example/p.gif?who=me" alt="">',
      "<div style=\"background: url('https://bg.example/x.png')\">x</div>",
      "<style>.a { background-image: url(https://css.example/y.png) }</style>",
      '<img srcset="https://a.example/1x.png 1x, https://a.example/2x.png 2x">',
      '<iframe src="//frame.example/f"></iframe><form action="https://post.example/f"></form>',
      '<a href="https://evil.example/?ssn=123-45-6789">again</a>',
      '<img src="cid:part1@here"><a href="#top">top</a>',
    ].join("\n");
    expect(htmlLinks(html)).toEqual({
      links: [
        "https://evil.example/?ssn=123-45-6789",
        "https://track.example/p.gif?who=me",
        "https://bg.example/x.png",
        "https://css.example/y.png",
        "https://a.example/1x.png",
        "https://a.example/2x.png",
        "//frame.example/f",
        "https://post.example/f",
      ],
      more: 0,
    });
    expect(htmlLinks("<p>Just text, https://in.text.example/ is in the text the question shows</p>")).toEqual(
      {
        links: [],
        more: 0,
      },
    );
  });

  it(`shows ${MAX_LINKS_SHOWN} and counts the rest; a style never closed is still read`, () => {
    const many = Array.from({ length: 25 }, (_, i) => `<a href="https://x.example/${i}">${i}</a>`).join("");
    const got = htmlLinks(many);
    expect(got.links).toHaveLength(MAX_LINKS_SHOWN);
    expect(got.more).toBe(25 - MAX_LINKS_SHOWN);
    expect(htmlLinks("<style>p { background: url(https://open.example/z) }").links).toEqual([
      "https://open.example/z",
    ]);
  });

  it("finds an address put in any URL attribute of any tag, however the HTML around it is written", () => {
    const attr = fc.constantFrom("href", "src", "background", "action", "poster", "HREF", "Src");
    const tag = fc.constantFrom("a", "img", "body", "form", "video", "td", "A", "IMG");
    const junk = fc.string({ maxLength: 40 }).map((s) => s.replace(/[<>"&]/g, ""));
    fc.assert(
      fc.property(tag, attr, fc.webUrl(), junk, junk, (t, a, url, before, after) => {
        // the address written with its characters as entities, as a sender hiding it from a scan might
        const hidden = [...url].map((c) => `&#${c.codePointAt(0)};`).join("");
        const html = `${before}<${t} title="x" ${a}="${hidden}">${after}</${t}>`;
        expect(htmlLinks(html).links).toContain(url.trim());
      }),
      { numRuns: 300 },
    );
  });
});
