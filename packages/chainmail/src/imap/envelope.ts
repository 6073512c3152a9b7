/**
 * ENVELOPE and BODYSTRUCTURE formatting for the lean header FETCH: the same objects imapflow's
 * `parseEnvelope` and `parseBodystructure` build from the same token tree, rule for rule, but
 * without running libmime's five regular expressions over every string that holds no encoded word
 * (nearly all of them): decoding a string without `=?` gives it back unchanged. Strings that do
 * hold one, and parameters in RFC 2231 form, go through imapflow's own decoding.
 */
import type { MessageAddressObject, MessageEnvelopeObject, MessageStructureObject } from "imapflow";
import type { ImapAttribute, ImapAttributeList } from "imapflow/lib/handler/types.js";
import { getStructuredParams } from "imapflow/lib/tools.js";

type Node = ImapAttribute | undefined;

/** imapflow's getStrValue: a token's text (a literal's bytes as UTF-8), false for NIL. */
function strValue(obj: Node): string | false | undefined {
  if (!obj) return false;
  const v = (obj as { value?: unknown }).value;
  if (typeof v === "string") return v;
  if (Buffer.isBuffer(v)) return v.toString();
  return v as undefined;
}

/** A token's value tested for truth as imapflow tests `entry.value` (an empty Buffer is true). */
const hasValue = (obj: Node) => !!obj && !!(obj as { value?: unknown }).value;

/** libmime's decodeWords; only strings with an encoded word (or its join marker's NUL) need it. */
export function decodeWords(value: unknown): string {
  const s = (value || "").toString();
  if (!s.includes("=?") && !s.includes("\0")) return s;
  // getStructuredParams decodes each value with libmime.decodeWords and nothing else for a key
  // without `*` that is not `filename`
  return (
    getStructuredParams([
      { type: "ATOM", value: "v" },
      { type: "STRING", value: s },
    ]) as { v: string }
  ).v;
}

/** imapflow's decodeText: decoded, then without the quotes some servers leave around a name. */
function decodeText(value: unknown): string {
  const v = decodeWords(value);
  return v.length > 2 && v.at(0) === '"' && v.at(-1) === '"' ? v.slice(1, -1) : v;
}

function addresses(list: ImapAttributeList): MessageAddressObject[] {
  const out: MessageAddressObject[] = [];
  for (const addr of list) {
    if (!addr) continue;
    const e = (Array.isArray(addr) ? addr : []) as Node[];
    const name = decodeText(strValue(e[0]));
    const mailbox = strValue(e[2]) || "";
    const host = strValue(e[3]) || "";
    // A NIL host marks group syntax: the group's name is a display name, not an address
    const a = host
      ? { name, address: `${mailbox}@${host}` }
      : { name: name || (mailbox && decodeText(mailbox)), address: "" };
    if (a.name || a.address) out.push(a);
  }
  return out;
}

/** The envelope of an ENVELOPE list, as imapflow's parseEnvelope gives it. */
export function formatEnvelope(entry: ImapAttributeList): MessageEnvelopeObject {
  const env: MessageEnvelopeObject = {};
  const e = entry as Node[];
  if (hasValue(e[0])) {
    const text = strValue(e[0]) as string;
    const date = new Date(text);
    // imapflow keeps the text of a date it cannot read (outside its typings)
    env.date = Number.isNaN(date.getTime()) ? (text as unknown as Date) : date;
  }
  if (hasValue(e[1])) env.subject = decodeWords(strValue(e[1]));
  const list = (i: number) => {
    const l = e[i];
    return Array.isArray(l) && l.length ? addresses(l) : undefined;
  };
  const from = list(2);
  if (from) env.from = from;
  const sender = list(3);
  if (sender) env.sender = sender;
  const replyTo = list(4);
  if (replyTo) env.replyTo = replyTo;
  const to = list(5);
  if (to) env.to = to;
  const cc = list(6);
  if (cc) env.cc = cc;
  const bcc = list(7);
  if (bcc) env.bcc = bcc;
  if (hasValue(e[8])) env.inReplyTo = (strValue(e[8]) || "").toString().trim();
  if (hasValue(e[9])) env.messageId = (strValue(e[9]) || "").toString().trim();
  return env;
}

