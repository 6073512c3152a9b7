/**
 * A mailbox-sized corpus for benchmarks: message `i` of `n`, deterministic, with the mix of real
 * mail rather than small text messages: about 60% plain text, 15% text + HTML alternatives, 10%
 * HTML-only (some with an attachment), 15% with attachments whose sizes follow a long tail (most
 * tens of KiB, a few MiB), 10% RFC 2047 encoded subjects and names, a third replies in threads
 * (In-Reply-To, References), 30% unread and 10% flagged. The average is about 16 KiB a message
 * (1.6 GiB at 100,000). Words come from a Zipf-like vocabulary with the benchmark's query words
 * at realistic ranks, so each query word is in a few percent of messages.
 */
import { buildMessage, type MessageSpec } from "./corpus.js";

const SYL = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "so", "di", "an", "el", "or", "us"];
export const MAILBOX_VOCAB: string[] = Array.from({ length: 20000 }, (_, i) => {
  let w = "";
  let x = i + 7;
  do {
    w += SYL[x % SYL.length];
    x = Math.floor(x / SYL.length);
  } while (x > 0);
  return w;
});
for (const [rank, w] of [
  [100, "meeting"],
  [150, "report"],
  [200, "invoice"],
  [300, "project"],
  [500, "budget"],
  [1000, "deadline"],
] as const)
  MAILBOX_VOCAB[rank] = w;

const UNICODE = ["Grüße", "Köln", "naïve", "日本語", "café", "Straße", "Ελλάδα", "привет"];
const SENDERS = 400;

/** The address of sender `i` (0-399), for `from:` queries. */
export const mailboxSender = (i: number) =>
  `${MAILBOX_VOCAB[i + 10]}${i}@${MAILBOX_VOCAB[(i % 40) + 900]}.example`;

export interface MailboxMessage {
  raw: string;
  date: Date;
  /** IMAP flags: \Seen for 70%, \Flagged for 10%. */
  flags: string[];
  kind: "text" | "alternative" | "html-only" | "attachment" | "html-attachment";
  encodedSubject: boolean;
}

/** A random source from a seed (the same message for the same `i` and seed). */
function random(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
}

// One shared block of pseudo-random bytes; attachments are slices of it (generating 1.6 GiB of
// random data would dominate the benchmark)
const BLOB = Buffer.from(Array.from({ length: 1 << 20 }, (_, i) => (i * 2654435761) >>> 24));
const blob = (bytes: number, offset: number) => {
  const out = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += BLOB.length - (offset % 4096))
    BLOB.copy(out, at, offset % 4096, Math.min(BLOB.length, (offset % 4096) + bytes - at));
  return out;
};

export function mailboxMessage(
  i: number,
  n: number,
  options: { now?: Date; seed?: number } = {},
): MailboxMessage {
  const rnd = random((options.seed ?? 42) * 1_000_003 + i);
  const word = () => MAILBOX_VOCAB[Math.floor(MAILBOX_VOCAB.length * rnd() ** 2)] as string;
  const words = (k: number) => Array.from({ length: k }, word).join(" ");
  const now = (options.now ?? new Date("2025-01-01T00:00:00Z")).getTime();
  const span = 3 * 365 * 86_400_000;
  const date = new Date(now - span + Math.floor((span * i) / Math.max(1, n)));
  const sender = Math.floor(rnd() * SENDERS);
  const encodedSubject = rnd() < 0.1;
  const name = `${MAILBOX_VOCAB[sender + 10]} ${MAILBOX_VOCAB[sender + 500]}`;
  let subject = words(3 + Math.floor(rnd() * 5));
  if (encodedSubject) subject = `${UNICODE[Math.floor(rnd() * UNICODE.length)]} ${subject}`;
  const paragraphs = Array.from({ length: 2 + Math.floor(rnd() * 6) }, () =>
    words(20 + Math.floor(rnd() * 60)),
  );
  const text = `${paragraphs.join("\n\n")}\n`;
  const spec: MessageSpec = {
    from: `${encodedSubject ? `${name} ${UNICODE[sender % UNICODE.length]}` : name} <${mailboxSender(sender)}>`,
    to: ["me@bench.example"],
    subject,
    date,
    messageId: `<m${i}@bench.example>`,
  };
  // A third are replies to one of the few messages before them
  if (i > 3 && rnd() < 0.33) {
    const parent = i - 1 - Math.floor(rnd() * 3);
    spec.inReplyTo = `<m${parent}@bench.example>`;
    spec.references = [`<m${Math.max(0, parent - 1)}@bench.example>`, spec.inReplyTo];
  }
  const r = rnd();
  let kind: MailboxMessage["kind"];
  const html = `<html><body>${paragraphs.map((p) => `<p>${p}</p>`).join("")}</body></html>`;
  const attachment = () => {
    // Long tail: 5-100 KiB (mean ~32 KiB), and 1 in 100 of 1-2 MiB
    const bytes =
      rnd() < 0.01 ? (1 << 20) + Math.floor(rnd() * (1 << 20)) : Math.floor(5_000 * Math.exp(rnd() * 3));
    const pdf = rnd() < 0.6;
    return {
      filename: `${word()}-${i}.${pdf ? "pdf" : "png"}`,
      contentType: pdf ? "application/pdf" : "image/png",
      content: blob(bytes, i * 7919),
    };
  };
  if (r < 0.6) {
    kind = "text";
    spec.text = text;
  } else if (r < 0.75) {
    kind = "alternative";
    spec.text = text;
    spec.html = html;
  } else if (r < 0.83) {
    kind = "html-only";
    spec.html = html;
  } else if (r < 0.85) {
    kind = "html-attachment";
    spec.html = html;
    spec.attachments = [attachment()];
  } else {
    kind = "attachment";
    spec.text = text;
    spec.attachments = rnd() < 0.8 ? [attachment()] : [attachment(), attachment()];
  }
  const flags = [...(rnd() < 0.7 ? ["\\Seen"] : []), ...(rnd() < 0.1 ? ["\\Flagged"] : [])];
  return { raw: buildMessage(spec), date, flags, kind, encodedSubject };
}
