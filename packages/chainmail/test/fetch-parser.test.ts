// The lean FETCH reader against imapflow's own parser on the same bytes: hard responses (RFC 2047,
// 8-bit bytes in quoted strings and literals, literals inside BODYSTRUCTURE, a subject with an
// embedded `)`, Gmail's items), fed whole, split at every byte and one byte at a time; and
// malformed responses, which fail with a clear error.
import { ImapStream } from "imapflow/lib/handler/imap-stream.js";
import { parser } from "imapflow/lib/handler/imap-handler.js";
import { formatMessageResponse } from "imapflow/lib/tools.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FetchParseError, ResponseSplitter, parseResponse } from "../src/imap/fetch-parser.js";
import { type MessageContext, type SyncedMessage, toMessage } from "../src/imap/raw-fetch.js";

const lit = (s: string | Buffer) => {
  const b = Buffer.isBuffer(s) ? s : Buffer.from(s, "utf8");
  return Buffer.concat([Buffer.from(`{${b.length}}\r\n`), b]);
};
const join = (...parts: (string | Buffer)[]) =>
  Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p, "utf8"))));

const REFS = "References: <a@x.example>\r\n <b@x.example>\r\n\r\n";
const HARD: Buffer[] = [
  // RFC 2047 subject and name, escapes in quoted strings, a `)` and `"` inside the subject
  join(
    '* 1 FETCH (UID 11 FLAGS (\\Seen $Label1) RFC822.SIZE 2048 INTERNALDATE "03-Dec-2026 10:00:00 +0100" ',
    'ENVELOPE ("Thu, 03 Dec 2026 10:00:00 +0100" "=?UTF-8?B?R3LDvMOfZSBhdXMgS8O2bG4=?= (draft) \\"quoted\\" \\\\ end)" ',
    '(("=?ISO-8859-1?Q?J=FCrgen_M=FCller?=" NIL "juergen" "example.com")) NIL NIL ',
    '((NIL NIL "me" "bench.example")("Group" NIL "undisclosed-recipients" NIL)(NIL NIL NIL NIL)) NIL NIL ',
    '"<p@x.example>" "<m1@x.example>") ',
    'BODYSTRUCTURE ("text" "plain" ("charset" "utf-8") NIL NIL "7bit" 12 1 NIL NIL NIL NIL) ',
    "BODY[HEADER.FIELDS (REFERENCES)] ",
    lit(REFS),
    ")\r\n",
  ),
  // 8-bit bytes: raw UTF-8 in a quoted string, and in a literal; a literal filename in BODYSTRUCTURE
  join(
    '* 2 FETCH (UID 12 FLAGS () RFC822.SIZE 99000 INTERNALDATE "03-Dec-2026 11:00:00 +0000" ',
    'ENVELOPE ("Thu, 03 Dec 2026 11:00:00 +0000" "Straße café" (("Jürgen" NIL "j" "x.example")) NIL NIL NIL NIL NIL NIL NIL) ',
    'BODYSTRUCTURE (("text" "plain" ("charset" "utf-8") NIL NIL "quoted-printable" 100 4 NIL NIL NIL NIL)',
    '("application" "pdf" ("name" ',
    lit("Rechnung (März).pdf"),
    ') NIL NIL "base64" 90000 NIL ("attachment" ("filename*" "utf-8\'\'Rechnung%20%28M%C3%A4rz%29.pdf")) NIL NIL) ',
    '"mixed" ("boundary" "b1") NIL NIL NIL) ',
    "BODY[HEADER.FIELDS (REFERENCES)] ",
    lit("\r\n"),
    ")\r\n",
  ),
  // message/rfc822 with its own envelope and structure, literals inside the nested envelope
  join(
    '* 3 FETCH (UID 13 FLAGS (\\Flagged \\Answered) RFC822.SIZE 5000 INTERNALDATE "01-Jan-2025 00:00:00 +0000" ',
    "ENVELOPE (NIL ",
    lit(Buffer.from([0x46, 0x77, 0x64, 0x3a, 0x20, 0xe6, 0x97, 0xa5, 0x29])),
    ' (("A" NIL "a" "x.example")) NIL NIL NIL NIL NIL NIL NIL) ',
    'BODYSTRUCTURE (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 5 1 NIL NIL NIL NIL)',
    '("message" "rfc822" NIL NIL NIL "7bit" 800 ("Wed, 01 Jan 2025 00:00:00 +0000" ',
    lit('inner "subject" (x)'),
    ' (("B" NIL "b" "y.example")) NIL NIL NIL NIL NIL NIL "<in@y.example>") ',
    '("text" "html" ("charset" "utf-8") NIL NIL "8bit" 300 10 NIL NIL NIL NIL) 20 NIL ("attachment" NIL) NIL NIL) ',
    '"mixed" ("boundary" "b2") NIL NIL NIL) ',
    "BODY[HEADER.FIELDS (REFERENCES)] {0}\r\n",
    ")\r\n",
  ),
  // Gmail's items, MODSEQ, NIL envelope fields and a bare NIL header section
  join(
    '* 4 FETCH (X-GM-THRID 1234567890123 X-GM-LABELS ("\\\\Inbox" "&AOQ-rger" Work) UID 14 MODSEQ (98765) ',
    'FLAGS (\\Seen) RFC822.SIZE 10 INTERNALDATE "not a date" ',
    "ENVELOPE (NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL) ",
    'BODYSTRUCTURE ("TEXT" "PLAIN" NIL NIL NIL "7BIT" 0 0) ',
    "BODY[HEADER.FIELDS (REFERENCES)] NIL)\r\n",
  ),
  // parameters: an encoded word, RFC 2231 continuations, RFC 2231 in a plain filename, odd lists
  join(
    '* 5 FETCH (UID 15 FLAGS (\\Seen) RFC822.SIZE 700 INTERNALDATE "02-Dec-2026 09:00:00 -0500" ',
    'ENVELOPE ("bad date" "" (("\\"Quoted Name\\"" NIL "q" "x.example")) NIL NIL NIL NIL NIL "" NIL) ',
    'BODYSTRUCTURE (("application" "octet-stream" ("name" "=?UTF-8?Q?caf=C3=A9.bin?=" "x-odd") NIL NIL "base64" 10 NIL ',
    '("attachment" ("filename*0" "long-" "filename*1" "name.bin")) NIL NIL)',
    '("image" "png" NIL NIL NIL "base64" 20 NIL ("inline" ("filename" "utf-8\'\'pic%20one.png")) ("en" "de") "http://x")',
    ' "related" ("type" "image/png" "boundary" "b3") ("inline" NIL) NIL NIL) ',
    "BODY[HEADER.FIELDS (REFERENCES)] {2}\r\n\r\n)\r\n",
  ),
];
const STREAM = Buffer.concat([...HARD, Buffer.from("* 5 EXISTS\r\nT1 OK Fetch completed.\r\n")]);

