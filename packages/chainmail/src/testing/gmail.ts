/**
 * A small Gmail stand-in for tests: hoodiecrow-imap 2.1.0 (in memory) with its X-GM-EXT-1 plugin
 * (X-GM-LABELS fetch/store, X-GM-MSGID) plus our plugin below, which adds X-GM-THRID (fetch and
 * search; thread ids from References/In-Reply-To/Message-ID) and an X-GM-RAW search that evaluates
 * the subset of Gmail's syntax compileToGmailRaw writes: words, "phrases", -negation, (groups),
 * {or groups}, from: to: cc: subject: label: in: is: has:attachment. Other operators (dates, sizes,
 * filename:) match everything here, so tests must not rely on them. Labels have no side effects on
 * folders (as the plugin's own notes say): a label change does not copy or remove a message from
 * INBOX, but \Inbox in X-GM-LABELS is what a Gmail-style `in:inbox` search sees.
 */
import { createRequire } from "node:module";
import type { AddressInfo, Socket } from "node:net";

const require = createRequire(import.meta.url);
// hoodiecrow is CommonJS without types; its server object is used through the few fields below.
const hoodiecrow = require("hoodiecrow-imap") as (options: object) => HoodieServer;

interface HoodieMessage {
  raw: string;
  uid: number;
  flags: string[];
  "X-GM-LABELS": string[];
  "X-GM-THRID"?: string;
}
interface HoodieServer {
  server: { address(): AddressInfo | string | null; on(event: "connection", cb: (s: Socket) => void): void };
  listen(port: number, host: string, cb: () => void): void;
  close(cb: () => void): void;
  registerCapability(name: string): void;
  messageHandlers: Array<(connection: unknown, message: HoodieMessage, mailbox: { path: string }) => void>;
  fetchHandlers: Record<string, (connection: unknown, message: HoodieMessage) => unknown>;
  searchHandlers: Record<
    string,
    (connection: unknown, message: HoodieMessage, index: number, value: string) => boolean
  >;
}

export interface GmailServer {
  port: number;
  stop(): Promise<void>;
}

export interface GmailMessage {
  raw: string;
  flags?: string[];
  labels?: string[];
}

const header = (raw: string, name: string): string => {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? "";
  const m = new RegExp(`^${name}:([^\\r\\n]*(?:\\r?\\n[ \\t][^\\r\\n]*)*)`, "im").exec(head);
  return (m?.[1] ?? "").replace(/\r?\n[ \t]+/g, " ").trim();
};

/** Thread roots → X-GM-THRID, so replies share their thread's id as on Gmail. */
function threadPlugin(server: HoodieServer): void {
  // hoodiecrow's X-GM-EXT-1 plugin adds the handlers but never advertises the capability.
  server.registerCapability("X-GM-EXT-1");
  const ids = new Map<string, string>();
  let next = 1_700_000_000_000_000_000n;
  server.messageHandlers.push((_c, message) => {
    // The X-GM-EXT-1 plugin labels a message with its folder's special use; Gmail shows no \All label.
    message["X-GM-LABELS"] = message["X-GM-LABELS"].filter((l) => l !== "\\All");
    if (message["X-GM-THRID"]) return;
    const refs = header(message.raw, "References").match(/<[^>]+>/g) ?? [];
    const root =
      refs[0] ??
      header(message.raw, "In-Reply-To").match(/<[^>]+>/)?.[0] ??
      header(message.raw, "Message-ID");
    const key = root.toLowerCase() || `uid:${message.uid}:${Math.random()}`;
    let id = ids.get(key);
    if (!id) {
      next += 1n;
      id = next.toString();
      ids.set(key, id);
    }
    message["X-GM-THRID"] = id;
  });
  server.fetchHandlers["X-GM-THRID"] = (_c, message) => ({ type: "ATOM", value: message["X-GM-THRID"] });
  server.searchHandlers["X-GM-THRID"] = (_c, message, _i, value) => message["X-GM-THRID"] === String(value);
  // hoodiecrow's parser turns the escaped quotes of a quoted string (\") into a bare backslash, so
  // a backslash here stands for a quote (queries in these tests have no backslash of their own).
  server.searchHandlers["X-GM-RAW"] = (_c, message, _i, value) =>
    gmailRawMatches(String(value).replace(/\\/g, '"'), message);
}

type Node =
  | { k: "and" | "or"; c: Node[] }
  | { k: "not"; c: Node }
  | { k: "term"; field: string | null; value: string };

