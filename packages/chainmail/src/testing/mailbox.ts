/**
 * A mailbox-sized corpus for benchmarks: message `i` of `n`, deterministic for a seed (the same bytes
 * on every run and in any order of generation), with the mix of real mail rather than small text
 * messages: about 60% plain text, 15% text + HTML alternatives, 10% HTML-only (some with an
 * attachment), 15% with attachments whose sizes follow a long tail (most tens of KiB, a few MiB),
 * 10% RFC 2047 encoded subjects and names, a third replies in threads (In-Reply-To, References,
 * "Re: " and the thread's subject), 30% unread and 10% flagged. The average is about 16 KiB a
 * message (1.6 GiB at 100,000).
 *
 * Who and what follow the skew of a real archive (Zipf-like, so a few take most of the mail):
 *   - senders: a pool of 200,000 (services first: notifications, newsletters, then people), rank r
 *     with weight 1/(r + 3): the top sender has about 3% of the mail (3,000 at 100,000, 30,000 at
 *     1,000,000), the tenth about 0.7%, and most senders a handful; 4% of the mail is the owner's own
 *     (From: OWNER_ADDRESS);
 *   - recipients: the owner (most mail), mailing lists (a fifth of the mail, 300 lists, weight
 *     1/(r + 1)), and Cc'd people drawn like the senders;
 *   - words: a vocabulary of 20,000 with weight 1/(r + 1) (Zipf's law), for subjects and bodies
 *     alike; the benchmark's query words sit at fixed ranks (`update` is the second commonest word,
 *     in about a fifth of the subjects), and `RARE_WORD` is in one message in 20,000.
 * The mail spans 3 years up to 200,000 messages and 15 years from 1,000,000 (a fifteen-year archive).
 * Bump MAILBOX_GENERATOR_VERSION whenever the mail it makes changes (the scale run's prepared data
 * says which version made it).
 */
import { buildMessage, type MessageSpec } from "./corpus.js";

/** The version of the mail this file makes: a change of the mail must change it. */
export const MAILBOX_GENERATOR_VERSION = 2;

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
/** The benchmark's query words, at their rank in the vocabulary (0 the commonest). */
export const MAILBOX_WORD_RANKS = {
  update: 1,
  meeting: 100,
  report: 150,
  invoice: 200,
  project: 300,
  budget: 500,
  deadline: 1000,
} as const;
for (const [w, rank] of Object.entries(MAILBOX_WORD_RANKS)) MAILBOX_VOCAB[rank] = w;
/** A word in one message in 20,000 (and in at least one message of any mailbox). */
export const RARE_WORD = "quokkabench";
/** The mailbox owner's address: the To of most mail and the From of 4%. */
export const OWNER_ADDRESS = "me@bench.example";

const UNICODE = ["Grüße", "Köln", "naïve", "日本語", "café", "Straße", "Ελλάδα", "привет"];
const SENDER_POOL = 200_000;
const LISTS = 300;
const SERVICES = [
  "notifications",
  "noreply",
  "news",
  "billing",
  "alerts",
  "updates",
  "team",
  "support",
  "digest",
  "calendar",
];
const PROVIDERS = ["mailhost.example", "postbox.example", "webmail.example", "inbox.example"];

/**
 * Draws ranks 0..k-1 with weight 1/(r + q)^s, by a binary search of the cumulative weights (built
 * once per distribution).
 */
function zipf(k: number, q: number, s = 1) {
  const cdf = new Float64Array(k);
  let sum = 0;
  for (let r = 0; r < k; r++) {
    sum += 1 / (r + q) ** s;
    cdf[r] = sum;
  }
  for (let r = 0; r < k; r++) (cdf as Float64Array)[r] = (cdf[r] as number) / sum;
  return {
    /** The rank for a uniform draw u in [0, 1). */
    rank(u: number): number {
      let lo = 0;
      let hi = k - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((cdf[mid] as number) > u) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    },
    /** The share of draws that give rank r. */
    share: (r: number) => (cdf[r] as number) - (r > 0 ? (cdf[r - 1] as number) : 0),
  };
}

const SENDERS = zipf(SENDER_POOL, 3);
const LIST_RANKS = zipf(LISTS, 1);
const WORDS = zipf(MAILBOX_VOCAB.length, 1);

/** The share of the mail sender rank `r` sends (before the owner's own 4%), for tests and planning. */
export const mailboxSenderShare = (r: number) => 0.96 * SENDERS.share(r);

const word = (r: number) => MAILBOX_VOCAB[r % MAILBOX_VOCAB.length] as string;

/** The display name and address of sender rank `r` (0 sends the most mail). */
export function mailboxSenderIdentity(r: number): { name: string; address: string } {
  if (r < 40) {
    // Services: a few addresses at companies' domains send much of an archive's mail
    const company = word(900 + r);
    const local = SERVICES[r % SERVICES.length] as string;
    return { name: `${company} ${local}`, address: `${local}@${company}.example` };
  }
  const first = word(2000 + (r % 997));
  const last = word(5000 + (Math.floor(r / 997) % 4999));
  // People at the big providers (rank in the local part keeps addresses unique) or at a company
  const domain =
    r % 3 === 0 ? `${word(900 + (r % 700))}.example` : (PROVIDERS[r % PROVIDERS.length] as string);
  return { name: `${first} ${last}`, address: `${first}.${last}${r}@${domain}` };
}

