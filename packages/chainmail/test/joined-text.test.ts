/**
 * The join of a message's text parts (src/cache/joined-text.ts) against the whole read itself
 * (mailparser with MAILPARSER_TEXT, as get_message and the backfill parse a message whole), on
 * message shapes fast-check makes: text, HTML and image parts, inline or attached, in mixed and
 * alternative containers nested, 7bit or base64. Wherever `joinedTextParts` says a shape can be
 * joined, the parts' texts joined are exactly the whole read's text; the shapes it refuses (empty
 * parts, embedded messages) are the ones the cache reads another way.
 */
import fc from "fast-check";
import type { MessageStructureObject } from "imapflow";
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import {
  joinedTextParts,
  joinPieces,
  MAX_JOINED_PARTS,
  readsPastFirstPart,
} from "../src/cache/joined-text.js";
import { indexParts } from "../src/cache/large-body.js";
import { textFromPartBytes, textPart } from "../src/cache/body.js";
import { MAILPARSER_TEXT } from "../src/imap/body.js";

type Leaf = {
  kind: "plain" | "html" | "image" | "message";
  text: string;
  disposition: "" | "inline" | "attachment";
  base64: boolean;
};
type Container = { kind: "mixed" | "alternative"; children: Node[] };
type Node = Leaf | Container;
const isContainer = (n: Node): n is Container => n.kind === "mixed" || n.kind === "alternative";

// No "-" (a line could pass for a boundary) and no lone CR
const text = fc.oneof(
  {
    arbitrary: fc
      .array(fc.constantFrom("a", "Zz", "é", "—", " ", ".", "\r\n", "\r\n\r\n", "> q", "0"), {
        minLength: 1,
        maxLength: 12,
      })
      .map((xs) => xs.join("")),
    weight: 9,
  },
  // (an empty part now and then: a shape the join refuses)
  { arbitrary: fc.constant(""), weight: 1 },
);
const leaf: fc.Arbitrary<Leaf> = fc.record({
  kind: fc.constantFrom(
    "plain",
    "plain",
    "plain",
    "plain",
    "plain",
    "html",
    "html",
    "image",
    "image",
    "message",
  ),
  text,
  disposition: fc.constantFrom("", "", "", "inline", "attachment"),
  base64: fc.boolean(),
});
const tree = fc.letrec<{ node: Node; container: Node }>((tie) => ({
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("container")),
  container: fc.record({
    kind: fc.constantFrom("mixed", "mixed", "alternative"),
    children: fc.array(tie("node"), { minLength: 1, maxLength: 5 }),
  }),
})).container;

const TYPE = { plain: "text/plain", html: "text/html", image: "image/png", message: "message/rfc822" };

/** The raw MIME entity of `n` (header and body) and its BODYSTRUCTURE, numbered as IMAP numbers parts. */
function build(
  n: Node,
  part: string,
  seq: { n: number },
): { raw: string; structure: MessageStructureObject } {
  if (isContainer(n)) {
    const boundary = `=_b${seq.n++}`;
    const kids = n.children.map((c, i) => build(c, part === "" ? String(i + 1) : `${part}.${i + 1}`, seq));
    const raw = `Content-Type: multipart/${n.kind}; boundary="${boundary}"\r\n\r\n${kids.map((k) => `--${boundary}\r\n${k.raw}\r\n`).join("")}--${boundary}--`;
    return {
      raw,
      structure: {
        type: `multipart/${n.kind}`,
        childNodes: kids.map((k) => k.structure),
        ...(part ? { part } : {}),
      } as MessageStructureObject,
    };
  }
  const content =
    n.kind === "html"
      ? n.text && `<p>${n.text}</p>`
      : n.kind === "message"
        ? `From: b@example.com\r\nSubject: inner\r\n\r\n${n.text}`
        : n.text;
  const bytes = Buffer.from(content, "utf8");
  const body =
    n.base64 && n.kind !== "message" ? bytes.toString("base64").replace(/.{76}/g, "$&\r\n") : content;
  const raw = [
    `Content-Type: ${TYPE[n.kind]}${n.kind === "plain" || n.kind === "html" ? "; charset=utf-8" : ""}`,
    ...(n.disposition ? [`Content-Disposition: ${n.disposition}`] : []),
    ...(n.base64 && n.kind !== "message" ? ["Content-Transfer-Encoding: base64"] : []),
    "",
    body,
  ].join("\r\n");
  return {
    raw,
    structure: {
      part: part || "1",
      type: TYPE[n.kind],
      size: Buffer.byteLength(body),
      ...(n.kind === "plain" || n.kind === "html" ? { parameters: { charset: "utf-8" } } : {}),
      ...(n.disposition ? { disposition: n.disposition } : {}),
    } as MessageStructureObject,
  };
}