function parseRaw(q: string): Node {
  let i = 0;
  const ws = () => {
    while (i < q.length && /\s/.test(q[i]!)) i++;
  };
  const value = (): string => {
    if (q[i] === '"') {
      const end = q.indexOf('"', i + 1);
      const v = q.slice(i + 1, end < 0 ? q.length : end);
      i = end < 0 ? q.length : end + 1;
      return v;
    }
    const start = i;
    while (i < q.length && !/[\s(){}]/.test(q[i]!)) i++;
    return q.slice(start, i);
  };
  const unary = (): Node => {
    if (q[i] === "-") {
      i++;
      return { k: "not", c: unary() };
    }
    if (q[i] === "(" || q[i] === "{") {
      const close = q[i] === "(" ? ")" : "}";
      const kind = q[i] === "(" ? "and" : "or";
      i++;
      const c: Node[] = [];
      for (ws(); i < q.length && q[i] !== close; ws()) c.push(unary());
      i++;
      return { k: kind, c };
    }
    const m = /^([a-z0-9_]+):/i.exec(q.slice(i));
    if (m) {
      i += m[0].length;
      return { k: "term", field: m[1]!.toLowerCase(), value: value() };
    }
    return { k: "term", field: null, value: value() };
  };
  const c: Node[] = [];
  for (ws(); i < q.length; ws()) c.push(unary());
  return { k: "and", c };
}

export function gmailRawMatches(q: string, message: HoodieMessage): boolean {
  const labels = message["X-GM-LABELS"].map((l) => l.toLowerCase());
  const has = (hay: string, needle: string) => hay.toLowerCase().includes(needle.toLowerCase());
  const evalNode = (n: Node): boolean => {
    if (n.k === "term") return term(n);
    if (n.k === "not") return !evalNode(n.c);
    return n.k === "and" ? n.c.every(evalNode) : n.c.some(evalNode);
  };
  const term = (n: { field: string | null; value: string }): boolean => {
    const v = n.value;
    switch (n.field) {
      case null:
        return has(message.raw, v);
      case "from":
      case "to":
      case "cc":
      case "subject":
        return has(header(message.raw, n.field), v);
      case "label":
        return labels.includes(v.toLowerCase());
      case "in": {
        // Gmail's in:inbox and in:sent are the \Inbox and \Sent labels (other role words, such
        // as in:trash, are folders here and are not modelled).
        const role: Record<string, string> = { inbox: "\\inbox", sent: "\\sent" };
        return labels.includes(role[v.toLowerCase()] ?? v.toLowerCase());
      }
      case "is": {
        const flags: Record<string, string> = {
          unread: "!\\Seen",
          read: "\\Seen",
          starred: "\\Flagged",
          answered: "\\Answered",
        };
        const flag = flags[v]?.toLowerCase();
        if (!flag) return true;
        // Gmail, like IMAP, compares flags without case; hoodiecrow keeps whatever was stored.
        const has = (f: string) => message.flags.some((x) => x.toLowerCase() === f);
        return flag.startsWith("!") ? !has(flag.slice(1)) : has(flag);
      }
      case "has":
        return /content-disposition:\s*attachment/i.test(message.raw);
      case "rfc822msgid": {
        // Gmail documents the Message-ID without its angle brackets; either form is taken here.
        const bare = (id: string) => id.trim().replace(/^<|>$/g, "").toLowerCase();
        return bare(header(message.raw, "Message-ID")) === bare(v);
      }
      default:
        return true;
    }
  };
  return evalNode(parseRaw(q));
}

/** Starts the server on 127.0.0.1 with a Gmail-like folder tree and one user. */
export async function startGmail(opts: {
  user: string;
  password: string;
  inbox: GmailMessage[];
}): Promise<GmailServer> {
  const toStored = (m: GmailMessage) => ({
    raw: m.raw,
    flags: m.flags ?? [],
    "X-GM-LABELS": m.labels ?? ["\\Inbox"],
  });
  const server = hoodiecrow({
    plugins: ["ID", "ENABLE", "UIDPLUS", "SPECIAL-USE", "MOVE", "IDLE", "X-GM-EXT-1", threadPlugin],
    users: { [opts.user]: { password: opts.password } },
    storage: {
      // On Gmail INBOX is a view of the \Inbox label; searches and tests work in All Mail, which
      // is where every message is (hoodiecrow keeps separate copies per folder, so INBOX stays empty).
      INBOX: {},
      "": {
        separator: "/",
        folders: {
          "[Gmail]": {
            flags: ["\\Noselect"],
            folders: {
              "All Mail": { "special-use": "\\All", messages: opts.inbox.map(toStored) },
              Drafts: { "special-use": "\\Drafts" },
              "Sent Mail": { "special-use": "\\Sent" },
              Spam: { "special-use": "\\Junk" },
              Trash: { "special-use": "\\Trash" },
            },
          },
        },
      },
    },
  });
  const sockets = new Set<Socket>();
  server.server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.server.address() as AddressInfo;
  return {
    port: addr.port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