const context = (): MessageContext =>
  ({
    enabled: new Set<string>(),
    capabilities: new Map<string, boolean | number>(),
    mailbox: { path: "INBOX", uidValidity: 7n, uidNext: 1, delimiter: "/", flags: new Set(), exists: 4 },
  }) as unknown as MessageContext;

/** What imapflow's `fetch` yields for these bytes, reduced to the fields the cache reads. */
async function imapflowReads(bytes: Buffer): Promise<SyncedMessage[]> {
  const stream = new ImapStream({ logger: { debug() {}, info() {}, warn() {}, error() {}, trace() {} } });
  stream.end(bytes);
  const out: SyncedMessage[] = [];
  const ctx = context();
  for await (const item of stream as AsyncIterable<{ payload: Buffer; literals: Buffer[]; next(): void }>) {
    const parsed = await parser(item.payload, { literals: item.literals });
    item.next();
    if (parsed.tag !== "*" || (parsed.attributes?.[0] as { value?: string } | undefined)?.value !== "FETCH")
      continue;
    const f = (await formatMessageResponse(
      parsed,
      ctx.mailbox as never,
      "md5",
      ctx as never,
    )) as unknown as Record<string, unknown>;
    delete f.id;
    delete f.flagColor;
    delete f.emailId;
    out.push(f as unknown as SyncedMessage);
  }
  return out;
}

