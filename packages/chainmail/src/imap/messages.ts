/**
 * Reading messages: every folder is opened read-only (EXAMINE) and every body is fetched with
 * BODY.PEEK, so reading never sets \Seen.
 */
import type { FetchMessageObject, ImapFlow, MessageEnvelopeObject, MessageStructureObject } from "imapflow";
import { type AddressObject, type ParsedMail, simpleParser } from "mailparser";
import { detailOf, MailError } from "../errors.js";
import { attachmentsFromStructure } from "../query/structure.js";
import { encodeRef, type MessageRef, staleRef } from "../refs.js";
import { canonicalThreadKey, firstMessageId, parseReferences } from "../thread-key.js";
import { headerIso } from "../header-date.js";
import { envelopeAddress, envelopeAddresses } from "../cache/store.js";
import { classifyFlags } from "./flags.js";
import { htmlToText, MAILPARSER_TEXT, parsedBodyText, shapeBody } from "./body.js";
import { messageFields, PARSER_MAX_PARTS, partsIn, pastParserBounds, tooManyParts } from "./parser-bounds.js";
import { displayName } from "./folders.js";
import { MESSAGE_GONE_HINT } from "./refusal.js";
import { downloadPartBytes, textFromPartBytes, textPart, textPartRef } from "../cache/body.js";
import { joinedTextParts, readJoinedText, readsPastFirstPart } from "../cache/joined-text.js";

export interface Address {
  name: string;
  address: string;
}

export interface AttachmentInfo {
  part: string;
  filename: string;
  content_type: string;
  /** Encoded size in bytes, as the server reports it; the saved file is the decoded content. */
  size: number;
  inline: boolean;
}

export interface Message {
  ref: string;
  account: string;
  folder: string;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  thread_id: string;
  date: string | null;
  from: Address[];
  to: Address[];
  cc: Address[];
  bcc: Address[];
  reply_to: Address[];
  subject: string;
  flags: string[];
  keywords: string[];
  labels?: string[];
  size: number;
  body: string;
  body_truncated: boolean;
  attachments: AttachmentInfo[];
  source: "server" | "cache";
}

/** Short system flag names and keywords, sorted; case-insensitive as IMAP flags are (see flags.ts). */
export function splitFlags(flags: Iterable<string> | undefined): { flags: string[]; keywords: string[] } {
  const { system, keywords } = classifyFlags(flags);
  return { flags: [...system].sort(), keywords: keywords.sort() };
}

/** The server's words in imapflow's error for a refused command, as a detail line. */
function serverReply(err: unknown): string | undefined {
  const text = (err as { responseText?: unknown }).responseText;
  return typeof text === "string" && text !== "" ? `server: ${text}` : undefined;
}

/** Opens the ref's folder read-only and checks its UIDVALIDITY. */
export async function examine(client: ImapFlow, ref: MessageRef): Promise<void> {
  const cur = client.mailbox;
  if (!cur || cur.path !== ref.folder || !cur.readOnly) {
    try {
      await client.mailboxOpen(ref.folder, { readOnly: true });
    } catch (err) {
      if (client.usable)
        throw new MailError(
          "NOT_FOUND",
          "the server would not open the ref's folder, which no longer exists or cannot be read; the folder and the server's reply are in detail",
          undefined,
          detailOf(`folder: ${ref.folder}`, serverReply(err)),
        );
      throw err;
    }
  }
  if (Number((client.mailbox || undefined)?.uidValidity) !== ref.uidValidity) throw staleRef(ref);
}

/** Opens the ref's folder read-write (for changes) and checks its UIDVALIDITY. */
export async function select(
  client: ImapFlow,
  account: string,
  folder: string,
  uidValidity: number,
): Promise<void> {
  const cur = client.mailbox;
  if (!cur || cur.path !== folder || cur.readOnly) {
    try {
      await client.mailboxOpen(folder);
    } catch (err) {
      if (client.usable)
        throw new MailError(
          "NOT_FOUND",
          "the server would not open the folder, which no longer exists or cannot be changed; the folder and the server's reply are in detail",
          undefined,
          detailOf(`folder: ${folder}`, serverReply(err)),
        );
      throw err;
    }
  }
  if (Number((client.mailbox || undefined)?.uidValidity) !== uidValidity) {
    throw staleRef({ account, folder, uidValidity, uid: 1 });
  }
}

