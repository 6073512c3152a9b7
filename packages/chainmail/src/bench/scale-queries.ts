// The scale run's twelve queries (issue 34), each with its notmuch translation, over the generated
// mailbox (src/testing/mailbox.ts): the people and words with the most mail, date windows and
// combinations, the same in the Dovecot run (scale-bench.ts) and the cache-only one (scale-plans.ts).
import {
  MAILBOX_VOCAB,
  OWNER_ADDRESS,
  RARE_WORD,
  mailboxList,
  mailboxSender,
  mailboxSenderIdentity,
  mailboxYears,
} from "../testing/mailbox.js";

export interface ScaleQuery {
  /** What the row is called in the table. */
  what: string;
  query: string;
  /** The same in notmuch's syntax. */
  notmuch: string;
  /**
   * Whether notmuch's count means the same as chainmail's: notmuch's `from:`/`to:` and date ranges
   * read the headers, chainmail's date terms the arrival time (the same in this mail) and its `in:`
   * the folder (notmuch's `inbox` tag: every message here).
   */
  sameCount: boolean;
  /**
   * The notmuch query whose count is compared when `notmuch` (the one timed) counts other things:
   * a bare word in notmuch also matches attachment file names (`invoice-4780.png`), where
   * chainmail's words are the subject, the addresses and the body text (src/query/README.md).
   */
  notmuchCount?: string;
}

/** In notmuch's syntax, a word where chainmail's bare words look: subject, addresses, body text. */
const wordWhereChainmailLooks = (w: string) => `body:${w} or subject:${w} or from:${w} or to:${w}`;

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const slash = (ms: number) => iso(ms).replaceAll("-", "/");
const DAY = 86_400_000;

/**
 * The queries for an `n`-message mailbox whose mail ends at `now` (the generator's `now`); `today`
 * is when they run (`newer_than:` counts back from it).
 */
export function scaleQueries(n: number, now: Date, today = new Date()): ScaleQuery[] {
  const top = mailboxSender(0);
  const second = mailboxSender(1);
  // A word of the top person's name (rank 40 is the first person; a name word many people share)
  const nameWord = mailboxSenderIdentity(40).name.split(" ")[0] as string;
  const span = Math.round(mailboxYears(n) * 365 * DAY);
  const start = now.getTime() - span;
  // A month in the middle of the mailbox, and its last year for the sender with a date
  const mid = start + Math.floor(span / 2);
  const winFrom = mid - (mid % DAY);
  const winTo = winFrom + 30 * DAY;
  const lastYear = now.getTime() - 365 * DAY;
  // newer_than: counts from today; the mail ends on `now`: the window is 30 days of mail
  const age = Math.max(0, Math.round((today.getTime() - now.getTime()) / DAY));
  const recent = now.getTime() - 30 * DAY;
  const body = MAILBOX_VOCAB[200] as string;
  return [
    { what: "sender (top, full address)", query: `from:${top}`, notmuch: `from:${top}`, sameCount: true },
    { what: "sender (a name word)", query: `from:${nameWord}`, notmuch: `from:${nameWord}`, sameCount: true },
    {
      what: "recipient (top list)",
      query: `to:${mailboxList(0)}`,
      notmuch: `to:${mailboxList(0)}`,
      sameCount: true,
    },
    {
      what: "recipient (the owner)",
      query: `to:${OWNER_ADDRESS}`,
      notmuch: `to:${OWNER_ADDRESS}`,
      sameCount: true,
    },
    { what: "subject word (commonest)", query: "subject:update", notmuch: "subject:update", sameCount: true },
    {
      what: "body word",
      query: body,
      notmuch: body,
      sameCount: true,
      notmuchCount: wordWhereChainmailLooks(body),
    },
    {
      what: "date window (30 days)",
      query: `after:${slash(winFrom)} before:${slash(winTo)}`,
      notmuch: `date:${iso(winFrom)}..${iso(winTo - DAY)}`,
      sameCount: true,
    },
    {
      what: "newer_than (30 days)",
      query: `newer_than:${30 + age}d`,
      notmuch: `date:${iso(recent)}..`,
      sameCount: false,
    },
    {
      what: "sender + date",
      query: `from:${top} after:${slash(lastYear)}`,
      notmuch: `from:${top} and date:${iso(lastYear)}..`,
      sameCount: true,
    },
    {
      what: "has:attachment + sender",
      query: `has:attachment from:${second}`,
      notmuch: `tag:attachment and from:${second}`,
      sameCount: true,
    },
    {
      what: "is:unread + in:inbox",
      query: "is:unread in:inbox",
      notmuch: "tag:unread and tag:inbox",
      sameCount: true,
    },
    {
      what: "rare word",
      query: RARE_WORD,
      notmuch: RARE_WORD,
      sameCount: true,
      notmuchCount: wordWhereChainmailLooks(RARE_WORD),
    },
  ];
}