/** The address of sender rank `i` (0 sends the most mail), for `from:` queries. */
export const mailboxSender = (i: number) => mailboxSenderIdentity(i).address;

/** The address of mailing list rank `i` (0 gets the most mail), for `to:` queries. */
export const mailboxList = (i: number) => `${word(3000 + i)}-list@lists.example`;

/** How many years the mailbox spans: 3 up to 200,000 messages, then growing to 15 at 1,000,000. */
export const mailboxYears = (n: number) => Math.min(15, Math.max(3, (15 * n) / 1_000_000));

export interface MailboxMessage {
  raw: string;
  date: Date;
  /** IMAP flags: \Seen for 70%, \Flagged for 10%. */
  flags: string[];
  kind: "text" | "alternative" | "html-only" | "attachment" | "html-attachment";
  encodedSubject: boolean;
  /** Who sent it: the sender's rank, or -1 for the owner. */
  sender: number;
  /** The mailing list it went to (rank), or -1. */
  list: number;
  /** The first message of its thread (itself when it starts one). */
  threadRoot: number;
  /** What `raw` was built from (headers, text, HTML, attachments). */
  spec: MessageSpec;
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

// Independent streams per message (so the thread structure and a subject can be re-derived for
// another message without generating it)
const stream = (seed: number, i: number, salt: number) =>
  random(Math.imul(seed, 1_000_003) + Math.imul(i, 2_654_435_761 >>> 0) + salt);

/** Whether message `i` replies, and to which earlier message. */
function parentOf(i: number, seed: number): number | null {
  if (i <= 3) return null;
  const r = stream(seed, i, 0x7a3d);
  r();
  if (r() >= 0.33) return null;
  return i - 1 - Math.floor(r() * 3);
}

/** The subject a thread started by message `i` carries, and whether it is RFC 2047 encoded. */
function rootSubject(i: number, seed: number): { subject: string; encoded: boolean } {
  const r = stream(seed, i, 0x51b3);
  r();
  const words = Array.from({ length: 3 + Math.floor(r() * 5) }, () => word(WORDS.rank(r())));
  const encoded = r() < 0.1;
  const subject = words.join(" ");
  return encoded
    ? { subject: `${UNICODE[Math.floor(r() * UNICODE.length)]} ${subject}`, encoded }
    : { subject, encoded };
}

export function mailboxMessage(
  i: number,
  n: number,
  options: { now?: Date; seed?: number } = {},
): MailboxMessage {
  const seed = options.seed ?? 42;
  const rnd = stream(seed, i, 0);
  rnd();
  const words = (k: number) => Array.from({ length: k }, () => word(WORDS.rank(rnd()))).join(" ");
  const now = (options.now ?? new Date("2025-01-01T00:00:00Z")).getTime();
  const span = Math.round(mailboxYears(n) * 365 * 86_400_000);
  const date = new Date(now - span + Math.floor((span * i) / Math.max(1, n)));

  // Threads: a third reply to one of the few messages before them, under the thread's subject
  const parent = parentOf(i, seed);
  let root = i;
  for (let p = parent; p !== null; p = parentOf(p, seed)) root = p;
  const base = rootSubject(root, seed);
  const subject = parent === null ? base.subject : `Re: ${base.subject}`;
  const encodedSubject = base.encoded;

  const own = rnd() < 0.04;
  const sender = own ? -1 : SENDERS.rank(rnd());
  const id = own ? { name: "Bench Owner", address: OWNER_ADDRESS } : mailboxSenderIdentity(sender);
  const name = encodedSubject ? `${id.name} ${UNICODE[(sender + 8) % UNICODE.length]}` : id.name;
  let to = [OWNER_ADDRESS];
  let list = -1;
  const cc: string[] = [];
  if (own) to = [mailboxSenderIdentity(SENDERS.rank(rnd())).address];
  else if (rnd() < 0.2) {
    list = LIST_RANKS.rank(rnd());
    to = [mailboxList(list)];
  } else if (rnd() < 0.15)
    for (let k = 1 + Math.floor(rnd() * 2); k > 0; k--) {
      const p = mailboxSenderIdentity(SENDERS.rank(rnd()));
      cc.push(`${p.name} <${p.address}>`);
    }
  const rare = i % 20_000 === Math.floor(n / 3) % 20_000;
  const paragraphs = Array.from({ length: 2 + Math.floor(rnd() * 6) }, () =>
    words(20 + Math.floor(rnd() * 60)),
  );
  if (rare) paragraphs.push(`${words(5)} ${RARE_WORD} ${words(5)}`);
  const text = `${paragraphs.join("\n\n")}\n`;
  const spec: MessageSpec = {
    from: `${name} <${id.address}>`,
    to,
    ...(cc.length ? { cc } : {}),
    subject,
    date,
    messageId: `<m${i}@bench.example>`,
    boundaryKey: `m${i}`,
  };
  if (parent !== null) {
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
      filename: `${word(WORDS.rank(rnd()))}-${i}.${pdf ? "pdf" : "png"}`,
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
  return { raw: buildMessage(spec), date, flags, kind, encodedSubject, sender, list, threadRoot: root, spec };
}