function addresses(a: AddressObject | AddressObject[] | undefined): Address[] {
  const list = Array.isArray(a) ? a : a ? [a] : [];
  const out: Address[] = [];
  const walk = (v: { name?: string; address?: string; group?: unknown[] }) => {
    if (Array.isArray(v.group)) for (const g of v.group) walk(g as typeof v);
    else out.push({ name: v.name ?? "", address: v.address ?? "" });
  };
  for (const o of list) for (const v of o.value) walk(v);
  return out;
}

/** A message's address fields and subject from ENVELOPE (Reply-To equal to From is none: storedReplyTo). */
function envelopeFields(env: MessageEnvelopeObject) {
  const from = envelopeAddresses(env.from);
  const replyTo = envelopeAddresses(env.replyTo);
  return {
    from,
    to: envelopeAddresses(env.to),
    cc: envelopeAddresses(env.cc),
    bcc: envelopeAddresses(env.bcc),
    reply_to: JSON.stringify(replyTo) === JSON.stringify(from) ? [] : replyTo,
    subject: env.subject ?? "",
  };
}

/** The same from mailparser, for a message fetched without ENVELOPE. */
function parsedFields(parsed: ParsedMail) {
  return {
    from: addresses(parsed.from),
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    bcc: addresses(parsed.bcc),
    reply_to: addresses(parsed.replyTo),
    subject: parsed.subject ?? "",
  };
}

/**
 * The attachment parts, by the same rule the query module's has:attachment uses, so search and
 * get_message agree. `size` is the part's encoded size as the server reports it.
 */
export function attachmentsOf(structure: MessageStructureObject | undefined): AttachmentInfo[] {
  return attachmentsFromStructure(structure).map((a) => ({
    part: a.part,
    filename: a.filename ?? `part-${a.part}`,
    content_type: a.content_type,
    size: a.size,
    inline: a.disposition === "inline",
  }));
}

export interface ReadOptions {
  full: boolean;
  bodyLimit: number;
  /** Tests: the size past which a message is read by its header and text part (WHOLE_READ_BYTES). */
  wholeReadBytes?: number;
}

/**
 * A message up to this size is fetched whole, with its flags and structure, in one FETCH. Of a
 * larger one that FETCH takes only its first bytes (its header is in them), and its body text then
 * comes from its one text part alone (`textPartRef`, as the cache's backfill reads it: one
 * text/plain, with or without an HTML alternative, or one text/html beside attachments or alone),
 * so reading a message with a 500 MB attachment costs a few MB, not the attachment twice over; a
 * large message of another shape (several text parts, an embedded message, another charset, one
 * text/plain part alone) is fetched whole as before, up to MAX_WHOLE_MESSAGE_BYTES.
 */
export const WHOLE_READ_BYTES = 1024 * 1024;
/** The most of a large message's text part read for its body; a longer one is cut (and says so). */
const TEXT_PART_BYTES = 8 * 1024 * 1024;

/** The least of a message's first bytes fetched: its header is in them (else it is read whole). */
const HEAD_BYTES = 256 * 1024;

/** The header block of a message's first bytes, up to and with the blank line ending it, or null. */
export function headerOf(first: Buffer): Buffer | null {
  const end = first.indexOf("\r\n\r\n");
  return end < 0 ? null : first.subarray(0, end + 4);
}

/** A message's whole source, fetched on its own (what the first FETCH gave, if that fails). */
async function wholeSource(client: ImapFlow, m: FetchMessageObject): Promise<Buffer | undefined> {
  const whole = await client.fetchOne(String(m.uid), { uid: true, source: true }, { uid: true });
  return whole ? whole.source : m.source;
}

/**
 * The most of one message get_message (and a reply's quote) reads whole. A larger message whose
 * shape is read whole (several text parts, an embedded message, flowed text, a single text part
 * alone: see textPartRef) is read by its header and text parts instead (readByTextParts), its body
 * marked cut when the whole read would give more: a 500 MB message of that shape was held in the
 * daemon whole, twice over once parsed.
 */
const MAX_WHOLE_MESSAGE_BYTES = 32 * 1024 * 1024;

