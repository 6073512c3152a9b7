/**
 * The bulk header FETCH of a sync, issued on imapflow's own connection (after its login, TLS,
 * compression and EXAMINE) but read by the lean parser of fetch-parser.ts instead of imapflow's
 * tokenizer, which spent about 60% of an initial sync's CPU. While a `RawFetch` is open it owns
 * the connection: the socket (or the inflate stream under COMPRESS) is unpiped from imapflow's
 * response stream and piped back on `close`, with any response that was not ours handed to
 * imapflow then (an EXISTS, an EXPUNGE, a flag change pushed by the server). It must be used
 * inside a mailbox lock, which keeps imapflow from sending anything meanwhile (no IDLE starts
 * under a lock); everything else stays on imapflow.
 */
import type { FetchMessageObject, ImapFlow } from "imapflow";
import type { ImapAttribute } from "imapflow/lib/handler/types.js";
import { decodePath } from "imapflow/lib/tools.js";
import { formatEnvelope, formatStructure } from "./envelope.js";
import { FetchParseError, type FetchResponse, ResponseSplitter, parseResponse } from "./fetch-parser.js";

/** What the cache reads of a fetched message: the fields imapflow's `fetch` fills for the sync's query. */
export type SyncedMessage = Pick<
  FetchMessageObject,
  | "seq"
  | "uid"
  | "flags"
  | "envelope"
  | "size"
  | "bodyStructure"
  | "internalDate"
  | "headers"
  | "labels"
  | "threadId"
  | "modseq"
>;

/** What formatting a message reads of its connection: labels' encoding and the mailbox's estimates. */
export type MessageContext = Pick<ImapFlow, "enabled" | "capabilities" | "mailbox">;

/** The FETCH items of the sync's header query, as imapflow would send them for it. */
export function headerItems(client: ImapFlow, gmail: boolean): string {
  const items = ["UID", "FLAGS", "BODYSTRUCTURE", "ENVELOPE", "INTERNALDATE", "RFC822.SIZE"];
  if (gmail) items.push("X-GM-THRID", "X-GM-LABELS");
  const mailbox = client.mailbox;
  if (client.enabled.has("CONDSTORE") && mailbox && !mailbox.noModseq) items.push("MODSEQ");
  items.push("BODY.PEEK[HEADER.FIELDS (REFERENCES)]");
  return `(${items.join(" ")})`;
}

const str = (a: ImapAttribute): string | undefined => {
  const v = a && !Array.isArray(a) ? a.value : undefined;
  return Buffer.isBuffer(v) ? v.toString() : typeof v === "string" ? v : undefined;
};
/** A list of strings, without NIL and empty entries (imapflow's getStringList). */
const strings = (a: ImapAttribute): string[] =>
  Array.isArray(a) ? a.map(str).filter((s): s is string => !!s) : [];
const uint = (s: string | undefined): number | undefined =>
  s !== undefined && /^\d{1,15}$/.test(s) ? Number(s) : undefined;

/**
 * A parsed FETCH response as imapflow's `fetch` formats it, for the items the sync asks for (no
 * `id`: imapflow hashes one per message with MD5 and the cache never reads it). Updates the
 * mailbox's UIDNEXT and HIGHESTMODSEQ estimates as imapflow does.
 */
export function toMessage(client: MessageContext, r: FetchResponse): SyncedMessage {
  const m: Partial<SyncedMessage> & { seq: number } = { seq: r.seq };
  for (const { key, value } of r.items) {
    switch (key) {
      case "UID":
        m.uid = uint(str(value));
        break;
      case "FLAGS":
        m.flags = new Set(strings(value));
        break;
      case "RFC822.SIZE":
        m.size = uint(str(value)) || 0;
        break;
      case "ENVELOPE":
        if (Array.isArray(value)) m.envelope = formatEnvelope(value);
        break;
      case "BODYSTRUCTURE":
        if (Array.isArray(value)) m.bodyStructure = formatStructure(value);
        break;
      case "INTERNALDATE": {
        const text = str(value);
        const date = new Date(text as string);
        m.internalDate = Number.isNaN(date.getTime()) ? text : date;
        break;
      }
      case "X-GM-THRID":
        m.threadId = str(value);
        break;
      case "X-GM-LABELS":
        // decodePath reads only `enabled` and `capabilities` of the connection
        m.labels = new Set(strings(value).map((l) => decodePath(client as ImapFlow, l)));
        break;
      case "MODSEQ": {
        const first = strings(value)[0];
        if (first !== undefined && /^\d+$/.test(first)) m.modseq = BigInt(first);
        break;
      }
      default:
        if (key.startsWith("BODY[HEADER") || key.startsWith("BODY.PEEK[HEADER")) {
          const v = value && !Array.isArray(value) ? value.value : undefined;
          // imapflow gives `false` for a NIL section (outside its typings); kept the same
          m.headers = Buffer.isBuffer(v) ? v : typeof v === "string" ? Buffer.from(v) : (false as never);
        }
    }
  }
  const mailbox = client.mailbox;
  if (mailbox) {
    if (m.uid && (!mailbox.uidNext || mailbox.uidNext <= m.uid)) mailbox.uidNext = m.uid + 1;
    if (m.modseq && (!mailbox.highestModseq || mailbox.highestModseq < m.modseq))
      mailbox.highestModseq = m.modseq;
  }
  if (m.uid === undefined) throw new FetchParseError(`a FETCH response without a UID (message ${r.seq})`);
  return m as SyncedMessage;
}

