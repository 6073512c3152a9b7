/**
 * Builds a message's MIME bytes once (nodemailer's MailComposer): the same Buffer goes to SMTP and
 * to the Sent copy. Bcc is written only into drafts (kept until sent); a sent message never
 * carries it, since every recipient would read it.
 */
import { randomBytes } from "node:crypto";
import MailComposer from "nodemailer/lib/mail-composer";
import type { MailAddress } from "./addresses.js";
import type { BodyParts } from "./body.js";
import type { LoadedFile } from "./files.js";

export interface InlineImage extends LoadedFile {
  cid: string;
}

export interface ForwardedPart {
  filename: string | undefined;
  contentType: string;
  content: Buffer;
}

export interface MimeSpec {
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  subject: string;
  body: BodyParts;
  attachments: Array<LoadedFile | ForwardedPart>;
  inline: InlineImage[];
  headers: Array<[string, string]>;
  messageId: string;
  date: Date;
  inReplyTo?: string | undefined;
  references?: string[] | undefined;
  /** A draft keeps its Bcc header; a message being sent does not. */
  keepBcc: boolean;
}

/** A new Message-ID in angle brackets, on the sender's domain. */
export function newMessageId(fromAddress: string): string {
  const domain = fromAddress.split("@")[1] ?? "localhost";
  return `<${Date.now().toString(36)}.${randomBytes(12).toString("hex")}@${domain}>`;
}

export const newCid = () => `${randomBytes(10).toString("hex")}@chainmail`;

const addr = (list: MailAddress[]) => list.map((a) => ({ name: a.name, address: a.address }));

export async function buildMime(spec: MimeSpec): Promise<Buffer> {
  const composer = new MailComposer({
    from: { name: spec.from.name, address: spec.from.address },
    to: addr(spec.to),
    cc: addr(spec.cc),
    bcc: addr(spec.bcc),
    subject: spec.subject,
    text: spec.body.text,
    ...(spec.body.html !== undefined ? { html: spec.body.html } : {}),
    messageId: spec.messageId,
    date: spec.date,
    ...(spec.inReplyTo ? { inReplyTo: spec.inReplyTo } : {}),
    ...(spec.references?.length ? { references: spec.references } : {}),
    headers: spec.headers.map(([key, value]) => ({ key, value })),
    attachments: [
      ...spec.attachments.map((a) => ({
        filename: a.filename ?? "attachment",
        content: a.content,
        ...("contentType" in a ? { contentType: a.contentType } : {}),
      })),
      ...spec.inline.map((i) => ({
        filename: i.filename,
        content: i.content,
        cid: i.cid,
        contentDisposition: "inline",
      })),
    ],
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const node = composer.compile();
  node.keepBcc = spec.keepBcc;
  return node.build();
}