/**
 * The source to parse and, for a large message read by its parts, its body text and whether it was
 * cut: see WHOLE_READ_BYTES. An HTML body that is the whole message is read by its part too, up to
 * TEXT_PART_BYTES like any text part (it was read whole, of any size).
 */
async function largeMessage(
  client: ImapFlow,
  m: FetchMessageObject,
): Promise<{ source: Buffer | undefined; text?: string; cut?: boolean }> {
  const ref = textPartRef(m.bodyStructure);
  const header = m.source ? headerOf(m.source) : null;
  if (ref && header) {
    const bytes = await downloadPartBytes(client, m.uid, ref.part, TEXT_PART_BYTES);
    return {
      source: header,
      text: partText(bytes, ref.html),
      cut: bytes.length >= TEXT_PART_BYTES,
    };
  }
  if ((m.size ?? 0) > MAX_WHOLE_MESSAGE_BYTES) {
    const parts = await readByTextParts(client, m);
    if (parts) return parts;
  }
  return { source: await wholeSource(client, m) };
}

export async function parseFetched(
  account: string,
  folderPath: string,
  uidValidity: number,
  msg: FetchMessageObject,
  opts: ReadOptions,
  delimiter?: string,
  /** The body text when it was read from the message's text part (a large message), and if it was cut. */
  fromPart?: { text: string; cut: boolean },
): Promise<Message> {
  const parsed = await simpleParser(msg.source ?? Buffer.alloc(0), MAILPARSER_TEXT);
  const text = fromPart ? fromPart.text : parsedBodyText(parsed, htmlToText);
  const shaped = shapeBody(text, opts.full, opts.bodyLimit);
  const body = shaped.body;
  const truncated = shaped.truncated || (fromPart?.cut ?? false);
  // The ids as the cache and the server's search read them (ENVELOPE, the raw References line, one
  // parser: ../thread-key.ts), not mailparser's reading: a sender's malformed ids (no brackets,
  // junk between them) gave the same message two ids and two thread keys by where it was read from
  const env = msg.envelope;
  const header = msg.source ? (headerOf(msg.source) ?? msg.source) : undefined;
  const references = parseReferences(header);
  const messageId = env ? (env.messageId ?? null) : (parsed.messageId ?? null);
  const rawInReplyTo = env ? env.inReplyTo : parsed.inReplyTo;
  const inReplyTo = firstMessageId(rawInReplyTo);
  const ref = encodeRef({ account, folder: folderPath, uidValidity, uid: msg.uid });
  const { flags, keywords } = splitFlags(msg.flags);
  return {
    ref,
    account,
    folder: displayName(folderPath, delimiter),
    message_id: messageId,
    in_reply_to: inReplyTo,
    references,
    thread_id: canonicalThreadKey({
      gmThreadId: msg.threadId,
      references,
      inReplyTo: rawInReplyTo,
      messageId,
      date: env ? env.date : parsed.date,
      fromAddress: env ? envelopeAddress(env.from?.[0]?.address) : addresses(parsed.from)[0]?.address,
      subject: env ? env.subject : parsed.subject,
    }),
    // (ENVELOPE's, as the cache and search rows read it)
    date: headerIso(env ? env.date : parsed.date),
    // The header fields as ENVELOPE gives them, which the cache and search rows read: one message
    // reads one way wherever it is read from (mailparser's reading of a malformed header differed)
    ...(env ? envelopeFields(env) : parsedFields(parsed)),
    flags,
    keywords,
    ...(msg.labels ? { labels: [...msg.labels].sort() } : {}),
    size: msg.size ?? msg.source?.length ?? 0,
    body,
    body_truncated: truncated,
    attachments: attachmentsOf(msg.bodyStructure),
    source: "server",
  };
}