/** Each leaf's decoded bytes by part number (what a download of the part gives). */
function contents(n: Node, part: string, out: Map<string, Buffer>): Map<string, Buffer> {
  if (isContainer(n))
    for (const [i, c] of n.children.entries())
      contents(c, part === "" ? String(i + 1) : `${part}.${i + 1}`, out);
  else out.set(part || "1", Buffer.from(n.kind === "html" ? n.text && `<p>${n.text}</p>` : n.text, "utf8"));
  return out;
}

describe("joining a message's text parts", () => {
  it("gives the whole read's text for every shape it joins", async () => {
    let joined = 0;
    await fc.assert(
      fc.asyncProperty(tree, async (root) => {
        const { raw, structure } = build(root, "", { n: 0 });
        const message = `From: a@example.com\r\nTo: b@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n${raw}\r\n`;
        const pieces = joinedTextParts(structure);
        const parsed = await simpleParser(message, MAILPARSER_TEXT);
        const bytes = contents(root, "", new Map());
        // A shape read by its first text part alone: the whole read gives that part's text
        const first = textPart(structure);
        if (!readsPastFirstPart(structure) && first && !first.html && parsed.text?.trim())
          expect(textFromPartBytes(bytes.get(first.part) ?? Buffer.alloc(0), first, Infinity)).toBe(
            parsed.text,
          );
        if (pieces === null) return;
        const ours = joinPieces(pieces, (p) => bytes.get(p));
        // (blank: the whole read turns to the HTML, and the join gives way)
        if (ours === null) return;
        joined++;
        expect(ours).toBe(parsed.text);
        expect(readsPastFirstPart(structure)).toBe(true);
      }),
      { numRuns: 500 },
    );
    // The generator reaches joinable shapes often enough for the property to say something
    expect(joined).toBeGreaterThan(15);
  });

  it("joins text, a photo and text (Apple Mail's shape) and refuses an embedded message", () => {
    const plainPart = (part: string, size = 10) =>
      ({ part, type: "text/plain", size, parameters: { charset: "utf-8" } }) as MessageStructureObject;
    const photo = { part: "2", type: "image/jpeg", size: 9, disposition: "inline" } as MessageStructureObject;
    const mixed = (...childNodes: MessageStructureObject[]) =>
      ({ type: "multipart/mixed", childNodes }) as MessageStructureObject;
    expect(joinedTextParts(mixed(plainPart("1"), photo, plainPart("3")))).toEqual([
      { part: "1" },
      { part: "3" },
    ]);
    expect(joinedTextParts(mixed(plainPart("1"), photo, plainPart("3", 0)))).toBeNull();
    expect(
      joinedTextParts(
        mixed(
          plainPart("1"),
          { part: "2", type: "message/rfc822", size: 5 } as MessageStructureObject,
          plainPart("3"),
        ),
      ),
    ).toBeNull();
    // One text part is read as one (./body.ts textPart), not joined
    expect(joinedTextParts(mixed(plainPart("1"), photo))).toBeNull();
  });
});

describe("the parts a partial body is indexed by", () => {
  const leaf = (part: string, type: string, extra: Partial<MessageStructureObject> = {}) =>
    ({ part, type, size: 10, ...extra }) as MessageStructureObject;
  const mixed = (childNodes: MessageStructureObject[], part?: string) =>
    ({ type: "multipart/mixed", childNodes, ...(part ? { part } : {}) }) as MessageStructureObject;

  it("takes every inline text part, an embedded message's too, and no attachment", () => {
    const tree = mixed([
      leaf("1", "text/plain"),
      leaf("2", "image/jpeg", { disposition: "inline" }),
      leaf("3", "text/plain", { disposition: "attachment" }),
      // imapflow numbers a one-part embedded body as the message/rfc822 part; IMAP calls it 4.1
      leaf("4", "message/rfc822", { childNodes: [leaf("4", "text/plain")] }),
      leaf("5", "message/rfc822", {
        childNodes: [mixed([leaf("5.1", "text/plain"), leaf("5.2", "application/pdf")], "5")],
      }),
    ]);
    expect(indexParts(tree)).toEqual(["1", "4.1", "5.1"].map((part) => ({ part, html: false })));
  });

  it("takes the HTML parts where no part is plain text, and at most MAX_JOINED_PARTS", () => {
    expect(
      indexParts(mixed([leaf("1", "text/html"), leaf("2", "image/png"), leaf("3", "text/html")])),
    ).toEqual([
      { part: "1", html: true },
      { part: "3", html: true },
    ]);
    const many = mixed(Array.from({ length: 30 }, (_, i) => leaf(String(i + 1), "text/plain")));
    expect(indexParts(many).map((p) => p.part)).toEqual(
      Array.from({ length: MAX_JOINED_PARTS }, (_, i) => String(i + 1)),
    );
    expect(indexParts(leaf("1", "text/plain"))).toEqual([{ part: "1", html: false }]);
  });
});
