/**
 * HTML mail as text, for reading (get_message, quotes) and for the cache's word index: table cells
 * stay apart (they ran together: "OrderShipped", and a search for "shipped" missed the message),
 * rows keep their reading order, and an HTML-only message reads the same whole or with an
 * attachment, whichever way mailparser would have made its text.
 */
import fc from "fast-check";
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { textFromSource } from "../src/cache/body.js";
import { parseOriginal } from "../src/compose/original.js";
import { htmlToPlain, htmlToText, MAILPARSER_TEXT, parsedBodyText } from "../src/imap/body.js";
import { buildMessage } from "../src/testing/corpus.js";

const RECEIPT = [
  "<p>Your order</p>",
  "<table><tr><th>Item</th><th>Status</th></tr><tr><td>Order</td><td>Shipped</td></tr>",
  "<tr><td>Total</td><td>$12.50</td></tr></table>",
  '<p>See <a href="https://shop.example/o/7">your order</a>.<img src="cid:x" alt="logo"></p>',
].join("");

/** A layout table: two columns of paragraphs, as newsletters are built. */
const LAYOUT =
  '<table width="600"><tr><td><p>Left one</p><p>Left two</p></td><td><p>Right one</p></td></tr>' +
  "<tr><td></td><td></td></tr><tr><td><table><tr><td>Inner</td><td>cells</td></tr></table></td></tr></table>";

describe("HTML to text", () => {
  it("keeps a row's cells apart and each row on its line, with no trailing spaces", () => {
    expect(htmlToText(RECEIPT)).toBe(
      "Your order\n\nItem Status\nOrder Shipped\nTotal $12.50\n\nSee your order [https://shop.example/o/7].",
    );
    expect(htmlToPlain(RECEIPT)).toBe(
      "Your order\n\nItem Status\nOrder Shipped\nTotal $12.50\n\nSee your order.",
    );
  });

  it("reads a layout table in order, a column's paragraphs together, without runs of blank lines", () => {
    const text = htmlToText(LAYOUT);
    expect(text).toBe("Left one\n\nLeft two\n\nRight one\n\nInner cells");
    expect(text).not.toMatch(/ $|\n\n\n/m);
    expect(htmlToText("<table><tr><td>a</td><td>b</td></tr><tr><td></td></tr></table>")).toBe("a b");
  });

  it("takes time in proportion to a hostile message's runs of spaces, not their square", () => {
    // 200,000 spaces before a letter, in <pre> and as empty cells: a regular expression's
    // backtracking over them took minutes (6 s at 50,000); line by line it is a few ms. The test's
    // own deadline is the guard (a hang fails it), not a measurement.
    const spaces = " ".repeat(200_000);
    expect(htmlToText(`<pre>${spaces}x</pre>`)).toBe(`${spaces}x`);
    const cells = `<table><tr>${"<td></td>".repeat(100_000)}<td>x</td></tr></table>`;
    expect(htmlToPlain(cells).trim()).toBe("x");
  }, 10_000);

  it("reads a hostile message's 100,000 nested elements, the text around them kept (the stack overflowed)", () => {
    const deep = `<p>before</p>${"<div>".repeat(100_000)}deep${"</div>".repeat(100_000)}<p>after</p>`;
    for (const convert of [htmlToText, htmlToPlain]) expect(convert(deep)).toBe("before\n\n...\n\nafter");
    // A depth real mail has is read whole
    expect(htmlToText(`${"<div>".repeat(500)}deep${"</div>".repeat(500)}`)).toBe("deep");
  });

  it("gives tidy text for any HTML made of mail's pieces (fast-check)", () => {
    const piece = fc.constantFrom(
      ...["<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "<pre>", "</pre>", "<div>"],
      ...["</div>", "<p>", "</p>", "<br>", "<a href='https://x.example/a b'>", "</a>", "<img alt='i'>"],
      ...[" ", "  ", "\n", "\t", "&nbsp;", "word", "Grüße", "<", ">", "&", "<!--", "-->", "<b>", "</b>"],
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), (pieces) => {
        for (const convert of [htmlToText, htmlToPlain]) {
          const text = convert(pieces.join(""));
          expect(text).not.toMatch(/ \n|\n\n\n/);
          expect(text).toBe(text.trimEnd());
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("an HTML-only message's text", () => {
  const msg = (attachments: boolean) =>
    Buffer.from(
      buildMessage({
        from: "Shop <shop@example.com>",
        to: ["alice@example.com"],
        subject: "Your order",
        date: new Date("2026-12-07T10:00:00Z"),
        messageId: `<order-${attachments}@example.com>`,
        html:
          RECEIPT +
          "<p>" +
          "A long line that mailparser's own conversion would wrap at eighty columns. ".repeat(3) +
          "</p>",
        ...(attachments
          ? {
              attachments: [
                { filename: "r.pdf", contentType: "application/pdf", content: Buffer.from("%PDF") },
              ],
            }
          : {}),
      }),
    );

  it("is the same alone and beside an attachment, for reading and for the index", async () => {
    const read = async (raw: Buffer) => parsedBodyText(await simpleParser(raw, MAILPARSER_TEXT), htmlToText);
    const [alone, withFile] = [await read(msg(false)), await read(msg(true))];
    expect(alone).toBe(withFile);
    expect(alone).toContain("Order Shipped\nTotal $12.50");
    // one line, not wrapped
    expect(alone).toMatch(/at eighty columns\. A long line that mailparser/);
    expect(await textFromSource(msg(false))).toBe(await textFromSource(msg(true)));
    expect(await textFromSource(msg(false))).toContain("Order Shipped");
  });

  it("is what a reply or forward quotes (it quoted nothing beside an attachment)", async () => {
    for (const attachments of [false, true])
      expect((await parseOriginal(msg(attachments))).text).toContain("Order Shipped\nTotal $12.50");
  });
});