/** Fetches messages of one folder by UID; missing UIDs are absent from the map. */
export async function fetchMessages(
  client: ImapFlow,
  account: string,
  folder: string,
  uidValidity: number,
  uids: number[],
  opts: ReadOptions,
  labels: boolean,
  /**
   * Where a message that cannot be read (see unreadable) goes, so the others still are; without it
   * the first such message fails the call with its clear reason.
   */
  failures?: Map<number, MailError>,
): Promise<Map<number, Message>> {
  await examine(client, { account, folder, uidValidity, uid: uids[0] ?? 1 });
  const wholeRead = opts.wholeReadBytes ?? WHOLE_READ_BYTES;
  const partialBytes = Math.max(wholeRead, HEAD_BYTES);
  const out = new Map<number, Message>();
  let fetched: FetchMessageObject[];
  try {
    fetched = await fetchNoting(client, uids, {
      uid: true,
      flags: true,
      size: true,
      bodyStructure: true,
      // (the ids and thread key as the cache reads them: parseFetched)
      envelope: true,
      // The first bytes only: a larger message is read by its header and text part below
      source: { maxLength: partialBytes },
      ...(labels ? { labels: true, threadId: true } : {}),
    });
  } catch (err) {
    throw fetchRefused(client, account, err);
  }
  const delimiter = client.mailbox ? client.mailbox.delimiter : "/";
  for (const m of fetched) {
    if (!uids.includes(m.uid)) continue;
    try {
      let fromPart: { text: string; cut: boolean } | undefined;
      const size = m.size ?? 0;
      if (size > wholeRead) {
        const large = await largeMessage(client, m);
        m.source = large.source;
        if (large.text !== undefined) fromPart = { text: large.text, cut: large.cut ?? false };
      } else if (!m.source || m.source.length < Math.min(size, partialBytes)) {
        // A server that answered the partial FETCH short (or counts the size otherwise): read whole
        m.source = await wholeSource(client, m);
      }
      const parse = () => parseFetched(account, folder, uidValidity, m, opts, delimiter, fromPart);
      out.set(
        m.uid,
        await parse().catch(async (err) => {
          // Past the parser's bounds: read by its header (of a header past them, only the lines a
          // Message is made of) and its text parts
          const first = pastParserBounds(err) ? await readByTextParts(client, m) : undefined;
          if (!first) throw err;
          m.source = tooManyParts(err) ? first.source : messageFields(first.source);
          fromPart = first;
          return parse();
        }),
      );
    } catch (err) {
      const why = unreadable(err);
      if (!why) throw err;
      if (!failures) throw why;
      failures.set(m.uid, why);
    }
  }
  return out;
}

/** A FETCH the server answered NO or BAD: its text goes in detail, never in message. Anything else is rethrown. */
export function fetchRefused(client: ImapFlow, account: string, err: unknown): unknown {
  const e = err as { responseStatus?: string; responseText?: string };
  if (!client.usable || (e?.responseStatus !== "NO" && e?.responseStatus !== "BAD")) return err;
  return new MailError(
    "UNSUPPORTED",
    `the IMAP server of account ${account} refused to FETCH the message${e.responseText ? " (its reply is in detail)" : ""}`,
    "The server would not hand out this message now. Try again later, or check the message in another mail client.",
    detailOf(e.responseText && `server: ${e.responseText}`),
  );
}

/**
 * A message past the parser's bounds (pastParserBounds) is read by its text parts instead
 * (readByTextParts, and messageFields of a header past them); where that fails too, a clear per-ref
 * error, not INTERNAL.
 */
function unreadable(err: unknown): MailError | null {
  if (!pastParserBounds(err)) return null;
  return new MailError(
    "UNSUPPORTED",
    tooManyParts(err)
      ? "the message has more than 1,000 MIME parts and no text part chainmail could read alone"
      : "the message's header is larger than chainmail reads (1 MB, or some 16,000 lines)",
    "save_raw_message saves the whole message as a file to inspect it with other tools.",
  );
}

/**
 * A message read by its header (from the first bytes already fetched) and its text parts, from
 * BODYSTRUCTURE: one past the parser's bounds (parser-bounds.ts), or past MAX_WHOLE_MESSAGE_BYTES
 * in a shape read whole. Text in several parts is read part by part and joined as the whole read
 * joins it (../cache/joined-text.ts); a shape that cannot be joined gives its first inline text
 * part (textPart: text/plain, else text/html), `cut` where the whole read would give more.
 * Undefined when it has no such part or no header in those bytes.
 */