/** The lean reader's messages for the bytes delivered in the given chunks. */
function leanReads(chunks: Buffer[]): SyncedMessage[] {
  const splitter = new ResponseSplitter();
  const ctx = context();
  const out: SyncedMessage[] = [];
  for (const c of chunks) {
    for (const r of splitter.push(c)) {
      const p = parseResponse(r);
      if (p.kind === "fetch") out.push(toMessage(ctx, p.fetch));
    }
  }
  expect(splitter.pending.length).toBe(0);
  return out;
}

describe("the lean FETCH reader", () => {
  it("reads each hard response exactly as imapflow does", async () => {
    const expected = await imapflowReads(STREAM);
    expect(expected).toHaveLength(HARD.length);
    const got = leanReads([STREAM]);
    expect(got).toEqual(expected);
    // the facts that matter, so an imapflow change cannot make both sides agree on garbage
    expect(got[0]?.envelope?.subject).toBe('Grüße aus Köln (draft) "quoted" \\ end)');
    expect(got[0]?.envelope?.from).toEqual([{ name: "Jürgen Müller", address: "juergen@example.com" }]);
    expect(got[1]?.envelope?.subject).toBe("Straße café");
    expect(got[1]?.bodyStructure?.childNodes?.[1]?.dispositionParameters?.filename).toBe(
      "Rechnung (März).pdf",
    );
    expect(got[2]?.envelope?.subject).toBe("Fwd: 日)");
    expect(got[2]?.bodyStructure?.childNodes?.[1]?.envelope?.subject).toBe('inner "subject" (x)');
    expect(got[3]?.labels).toEqual(new Set(["\\Inbox", "ärger", "Work"]));
    expect(got[3]?.modseq).toBe(98765n);
    expect(got[0]?.headers?.toString()).toBe(REFS);
    expect(got[4]?.bodyStructure?.childNodes?.[0]?.parameters?.name).toBe("café.bin");
    expect(got[4]?.bodyStructure?.childNodes?.[0]?.dispositionParameters?.filename).toBe("long-name.bin");
    expect(got[4]?.envelope?.from).toEqual([{ name: "Quoted Name", address: "q@x.example" }]);
  });

  it("gives the same messages when the stream is split at any byte", async () => {
    const expected = await imapflowReads(STREAM);
    for (let k = 0; k <= STREAM.length; k++) {
      const got = leanReads([STREAM.subarray(0, k), STREAM.subarray(k)]);
      expect(got, `split at byte ${k}`).toEqual(expected);
    }
    const bytes = Array.from({ length: STREAM.length }, (_, i) => STREAM.subarray(i, i + 1));
    expect(leanReads(bytes)).toEqual(expected);
  });

  it("tells its own FETCH, the tagged end and other responses apart", () => {
    const kinds = new ResponseSplitter().push(STREAM).map((r) => parseResponse(r).kind);
    expect(kinds).toEqual(["fetch", "fetch", "fetch", "fetch", "fetch", "other", "tagged"]);
    const end = parseResponse(Buffer.from("T9 NO [SERVERBUG] Internal error\r\n"));
    expect(end).toEqual({ kind: "tagged", tag: "T9", status: "NO", text: "[SERVERBUG] Internal error" });
  });

  it("rejects malformed responses with a clear error", () => {
    const bad = [
      "* 1 FETCH (UID 1 FLAGS (\\Seen)\r\n",
      '* 1 FETCH (UID 1 ENVELOPE ("unclosed)\r\n',
      "* 1 FETCH (UID 1 BODY[HEADER {x}\r\n",
      "* 1 FETCH (UID 1 FLAGS ())) trailing\r\n",
      "* 1 FETCH (UID 1  FLAGS ())\r\n",
      "* 1 FETCH (FLAGS ())\r\n",
      `* 1 FETCH (UID 1 BODYSTRUCTURE ${"(".repeat(100)}${")".repeat(100)})\r\n`,
    ];
    for (const b of bad) {
      expect(() => {
        for (const r of new ResponseSplitter().push(Buffer.from(b))) {
          const p = parseResponse(r);
          if (p.kind === "fetch") toMessage(context(), p.fetch);
        }
      }, b).toThrow(FetchParseError);
    }
  });

  it("waits for a literal's bytes instead of reading past them", () => {
    const s = new ResponseSplitter();
    expect(s.push(Buffer.from("* 1 FETCH (UID 1 BODY[HEADER] {12}\r\nabc"))).toEqual([]);
    expect(s.push(Buffer.from("\r\n)\r\n"))).toEqual([]);
    const done = s.push(Buffer.from("defg)\r\n"));
    expect(done).toHaveLength(1);
    const p = parseResponse(done[0] as Buffer);
    expect(p.kind === "fetch" && toMessage(context(), p.fetch).headers?.toString()).toBe("abc\r\n)\r\ndefg");
  });
});