/**
 * A FETCH the server answered NO or BAD, shaped as imapflow shapes a refused command (its status,
 * its text without the response code, the code), so callers tell a refusal from a failure alike.
 */
function refusedFetch(status: string, text: string): Error {
  const coded = responseCode(text);
  return Object.assign(new Error(`the IMAP server refused the header FETCH: ${status} ${text}`), {
    responseStatus: status,
    responseText: coded ? coded.rest : text,
    ...(coded ? { serverResponseCode: coded.code } : {}),
  });
}

/**
 * A response text's leading `[CODE ...]` (RFC 3501's resp-text-code) and the text after it. Read
 * by hand: the server's text is not ours, and the regular expression this replaces
 * (`/^\[([^\]\s]+)[^\]]*\]\s*(.*)$/s`) backtracked quadratically on a long line of `[` with no `]`.
 */
export function responseCode(text: string): { code: string; rest: string } | undefined {
  if (!text.startsWith("[")) return undefined;
  const close = text.indexOf("]");
  if (close < 0) return undefined;
  const code = /^[^\s\]]+/.exec(text.slice(1, close))?.[0];
  return code === undefined ? undefined : { code, rest: text.slice(close + 1).trimStart() };
}

/** imapflow's connection internals a RawFetch borrows (not in its typings). */
interface Internals {
  socket?: NodeJS.ReadableStream & { pause(): unknown; resume(): unknown };
  _inflate?: NodeJS.ReadableStream | null;
  writeSocket?: NodeJS.WritableStream & { destroyed?: boolean };
  streamer?: NodeJS.WritableStream & { readableLength?: number; destroyed?: boolean };
  idling?: boolean;
}

let tags = 0;

/** Longest the responses of one socket read are read in one go before the event loop gets a turn. */
const PARSE_SLICE_MS = 2;

interface Pending {
  tag: string;
  /** What each message is kept as until the FETCH completes (the message itself by default). */
  map: (m: SyncedMessage) => unknown;
  out: unknown[];
  resolve: (list: unknown[]) => void;
  reject: (err: Error) => void;
}

export class RawFetch {
  private readonly splitter = new ResponseSplitter();
  private readonly others: Buffer[] = [];
  /** Whole responses received and not yet read, from `next` on. */
  private readonly backlog: Buffer[] = [];
  private next = 0;
  private draining = false;
  private readonly queue: Pending[] = [];
  private failed: Error | null = null;
  private closed = false;
  private readonly onData = (chunk: Buffer) => this.receive(chunk);
  private readonly onEnd = () => this.fail(new Error("the IMAP connection closed during the sync"));

  private constructor(
    private readonly client: ImapFlow,
    private readonly source: NodeJS.ReadableStream,
    private readonly internals: Internals,
    /** Called after each read is handled (the caller's event-loop turn, see slices.ts). */
    private readonly afterRead: () => void,
  ) {
    source.unpipe(internals.streamer);
    source.on("data", this.onData);
    source.on("end", this.onEnd);
    source.on("close", this.onEnd);
    // unpipe stopped the flow; a 'data' listener alone does not restart it then
    source.resume();
  }

  /**
   * Takes the connection over, or null when it is not in a state to be borrowed (imapflow's
   * internals are not as expected, IDLE runs, or imapflow holds unread input): the caller then
   * uses `client.fetch`.
   */
  static open(client: ImapFlow, afterRead: () => void = () => undefined): RawFetch | null {
    // imapflow keeps these on the instance without typing them; see the Internals interface
    const i = client as unknown as Internals;
    const source = i._inflate || i.socket;
    if (!client.usable || !source || !i.writeSocket || !i.streamer || i.idling) return null;
    if (typeof source.unpipe !== "function" || (i.streamer.readableLength ?? 0) > 0) return null;
    // Only a stream that feeds imapflow's parser directly is borrowed (plain, TLS or inflate)
    const pipes = (source as { _readableState?: { pipes?: unknown[] } })._readableState?.pipes;
    if (!pipes?.includes(i.streamer)) return null;
    return new RawFetch(client, source, i, afterRead);
  }

