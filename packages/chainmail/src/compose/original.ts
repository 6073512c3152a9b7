/** The message a reply or forward starts from, parsed once from its raw bytes. */
import { type AddressObject, simpleParser } from "mailparser";
import type { MailAddress } from "./addresses.js";
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
  date: Date | undefined;
  text: string;
  html: string | undefined;
  attachments: ForwardedPart[];
  /** Parts the HTML shows inline (multipart/related), with their Content-ID. */
  related: Array<ForwardedPart & { cid: string }>;
}

const list = (v: AddressObject | AddressObject[] | undefined): MailAddress[] =>
  (Array.isArray(v) ? v : v ? [v] : []).flatMap((o) =>
    o.value.filter((a) => a.address).map((a) => ({ name: a.name ?? "", address: a.address ?? "" })),
  );

export async function parseOriginal(raw: Buffer): Promise<Original> {
  const m = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
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
    from: list(m.from),
    replyTo: list(m.replyTo),
    to: list(m.to),
    cc: list(m.cc),
    bcc: list(m.bcc),
    date: m.date,
    text: m.text ?? "",
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

export function replyQuote(o: Original): Quote {
  const who = o.from.map(showAddress).join(", ") || "someone";
  return { intro: `On ${(o.date ?? new Date()).toUTCString()}, ${who} wrote:`, text: o.text, style: "quote" };
}

export function forwardQuote(o: Original): Quote {
  const lines = [
    "---------- Forwarded message ---------",
    `From: ${o.from.map(showAddress).join(", ")}`,
    `Date: ${(o.date ?? new Date()).toUTCString()}`,
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
  new RegExp(`^${prefix === "Re" ? "re" : "(fwd?)"}:`, "i").test(subject.trim())
    ? subject
    : `${prefix}: ${subject}`;
