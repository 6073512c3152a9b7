/**
 * A lean reader for the responses to the cache's bulk header FETCH (src/imap/raw-fetch.ts). It
 * splits the server's byte stream into whole responses (a line plus its `{n}` literals, split at
 * any byte across reads) and parses a `* n FETCH (...)` into the token tree imapflow's own parser
 * builds (`{type, value}` nodes, arrays for lists, null for NIL), byte by byte over the Buffer
 * instead of character by character over a decoded string. The tree then goes through imapflow's
 * own ENVELOPE and BODYSTRUCTURE formatting, so a message comes out exactly as `client.fetch`
 * gives it.
 */
import type { ImapAttribute, ImapAttributeList } from "imapflow/lib/handler/types.js";

export class FetchParseError extends Error {
  constructor(message: string) {
    super(`the IMAP server sent a malformed response: ${message}`);
    this.name = "FetchParseError";
  }
}

/** Longest response (line and literals) accepted: a header FETCH is a few KiB. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Deepest list nesting accepted (a BODYSTRUCTURE of nested multiparts). */
const MAX_DEPTH = 64;

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;

/**
 * Cuts a byte stream into whole responses. A line that ends in `{n}` (or `{n+}`) is followed by n
 * literal bytes and the response goes on after them; a response ends at the first LF outside a
 * literal. Bytes of a response that has not fully arrived wait for the next `push`.
 */
export class ResponseSplitter {
  private buf: Buffer = EMPTY;
  /** Where the search for the current response's end resumes (relative to `buf`). */
  private scan = 0;

  /** Appends a chunk and returns the responses it completes, each a view of the bytes. */
  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Buffer[] = [];
    let start = 0;
    const buf = this.buf;
    for (;;) {
      if (this.scan > buf.length) break;
      const nl = buf.indexOf(LF, this.scan);
      if (nl < 0) {
        this.scan = buf.length;
        break;
      }
      const literal = literalLength(buf, start, nl);
      if (literal >= 0) {
        this.scan = nl + 1 + literal;
      } else {
        out.push(buf.subarray(start, nl + 1));
        start = nl + 1;
        this.scan = start;
      }
      if (this.scan - start > MAX_RESPONSE_BYTES)
        throw new FetchParseError(`a response longer than ${MAX_RESPONSE_BYTES} bytes`);
    }
    this.buf = start >= buf.length ? EMPTY : buf.subarray(start);
    this.scan -= start;
    return out;
  }

  /** Bytes received that do not yet form a whole response. */
  get pending(): Buffer {
    return this.buf;
  }
}

/** The n of a `{n}` or `{n+}` that ends the line before `nl`, or -1. */
function literalLength(buf: Buffer, lineStart: number, nl: number): number {
  let e = nl;
  if (e > lineStart && buf[e - 1] === CR) e--;
  if (e <= lineStart || buf[e - 1] !== 0x7d) return -1;
  let i = e - 2;
  if (i >= lineStart && buf[i] === 0x2b) i--;
  let n = 0;
  let mul = 1;
  let digits = 0;
  for (; i >= lineStart; i--) {
    const c = buf[i] as number;
    if (c === 0x7b) break;
    if (c < 0x30 || c > 0x39) return -1;
    n += (c - 0x30) * mul;
    mul *= 10;
    if (++digits > 10) throw new FetchParseError("a literal length of more than 10 digits");
  }
  if (i < lineStart || digits === 0) return -1;
  return n;
}

/** One data item of a FETCH response: its key (upper case, section included) and its value. */
export interface FetchItem {
  key: string;
  value: ImapAttribute;
}

/** A parsed FETCH response: the sequence number and the data items in order. */
export interface FetchResponse {
  seq: number;
  items: FetchItem[];
}

/** What a response is: one of ours (`FETCH`), the tagged completion, or anything else. */
export type Response =
  | { kind: "fetch"; fetch: FetchResponse }
  | { kind: "tagged"; tag: string; status: string; text: string }
  | { kind: "other" };

const FETCH_WORD = " FETCH (";

/** Classifies a whole response and parses it when it is a FETCH. */
export function parseResponse(b: Buffer): Response {
  if (b[0] === 0x2a && b[1] === 0x20) {
    let p = 2;
    let seq = 0;
    while (p < b.length && (b[p] as number) >= 0x30 && (b[p] as number) <= 0x39) {
      seq = seq * 10 + ((b[p] as number) - 0x30);
      p++;
    }
    if (p === 2 || b.toString("latin1", p, p + FETCH_WORD.length).toUpperCase() !== FETCH_WORD) {
      return { kind: "other" };
    }
    const parser = new Parser(b, p + FETCH_WORD.length - 1);
    return { kind: "fetch", fetch: { seq, items: parser.fetchItems() } };
  }
  if (b[0] === 0x2b) return { kind: "other" };
  const line = b.toString("utf8").replace(/\r?\n$/, "");
  const m = /^(\S+) (OK|NO|BAD)\b ?(.*)$/i.exec(line);
  if (!m) return { kind: "other" };
  return {
    kind: "tagged",
    tag: m[1] as string,
    status: (m[2] as string).toUpperCase(),
    text: m[3] as string,
  };
}