  /**
   * `UID FETCH <set> <items>`; resolves with the messages in the order the server sent them, each
   * passed through `map` as it is read: a FETCH of a thousand messages is answered over some
   * 100 ms, and its messages kept whole until then outlived the young generation (promoted and
   * collected as old garbage: the daemon's heap swung by 100 MB during a first sync of a million)
   * where what `map` keeps of them (the cache's rows) is a fraction of it.
   */
  fetch(uidSet: string, items: string): Promise<SyncedMessage[]>;
  fetch<T>(uidSet: string, items: string, map: (m: SyncedMessage) => T): Promise<T[]>;
  fetch(uidSet: string, items: string, map: (m: SyncedMessage) => unknown = (m) => m): Promise<unknown[]> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new Error("the raw FETCH session is closed"));
    const tag = `CMF${++tags}`;
    return new Promise<unknown[]>((resolve, reject) => {
      this.queue.push({ tag, map, out: [], resolve, reject });
      this.internals.writeSocket?.write(`${tag} UID FETCH ${uidSet} ${items}\r\n`);
    });
  }

  private receive(chunk: Buffer): void {
    if (this.failed) return;
    try {
      for (const response of this.splitter.push(chunk)) this.backlog.push(response);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    if (!this.draining) this.drain();
  }

  /**
   * Reads the responses received so far for at most PARSE_SLICE_MS, then pauses the stream and
   * goes on after a turn of the event loop: one socket read holds some 40 messages, and reading
   * a few of them in one go held the daemon's searches up for several milliseconds.
   */
  private drain(): void {
    this.draining = true;
    const started = performance.now();
    try {
      while (this.next < this.backlog.length && !this.failed && !this.closed) {
        this.handle(this.backlog[this.next++] as Buffer);
        if (this.next < this.backlog.length && performance.now() - started > PARSE_SLICE_MS) {
          this.source.pause();
          setImmediate(() => {
            if (this.closed || this.failed) return;
            this.source.resume();
            this.drain();
          });
          return;
        }
      }
      this.backlog.length = 0;
      this.next = 0;
      this.draining = false;
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    this.afterRead();
  }

  private handle(bytes: Buffer): void {
    const r = parseResponse(bytes);
    const head = this.queue[0];
    if (r.kind === "fetch" && head) {
      // A FETCH without the envelope is the server telling of a flag change: imapflow's to read
      if (r.fetch.items.some((item) => item.key === "ENVELOPE")) {
        head.out.push(head.map(toMessage(this.client, r.fetch)));
        return;
      }
    }
    if (r.kind === "tagged") {
      if (!head || r.tag !== head.tag) throw new FetchParseError(`an unexpected tagged response ${r.tag}`);
      this.queue.shift();
      if (r.status === "OK") head.resolve(head.out);
      // As imapflow does: messages another session expunged are left out, the others are the answer
      else if (r.status === "NO" && r.text.includes("Some of the requested messages no longer exist"))
        head.resolve(head.out);
      else head.reject(refusedFetch(r.status, r.text));
      return;
    }
    // Copied: the view would change under it when the splitter's buffer is reused
    this.others.push(Buffer.from(bytes));
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    for (const p of this.queue.splice(0)) p.reject(err);
    // The stream is somewhere inside a response it could not read: nothing can follow on it
    if (!this.closed) this.client.close();
  }

  /**
   * Gives the connection back to imapflow once every FETCH sent has completed (or failed): the
   * responses that were not ours go to its parser first, then the socket is piped to it again.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.source.off("data", this.onData);
    this.source.off("end", this.onEnd);
    this.source.off("close", this.onEnd);
    const streamer = this.internals.streamer;
    if (this.failed || !streamer || streamer.destroyed) return;
    if (this.queue.length) {
      // A FETCH still in flight would answer into imapflow's parser under a tag it does not know
      this.failed = new Error("the raw FETCH session closed with a FETCH in flight");
      for (const p of this.queue.splice(0)) p.reject(this.failed);
      this.client.close();
      return;
    }
    // What came after our last tagged response is imapflow's, in order
    for (const b of this.others.splice(0)) streamer.write(b);
    for (const b of this.backlog.splice(this.next)) streamer.write(Buffer.from(b));
    const rest = this.splitter.pending;
    if (rest.length) streamer.write(Buffer.from(rest));
    this.source.pipe(streamer);
  }
}