const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const tokenText = (n: Node) => ((n && (n as { value?: unknown }).value) || "").toString();

/** A parameter list as getStructuredParams gives it; plain lists are built here directly. */
function params(arr: ImapAttribute): Record<string, string> {
  const list = ([] as Node[]).concat((arr as Node[]) || []);
  const out: Record<string, string> = {};
  for (let j = 0; j < list.length; j += 2) {
    const key = tokenText(list[j]).toLowerCase();
    const value = tokenText(list[j + 1]);
    if (
      key.includes("*") ||
      UNSAFE_KEYS.has(key) ||
      value.includes("=?") ||
      value.includes("\0") ||
      // a plain filename in RFC 2231 form (charset'language'value), which imapflow re-reads
      (key === "filename" && value.includes("'"))
    )
      return getStructuredParams(arr as ImapAttributeList) as Record<string, string>;
    if (j + 1 < list.length) out[key] = value;
  }
  return out;
}

/** The structure of a BODYSTRUCTURE list, as imapflow's parseBodystructure gives it. */
export function formatStructure(entry: ImapAttributeList): MessageStructureObject {
  return walk(entry, []);
}

function walk(node: Node[], path: number[]): MessageStructureObject {
  const cur = {} as MessageStructureObject;
  let i = 0;
  let part = 0;
  if (path.length) cur.part = path.join(".");
  if (Array.isArray(node[0])) {
    cur.childNodes = [];
    while (Array.isArray(node[i])) {
      cur.childNodes.push(walk(node[i] as Node[], path.concat(++part)));
      i++;
    }
    cur.type = `multipart/${tokenText(node[i++]).toLowerCase()}`;
    if (i < node.length) {
      if (node[i]) cur.parameters = params(node[i] as ImapAttribute);
      i++;
    }
  } else {
    cur.type = [tokenText(node[i++]).toLowerCase(), tokenText(node[i++]).toLowerCase()].join("/");
    if (node[i]) cur.parameters = params(node[i] as ImapAttribute);
    i++;
    if (node[i]) cur.id = tokenText(node[i]);
    i++;
    if (node[i]) cur.description = tokenText(node[i]);
    i++;
    if (node[i]) cur.encoding = tokenText(node[i]).toLowerCase();
    i++;
    if (node[i]) cur.size = Number((node[i] as { value?: unknown }).value || 0) || 0;
    i++;
    if (cur.type === "message/rfc822") {
      if (node[i]) cur.envelope = formatEnvelope(([] as Node[]).concat(node[i]) as ImapAttributeList);
      i++;
      if (node[i]) cur.childNodes = [walk(node[i] as Node[], path)];
      i++;
      if (node[i]) cur.lineCount = Number((node[i] as { value?: unknown }).value || 0) || 0;
      i++;
    }
    if (/^text\//.test(cur.type)) {
      // Some servers leave out a text part's line count: then the disposition comes early
      if (!(node.length === 11 && Array.isArray(node[i + 1]) && !Array.isArray(node[i + 2]))) {
        if (node[i]) cur.lineCount = Number((node[i] as { value?: unknown }).value || 0) || 0;
        i++;
      }
    }
    if (i < node.length) {
      if (node[i]) cur.md5 = tokenText(node[i]).toLowerCase();
      i++;
    }
  }
  if (i < node.length) {
    const disposition = node[i];
    if (Array.isArray(disposition) && disposition.length) {
      cur.disposition = tokenText(disposition[0]).toLowerCase();
      if (Array.isArray(disposition[1])) cur.dispositionParameters = params(disposition[1]);
    }
    i++;
  }
  if (i < node.length) {
    if (node[i]) cur.language = ([] as Node[]).concat(node[i]).map((v) => tokenText(v).toLowerCase());
    i++;
  }
  if (i < node.length) {
    if (node[i]) cur.location = tokenText(node[i]);
  }
  return cur;
}