async function readByTextParts(
  client: ImapFlow,
  m: FetchMessageObject,
): Promise<{ source: Buffer; text: string; cut: boolean } | undefined> {
  const tp = textPart(m.bodyStructure);
  const header = m.source ? headerOf(m.source) : null;
  if (!tp || !header) return undefined;
  const pieces = joinedTextParts(m.bodyStructure);
  const joined = pieces && (await readJoinedText(client, m.uid, pieces, TEXT_PART_BYTES));
  if (joined) return { source: header, text: joined.text, cut: joined.cut };
  const bytes = await downloadPartBytes(client, m.uid, tp.part, TEXT_PART_BYTES);
  return {
    source: header,
    text: partText(bytes, tp.html),
    cut: bytes.length >= TEXT_PART_BYTES || readsPastFirstPart(m.bodyStructure),
  };
}

/**
 * The body text of a downloaded text part (decoded to UTF-8), as the whole read gives it: its lines
 * ended by LF, as mailparser ends them, and an HTML part through the same htmlToText (parseFetched).
 */
function partText(bytes: Buffer, html: boolean): string {
  return html
    ? htmlToText(bytes.toString("utf8").replace(/\r\n/g, "\n"))
    : textFromPartBytes(bytes, { html: false }, Number.POSITIVE_INFINITY);
}

/**
 * UID FETCH of `uids`, asking the server for news first when some did not come back: a server tells a
 * connection of new messages only when it looks (NOOP, IDLE; Dovecot not on a UID FETCH), so a
 * message that arrived after this connection opened the folder (a new-mail event's ref, another
 * client's APPEND) was answered as gone.
 */
async function fetchNoting(
  client: ImapFlow,
  uids: number[],
  query: Parameters<ImapFlow["fetchAll"]>[1],
): Promise<FetchMessageObject[]> {
  const fetched = await client.fetchAll(uids, query, { uid: true });
  const got = new Set(fetched.map((m) => m.uid));
  const missing = uids.filter((uid) => !got.has(uid));
  if (missing.length === 0) return fetched;
  await client.noop();
  return [...fetched, ...(await client.fetchAll(missing, query, { uid: true }))];
}

/** One message by UID (`fetchNoting`), or false when the folder has none. */
async function fetchByUid(
  client: ImapFlow,
  ref: MessageRef,
  query: Parameters<ImapFlow["fetchAll"]>[1],
): Promise<FetchMessageObject | false> {
  return (await fetchNoting(client, [ref.uid], query))[0] ?? false;
}

/**
 * Downloads a whole message as the server holds it, handing each chunk to `sink` as it arrives (a
 * file: save_raw_message), never the whole message in memory. Returns its size.
 */
export async function downloadRaw(
  client: ImapFlow,
  ref: MessageRef,
  sink: (chunk: Buffer) => void,
): Promise<number> {
  await examine(client, ref);
  const m = await fetchByUid(client, ref, { uid: true });
  if (!m)
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
  const dl = await client.download(String(ref.uid), undefined, { uid: true });
  let size = 0;
  for await (const c of dl.content ?? []) {
    const chunk = c as Buffer;
    sink(chunk);
    size += chunk.length;
  }
  // (an empty message is no message: RFC 5322 asks for at least its header)
  if (size === 0)
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
  return size;
}

export async function fetchRaw(client: ImapFlow, ref: MessageRef): Promise<Buffer> {
  await examine(client, ref);
  const m = await fetchByUid(client, ref, { uid: true, source: true });
  // fetchOne answers false (not undefined) for a UID that is gone; `m?.source` would not type-check
  const source = m ? m.source : undefined;
  if (!source)
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
  return source;
}

/**
 * What a reply, or a forward without the original's attachments, quotes: the message whole up to
 * WHOLE_READ_BYTES; a larger one by its header and its one text part where that is its shape (as
 * get_message reads it, largeMessage), so replying to a mail with a 500 MB attachment does not
 * read the attachment (it did, and mailparser then held it again). `text` is set when the body
 * came from that part: `source` is then the header alone.
 */
export async function fetchForQuote(
  client: ImapFlow,
  ref: MessageRef,
): Promise<{ source: Buffer; text?: string }> {
  await examine(client, ref);
  const m = await fetchByUid(client, ref, {
    uid: true,
    size: true,
    bodyStructure: true,
    source: { maxLength: WHOLE_READ_BYTES },
  });
  const size = m ? (m.size ?? 0) : 0;
  // More parts than the parser takes: by its header and text parts, as get_message reads it
  const byTextParts =
    m && partsIn(m.bodyStructure) > PARSER_MAX_PARTS ? await readByTextParts(client, m) : undefined;
  const read = !m
    ? undefined
    : (byTextParts ??
      (size > WHOLE_READ_BYTES
        ? await largeMessage(client, m)
        : // A server that answered the partial FETCH short: read whole
          { source: m.source && m.source.length >= size ? m.source : await wholeSource(client, m) }));
  if (!read?.source)
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
  return read.text === undefined ? { source: read.source } : { source: read.source, text: read.text };
}