/**
 * What a hostile (or broken) IMAP server can send: every response the lean reader is given either
 * reads or fails with its own FetchParseError (which ends the sync with a clear error), never
 * another exception, whatever is cut, inserted or changed, and whatever the split.
 */
describe("the lean FETCH reader on hostile bytes", () => {
  // Bytes that mean something to the grammar, and some that mean nothing
  const TOKENS = [
    "(",
    ")",
    '"',
    "\\",
    "{",
    "}",
    "{0}\r\n",
    "{5}\r\n",
    "{99999999999}\r\n",
    " ",
    "\r\n",
    "NIL",
    "UID",
    "0",
    "-1",
    "9".repeat(30),
    "*",
    "[",
    "]",
    "\u00ff",
    "\u0000",
    "BODYSTRUCTURE",
    "ENVELOPE",
    "FLAGS",
    "X-GM-LABELS",
    "MODSEQ",
    "INTERNALDATE",
  ];
  const edit = fc.oneof(
    fc.record({ at: fc.nat(), cut: fc.nat({ max: 40 }) }).map((e) => ({ ...e, insert: Buffer.alloc(0) })),
    fc
      .record({
        at: fc.nat(),
        cut: fc.nat({ max: 3 }),
        tokens: fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 4 }),
      })
      .map((e) => ({ at: e.at, cut: e.cut, insert: Buffer.from(e.tokens.join(""), "latin1") })),
    fc
      .record({ at: fc.nat(), cut: fc.nat({ max: 3 }), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) })
      .map((e) => ({ at: e.at, cut: e.cut, insert: Buffer.from(e.bytes) })),
  );

  /** Feeds `bytes` in the chunks given; true when it read or failed with FetchParseError. */
  function readsOrRefuses(bytes: Buffer, splits: number[]): true {
    const splitter = new ResponseSplitter();
    const cuts = [...new Set(splits.map((s) => s % (bytes.length + 1)))].sort((a, b) => a - b);
    let from = 0;
    try {
      for (const to of [...cuts, bytes.length]) {
        for (const r of splitter.push(bytes.subarray(from, to))) {
          const p = parseResponse(r);
          if (p.kind === "fetch") toMessage(context(), p.fetch);
        }
        from = to;
      }
    } catch (err) {
      if (!(err instanceof FetchParseError)) throw err;
    }
    return true;
  }

  it("edits of real responses read or fail with FetchParseError", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...HARD),
        fc.array(edit, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        (response, edits, splits) => {
          let b = response;
          for (const e of edits) {
            const at = e.at % (b.length + 1);
            b = Buffer.concat([b.subarray(0, at), e.insert, b.subarray(at + e.cut)]);
          }
          return readsOrRefuses(b, splits);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("arbitrary bytes after a FETCH's start read or fail with FetchParseError", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 6 })), { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        (parts, splits) =>
          readsOrRefuses(Buffer.from(`* 1 FETCH (UID 1 ${parts.join("")})\r\n`, "latin1"), splits),
      ),
      { numRuns: 3000 },
    );
  });

  it("refuses a literal larger than a response may be, instead of waiting to buffer it", () => {
    const s = new ResponseSplitter();
    expect(() => s.push(Buffer.from("* 1 FETCH (UID 1 BODY[HEADER] {99999999999}\r\nabc"))).toThrow(
      FetchParseError,
    );
  });
});
