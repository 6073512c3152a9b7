/**
 * A saved draft made ready to send as it is: the headers a sent message must not carry removed (Bcc
 * and Resent-Bcc, which every recipient would read; Return-Path, which the receiving server sets; the
 * old Date), a fresh Date, and a Message-ID kept (or added when the draft has none). The body is not
 * touched, so what goes out is the draft the owner saw.
 *
 * Headers are found by name the way mailparser finds them (mailsplit's header parser, names trimmed
 * and lowercased: `Bcc : x` is Bcc), never by a pattern over the raw text; the message is split and
 * joined again by mailsplit, so the header block it edits is the one every reader sees. The envelope
 * and the From are read by the send path's address model (compose/addresses.ts).
 */
import { createHash } from "node:crypto";
import { Joiner, Splitter } from "@zone-eu/mailsplit";
import { uniqueAddresses } from "./addresses.js";
import { newMessageId } from "./mime.js";
import { headerValues, parseOriginal } from "./original.js";
import { ownAddresses } from "./policy.js";

/** Header names (lowercase) a draft loses when it is sent. */
export const STRIPPED_ON_SEND = ["bcc", "resent-bcc", "return-path", "date"] as const;

/** The message with its top-level header block changed by `edit`, split and joined by mailsplit. */
async function rewriteRootHeaders(
  raw: Buffer,
  edit: (headers: InstanceType<typeof import("@zone-eu/mailsplit").Headers>) => void,
): Promise<Buffer> {
  const splitter = new Splitter();
  const joiner = new Joiner();
  // mailsplit's declarations type only its "data" events; both are Transform streams.
  const split = splitter as unknown as NodeJS.ReadWriteStream;
  const join = joiner as unknown as NodeJS.ReadWriteStream;
  splitter.on("data", (data: { type: string; root?: boolean; headers?: unknown }) => {
    if (data.type === "node" && data.root && data.headers)
      edit(data.headers as InstanceType<typeof import("@zone-eu/mailsplit").Headers>);
  });
  // Piped by hand, with no import of node:stream: the bundle's bare "stream" import is resolved as
  // a relative path by vitest's module runner in the packages that test chainmail's built dist.
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    split.once("error", reject);
    join.once("error", reject);
    join.on("data", (chunk: Buffer) => chunks.push(chunk));
    join.once("end", () => resolve());
    split.pipe(join);
    split.end(raw);
  });
  return Buffer.concat(chunks);
}

/** Header names (lowercase) a prepared message (`chainmail send-raw`) loses: only what would leak. */
export const STRIPPED_FROM_RAW = ["bcc", "resent-bcc"] as const;

/**
 * `asPrepared`: the message is an operator's prepared file (send-raw), sent as it is but for its Bcc
 * and Resent-Bcc; its own Date is kept (one is added only when it has none). A draft gets a fresh one.
 */
export async function draftForSending(
  raw: Buffer,
  account: Parameters<typeof ownAddresses>[0],
  opts: { asPrepared?: boolean } = {},
) {
  const parsed = await parseOriginal(raw);
  const messageId = parsed.messageId ?? newMessageId(account.address);
  const hasDate = headerValues(parsed.headerLines, "date").length > 0;
  const out = await rewriteRootHeaders(raw, (headers) => {
    for (const name of opts.asPrepared ? STRIPPED_FROM_RAW : STRIPPED_ON_SEND) headers.remove(name);
    if (!parsed.messageId) headers.add("Message-ID", messageId);
    if (!opts.asPrepared || !hasDate) headers.add("Date", new Date().toUTCString().replace("GMT", "+0000"));
  });
  // The From must be exactly one of the account's own addresses: a stranger's message moved into
  // Drafts is not sent under the stranger's name.
  const own = ownAddresses(account);
  const fromText = headerValues(parsed.headerLines, "from")
    .map((v) => v.trim())
    .join(", ");
  const fromOk =
    parsed.from.length === 1 &&
    parsed.unreadable.from.length === 0 &&
    own.includes(parsed.from[0]!.address.toLowerCase());
  return {
    raw: out,
    /**
     * What a hold saves to Drafts for a prepared message: the file as given (Bcc kept, so the owner
     * can send it later), with the Message-ID this send reported when the file had none.
     */
    held:
      opts.asPrepared && !parsed.messageId
        ? await rewriteRootHeaders(raw, (headers) => headers.add("Message-ID", messageId))
        : raw,
    messageId,
    envelope: uniqueAddresses([...parsed.to, ...parsed.cc, ...parsed.bcc]).map((a) => a.address),
    unreadable: [...parsed.unreadable.to, ...parsed.unreadable.cc, ...parsed.unreadable.bcc],
    foreignFrom: fromOk ? undefined : fromText || "(no From header)",
    sha256: createHash("sha256").update(raw).digest("hex"),
    attachmentBytes: [...parsed.attachments, ...parsed.related].reduce((n, a) => n + a.content.length, 0),
    /** What a judgement shows the person (compose/deliver.ts). */
    preview: {
      subject: parsed.subject,
      replyTo:
        headerValues(parsed.headerLines, "reply-to")
          .map((v) => v.trim())
          .join(", ") || undefined,
      text: parsed.text,
      html: parsed.html,
      files: [...parsed.attachments, ...parsed.related],
    },
  };
}