/**
 * The least a message's attachments take decoded, from its BODYSTRUCTURE alone (nothing of the
 * message is read): the parts with an attachment disposition outside multipart/related (those a
 * forward carries); base64 as 3/4 of its characters, taking its lines to be at least 40 characters
 * long (mail programs write 76, some 64: RFC 2045 sets no least length, so a part written in
 * shorter lines could be counted a little over its size); binary as it is sent, 7bit and 8bit as
 * half that (line ends); quoted-printable not at all (soft line breaks leave no lower bound). A forward refuses an
 * original whose attachments alone pass its bound before reading it (it read a 500 MB attachment
 * first, then refused).
 */
export async function attachedBytesAtLeast(client: ImapFlow, ref: MessageRef): Promise<number> {
  await examine(client, ref);
  const m = await fetchByUid(client, ref, { uid: true, bodyStructure: true });
  let least = 0;
  const walk = (n: MessageStructureObject, related: boolean) => {
    const type = (n.type ?? "").toLowerCase();
    for (const c of n.childNodes ?? []) walk(c, related || type === "multipart/related");
    if (n.childNodes?.length || related || (n.disposition ?? "").toLowerCase() !== "attachment") return;
    const size = n.size ?? 0;
    const encoding = (n.encoding ?? "").toLowerCase();
    // base64: at least 40 of every 42 bytes are characters, 4 characters are 3 bytes, less padding
    if (encoding === "base64") least += Math.max(0, Math.floor((size * 5) / 7) - 2);
    else if (encoding === "binary") least += size;
    // (a text attachment's line ends may be read as LF alone: at worst half its bytes)
    else if (["", "7bit", "8bit"].includes(encoding)) least += Math.floor(size / 2);
  };
  // (fetchOne answers false for a UID that is gone: the read that follows says so)
  const structure = m ? m.bodyStructure : undefined;
  if (structure) walk(structure, false);
  return least;
}

/**
 * Downloads one attachment part, handing each decoded chunk to `sink` as it arrives (a file: an
 * attachment of hundreds of MB never sits in the daemon's memory whole). Returns its size and what
 * the message says of it.
 */
export async function downloadPart(
  client: ImapFlow,
  ref: MessageRef,
  part: string,
  sink: (chunk: Buffer) => void,
): Promise<{ size: number; filename: string | undefined; contentType: string }> {
  if (!/^[0-9]+(\.[0-9]+)*$/.test(part) || part.length > 64) {
    throw new MailError(
      "INVALID_ARGUMENT",
      `part ${JSON.stringify(part)} is not a part number such as 2 or 1.2`,
    );
  }
  await examine(client, ref);
  const m = await fetchByUid(client, ref, { uid: true, bodyStructure: true });
  if (!m)
    throw new MailError(
      "NOT_FOUND",
      "the message is no longer in its folder on the server",
      MESSAGE_GONE_HINT,
    );
  const info = attachmentsOf(m.bodyStructure).find((a) => a.part === part);
  if (!info) {
    throw new MailError(
      "NOT_FOUND",
      `the message has no attachment part ${part}`,
      "get_message lists the attachment parts.",
    );
  }
  // decodeText false: the part's own bytes, only its transfer encoding removed. By default the
  // library turns a text part without Content-Disposition into UTF-8 and unwraps format=flowed,
  // and a part named on Content-Type alone is an attachment: a Latin-1 CSV was saved re-encoded.
  const dl = await client.download(String(ref.uid), part, { uid: true, decodeText: false });
  if (!dl.content) throw new MailError("NOT_FOUND", `the message has no part ${part}`);
  let size = 0;
  for await (const c of dl.content) {
    const chunk = c as Buffer;
    sink(chunk);
    size += chunk.length;
  }
  return { size, filename: info.filename, contentType: info.content_type };
}