/** Whether a byte ends an atom (SP, parentheses, brackets that close, quote, CR/LF). */
const ATOM_END = new Uint8Array(256);
for (const c of [0x20, 0x28, 0x29, 0x0d, 0x0a, 0x22, 0x5d, 0x7b]) ATOM_END[c] = 1;

class Parser {
  constructor(
    private readonly b: Buffer,
    private p: number,
  ) {}

  private fail(what: string): never {
    throw new FetchParseError(`${what} at byte ${this.p}`);
  }

  /** The data items of `(key value key value ...)` starting at the `(`. */
  fetchItems(): FetchItem[] {
    const b = this.b;
    if (b[this.p] !== 0x28) this.fail("no item list");
    this.p++;
    const items: FetchItem[] = [];
    for (;;) {
      if (b[this.p] === 0x29) {
        this.p++;
        break;
      }
      if (items.length && b[this.p++] !== 0x20) this.fail("no space between items");
      const key = this.key();
      if (b[this.p++] !== 0x20) this.fail(`no value for ${key}`);
      items.push({ key, value: this.value(0) });
    }
    if (b[this.p] === CR) this.p++;
    if (b[this.p] !== LF || this.p !== b.length - 1) this.fail("text after the item list");
    return items;
  }

  /** An item name, with a `[section]` (read up to its closing bracket) and `<origin>`. */
  private key(): string {
    const b = this.b;
    const start = this.p;
    while (this.p < b.length && !ATOM_END[b[this.p] as number] && b[this.p] !== 0x5b) this.p++;
    if (b[this.p] === 0x5b) {
      const close = b.indexOf(0x5d, this.p);
      if (close < 0) this.fail("an unclosed section");
      this.p = close + 1;
      if (b[this.p] === 0x3c) {
        const gt = b.indexOf(0x3e, this.p);
        if (gt < 0) this.fail("an unclosed partial origin");
        this.p = gt + 1;
      }
    }
    if (this.p === start) this.fail("an empty item name");
    return b.toString("latin1", start, this.p).toUpperCase();
  }

  private value(depth: number): ImapAttribute {
    const b = this.b;
    const c = b[this.p];
    if (c === 0x28) return this.list(depth + 1);
    if (c === 0x22) return { type: "STRING", value: this.quoted() };
    if (c === 0x7b) return { type: "LITERAL", value: this.literal() };
    const start = this.p;
    let high = 0;
    while (this.p < b.length && !ATOM_END[b[this.p] as number]) high |= b[this.p++] as number;
    // a flag like \Seen, a number, NIL; the `[` of a section never appears in a value here
    if (this.p === start) this.fail("an empty value");
    const text = b.toString(high < 0x80 ? "latin1" : "utf8", start, this.p);
    if (text.length === 3 && text.toUpperCase() === "NIL") return null;
    return { type: "ATOM", value: text };
  }

  private list(depth: number): ImapAttributeList {
    if (depth > MAX_DEPTH) this.fail(`lists nested deeper than ${MAX_DEPTH}`);
    const b = this.b;
    this.p++;
    const out: ImapAttributeList = [];
    for (;;) {
      const c = b[this.p];
      if (c === 0x29) {
        this.p++;
        return out;
      }
      if (c === undefined || c === CR || c === LF) this.fail("an unclosed list");
      if (out.length) {
        // Lists of lists (addresses, a multipart's parts) come without spaces between them
        if (c === 0x20) this.p++;
        else if (c !== 0x28 && b[this.p - 1] !== 0x29) this.fail("no space between list items");
        // some servers leave a space before the closing parenthesis
        if (b[this.p] === 0x29) continue;
      }
      out.push(this.value(depth));
    }
  }

  /** A quoted string: UTF-8, with `\x` standing for x (as imapflow reads it). */
  private quoted(): string {
    const b = this.b;
    const start = ++this.p;
    let escaped = false;
    let high = 0;
    for (;;) {
      const c = b[this.p];
      if (c === undefined || c === CR || c === LF) this.fail("an unclosed quoted string");
      if (c === 0x5c) {
        escaped = true;
        high |= b[this.p + 1] ?? 0;
        this.p += 2;
        continue;
      }
      if (c === 0x22) break;
      high |= c;
      this.p++;
    }
    // ASCII reads the same either way, and latin1 is the cheaper decoder
    const text = b.toString(high < 0x80 ? "latin1" : "utf8", start, this.p);
    this.p++;
    return escaped ? text.replace(/\\([\s\S])/g, "$1") : text;
  }

  /** `{n}` CRLF and n bytes, as a view of the response. */
  private literal(): Buffer {
    const b = this.b;
    const close = b.indexOf(0x7d, this.p);
    if (close < 0) this.fail("an unclosed literal length");
    let end = close;
    if (b[end - 1] === 0x2b) end--;
    const digits = b.toString("latin1", this.p + 1, end);
    if (!/^\d{1,10}$/.test(digits)) this.fail("a bad literal length");
    const n = Number(digits);
    let p = close + 1;
    if (b[p] === CR) p++;
    if (b[p] !== LF) this.fail("no line end after a literal length");
    p++;
    if (p + n > b.length) this.fail("a literal longer than the response");
    this.p = p + n;
    return b.subarray(p, p + n);
  }
}
