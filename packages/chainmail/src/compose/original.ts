/**
 * The message a reply or forward starts from, parsed once from its raw bytes. Its addresses are read
 * from the header lines mailparser found (keys trimmed and lowercased) by the send path's address
 * model, not from mailparser's lenient address objects: what cannot be read as one valid mailbox is
 * kept as text in `unreadable`, for the send to be held on.
 */
import { simpleParser } from "mailparser";
import { MailError } from "../errors.js";
import { htmlToText, MAILPARSER_TEXT, parsedBodyText } from "../imap/body.js";
import { messageFields, pastParserBounds, tooManyParts } from "../imap/parser-bounds.js";
import { headerOf } from "../imap/messages.js";
import { type MailAddress, parseHeaderAddresses } from "./addresses.js";
import type { Quote } from "./body.js";
import type { ForwardedPart } from "./mime.js";

export interface Original {
  messageId: string | undefined;
  inReplyTo: string | undefined;
  references: string[];
  subject: string;
  from: MailAddress[];
  replyTo: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  /** Per address header: the text of each address in it that is not one valid mailbox. */
  unreadable: Record<AddressHeader, string[]>;
  /** The header lines as mailparser split them: lowercased, trimmed names and the whole raw lines. */
  headerLines: ReadonlyArray<{ key: string; line: string }>;
  date: Date | undefined;
  text: string;
  html: string | undefined;
  attachments: ForwardedPart[];
  /** Parts the HTML shows inline (multipart/related), with their Content-ID. */
  related: Array<ForwardedPart & { cid: string }>;
}

export type AddressHeader = "from" | "replyTo" | "to" | "cc" | "bcc";
const HEADER_NAMES: Record<AddressHeader, string> = {
  from: "from",
  replyTo: "reply-to",
  to: "to",
  cc: "cc",
  bcc: "bcc",
};

/** The values of every header line named `key` (mailparser keeps the raw bytes as latin1 text). */
export function headerValues(lines: ReadonlyArray<{ key: string; line: string }>, key: string): string[] {
  return lines
    .filter((l) => l.key === key)
    .map((l) => {
      const text = Buffer.from(l.line, "latin1").toString("utf8");
      return text.slice(text.indexOf(":") + 1);
    });
}

function addressesOf(lines: ReadonlyArray<{ key: string; line: string }>) {
  const out = { unreadable: {} } as Pick<Original, AddressHeader | "unreadable">;
  for (const [field, key] of Object.entries(HEADER_NAMES) as Array<[AddressHeader, string]>) {
    const found = headerValues(lines, key).map(parseHeaderAddresses);
    out[field] = found.flatMap((f) => f.addresses);
    out.unreadable[field] = found.flatMap((f) => f.bad);
  }
  return out;
}

export async function parseOriginal(raw: Buffer): Promise<Original> {
  const parse = (source: Buffer) => simpleParser(source, { ...MAILPARSER_TEXT, skipTextToHtml: true });
  const m = await parse(raw).catch(async (err) => {
    if (!pastParserBounds(err)) throw err;
    // A header past the parser's bound: the lines a Message is made of, as get_message reads it
    const header = headerOf(raw);
    const again =
      tooManyParts(err) || !header
        ? undefined
        : await parse(Buffer.concat([messageFields(header), raw.subarray(header.length)])).catch(
            () => undefined,
          );
    if (again) return again;
    // A reply, or a forward without attachments, reads a message of too many parts by its first
    // text part and never gets here
    throw new MailError(
      "UNSUPPORTED",
      tooManyParts(err)
        ? "the original has more than 1,000 MIME parts, more than chainmail reads whole to forward its attachments"
        : "the original's header is larger than chainmail reads (1 MB, or some 16,000 lines)",
      tooManyParts(err)
        ? "Forward it with no_attachments, or save_raw_message to inspect it with other tools."
        : "save_raw_message saves the whole message as a file to inspect it with other tools.",
    );
  });
  const refs = m.references === undefined ? [] : Array.isArray(m.references) ? m.references : [m.references];
  const parts = m.attachments.map((a) => ({
    filename: a.filename,
    contentType: a.contentType,
    content: a.content,
    cid: a.cid,
    related: a.related,
  }));
  return {
    messageId: m.messageId,
    inReplyTo: m.inReplyTo,
    references: refs.flatMap((r) => r.split(/\s+/)).filter(Boolean),
    subject: m.subject ?? "",
    ...addressesOf(m.headerLines),
    headerLines: m.headerLines,
    date: m.date,
    // An HTML-only original (with an attachment mailparser gave no text at all) is quoted as text too
    text: parsedBodyText(m, htmlToText),
    html: typeof m.html === "string" ? m.html : undefined,
    attachments: parts
      .filter((p) => !p.related)
      .map(({ filename, contentType, content }) => ({ filename, contentType, content })),
    related: parts
      .filter((p) => p.related && p.cid)
      .map(({ filename, contentType, content, cid }) => ({ filename, contentType, content, cid: cid ?? "" })),
  };
}

export const showAddress = (a: MailAddress) => (a.name ? `${a.name} <${a.address}>` : a.address);

/**
 * The original's Date as the quote shows it, or undefined when it has none (or none that parses).
 * Never the time of building: the quote is a function of the original alone, so the text a person
 * approves in the client (built again when the answer comes back) is the text that is sent.
 */
const quotedDate = (o: Original) =>
  o.date && !Number.isNaN(o.date.getTime()) ? o.date.toUTCString() : undefined;

export function replyQuote(o: Original): Quote {
  const who = o.from.map(showAddress).join(", ") || "someone";
  const date = quotedDate(o);
  return { intro: `${date ? `On ${date}, ` : ""}${who} wrote:`, text: o.text, style: "quote" };
}

export function forwardQuote(o: Original): Quote {
  const date = quotedDate(o);
  const lines = [
    "---------- Forwarded message ---------",
    `From: ${o.from.map(showAddress).join(", ")}`,
    ...(date ? [`Date: ${date}`] : []),
    `Subject: ${o.subject}`,
    `To: ${o.to.map(showAddress).join(", ")}`,
  ];
  if (o.cc.length) lines.push(`Cc: ${o.cc.map(showAddress).join(", ")}`);
  return { intro: lines.join("\n"), text: o.text, style: "forward" };
}

/**
 * The References of a reply to (or forward of) `o`, as RFC 5322 section 3.6.4 builds them: the
 * original's References, or when it has none its In-Reply-To if that names one message, then its
 * Message-ID. A reply to a message from a client that sets only In-Reply-To so keeps the root.
 */
export function threadReferences(o: Original): string[] {
  const parents = o.inReplyTo?.match(/<[^<>]+>/g) ?? [];
  const before = o.references.length ? o.references : parents.length === 1 ? parents : [];
  return o.messageId ? [...before, o.messageId] : before;
}

export const prefixed = (prefix: "Re" | "Fwd", subject: string) =>
  // redos-ok: one of two fixed prefixes, matched at the start only
  new RegExp(`^${prefix === "Re" ? "re" : "(fwd?)"}:`, "i").test(subject.trim())
    ? subject
    : `${prefix}: ${subject}`;
