import { createHash } from "node:crypto";
import { convert } from "html-to-text";
import { type AddressObject, simpleParser } from "mailparser";
import type { ImportItem } from "./types.js";

function addresses(a: AddressObject | AddressObject[] | undefined): string | null {
  if (!a) return null;
  return (Array.isArray(a) ? a.map((x) => x.text).join(", ") : a.text) || null;
}

/** One RFC 822 message as an email note: subject as title, the text body (or the HTML's text). */
export async function emailItem(raw: Buffer | string): Promise<ImportItem> {
  const mail = await simpleParser(raw);
  // mailparser leaves .text empty for an HTML-only body with attachments: derive it from the HTML.
  const text =
    mail.text?.trim() ||
    (typeof mail.html === "string"
      ? // maxDepth: html-to-text recurses, and 10,000 nested elements overflowed the stack
        convert(mail.html, { wordwrap: false, limits: { maxDepth: 1000 } }).trim()
      : "");
  const messageId = mail.messageId ?? null;
  const key = messageId
    ? `email:${messageId}`
    : `email:sha256:${createHash("sha256").update(raw).digest("hex")}`;
  const sentMs = mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.getTime() : null;
  return {
    key,
    title: (mail.subject ?? "(no subject)").slice(0, 500),
    body: text,
    source: "email",
    sourceUrl: null,
    folder: null,
    createdMs: sentMs,
    record: { kind: "email", messageId, from: addresses(mail.from), to: addresses(mail.to), sentMs },
  };
}

/** Splits an mbox file into raw messages (mboxrd: `>From ` lines are unescaped). */
export function splitMbox(text: string): string[] {
  const out: string[] = [];
  const lines = text.split(/\r?\n/);
  let current: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("From ") && (i === 0 || lines[i - 1] === "" || current === undefined)) {
      if (current) out.push(current.join("\n"));
      current = [];
      continue;
    }
    current?.push(/^>+From /.test(line) ? line.slice(1) : line);
  }
  if (current?.some((l) => l !== "")) out.push(current.join("\n"));
  return out;
}
