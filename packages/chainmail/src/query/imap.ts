import type { SearchObject } from "imapflow";
import { ALL, type LeafNode, leaves, NONE, type QueryNode, mapLeaves } from "./ast.js";
import { type FolderInfo, bindQuery, folderInScope } from "./analyze.js";
import { QueryCompileError } from "./errors.js";
import { ageCutoffMs, dayStartMs } from "./time.js";

export interface ImapPlan {
  /** The SEARCH to send; it matches a superset of the query when `exact` is false. */
  search: SearchObject;
  /**
   * False when some term has no IMAP SEARCH key (has:attachment, filename:, an in: term without
   * a folder to decide it): those terms were widened to "match" in the search, and the
   * candidates must be filtered (see imapSearchFolder, which does it with BODYSTRUCTURE).
   */
  exact: boolean;
  /** The query after binding account/folder, which the post-filter evaluates. */
  bound: QueryNode;
}

/** Why a mail server cannot answer item: (work item links live in the daemon, not on the server). */
export const ITEM_NEEDS_CACHE = "item: searches need the cache, so the mail server cannot answer them";

/** IMAP keywords are atoms; a label that is not one can never be set on plain IMAP. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const KEYWORD_ATOM = /^[^\s(){%*"\\\]\u0000-\u001f\u007f]+$/;

/** Leaves that plain IMAP SEARCH cannot express. */
export const imapUnsupported = (l: LeafNode) =>
  l.kind === "has_attachment" || l.kind === "filename" || l.kind === "in" || l.kind === "account";

/** The search object of one supported leaf. */
export function leafSearch(l: LeafNode, now: Date): SearchObject | "none" {
  switch (l.kind) {
    case "text":
      // Words match subject, addresses and body, as in the cache (not TEXT: it also sees Received etc.)
      return {
        or: [
          { subject: l.value },
          { from: l.value },
          { to: l.value },
          { cc: l.value },
          { bcc: l.value },
          { body: l.value },
        ],
      };
    case "address":
      return { [l.field]: l.value };
    case "subject":
      return { subject: l.value };
    case "msgid":
      // HEADER matches a substring; with its angle brackets the ID matches that message only.
      return { header: { "message-id": l.value } };
    case "label":
      return KEYWORD_ATOM.test(l.value) ? { keyword: l.value } : "none";
    case "is":
      return l.flag === "unread" ? { seen: false } : l.flag === "read" ? { seen: true } : { [l.flag]: true };
    case "size":
      return l.op === "larger" ? { larger: l.bytes } : { smaller: l.bytes };
    case "date":
      return l.op === "after"
        ? { since: new Date(dayStartMs(l.date)) }
        : { before: new Date(dayStartMs(l.date)) };
    case "age": {
      const cutoff = new Date(ageCutoffMs(now, l.amount, l.unit));
      return l.op === "newer" ? { since: cutoff } : { before: cutoff };
    }
    default:
      throw new QueryCompileError(`${l.kind} has no IMAP SEARCH key`);
  }
}

/** AND of search objects: keys merge while they do not clash; clashing parts nest as groups. */
function andObjects(list: SearchObject[]): SearchObject {
  if (list.length === 0) return { all: true };
  const merged: Record<string, unknown> = {};
  const rest: SearchObject[] = [];
  for (const o of list) {
    if (Object.keys(o).some((k) => k in merged)) rest.push(o);
    else Object.assign(merged, o);
  }
  if (rest.length === 0) return merged as SearchObject;
  // (merged) AND (rest...) as `OR (x)` one-element group and `NOT NOT (y)`, which imapflow
  // emits as parenthesised operands
  return { or: [merged as SearchObject], not: { not: andObjects(rest) } };
}

/**
 * Compiles a query for IMAP SEARCH in one folder of one account. Returns null when nothing in
 * that folder can match (an account:/in: term rules it out, or it is Trash/Junk outside an in:).
 */
export function compileToImap(
  ast: QueryNode,
  now: Date,
  scope: { folder?: FolderInfo; account?: string } = {},
): ImapPlan | null {
  if (leaves(ast).some((l) => l.kind === "item")) throw new QueryCompileError(ITEM_NEEDS_CACHE);
  if (scope.folder && !folderInScope(ast, scope.folder)) return null;
  const bound = bindQuery(ast, { account: scope.account, folder: scope.folder });
  if (bound.kind === "none") return null;
  let exact = true;
  const relaxed = mapLeaves(bound, (leaf, negated) => {
    if (imapUnsupported(leaf)) {
      exact = false;
      return negated ? NONE : ALL;
    }
    return leaf;
  });
  const toSearch = (n: QueryNode): SearchObject | "none" => {
    switch (n.kind) {
      case "all":
        return { all: true };
      case "none":
        return "none";
      case "and": {
        const parts = n.children.map(toSearch);
        if (parts.includes("none")) return "none";
        return andObjects(parts as SearchObject[]);
      }
      case "or": {
        const parts = n.children.map(toSearch).filter((p): p is SearchObject => p !== "none");
        if (parts.length === 0) return "none";
        return parts.length === 1 ? (parts[0] as SearchObject) : { or: parts };
      }
      case "not": {
        const c = toSearch(n.child);
        return c === "none" ? { all: true } : { not: c };
      }
      default:
        return leafSearch(n, now);
    }
  };
  const search = toSearch(relaxed);
  if (search === "none") return null;
  return { search, exact, bound };
}

const gq = (v: string, phrase = false) =>
  phrase || /[\s(){}"]/u.test(v) || v === "OR" || v === "AND" || v.startsWith("-") ? `"${v}"` : v;

/**
 * Prints a query for Gmail's X-GM-RAW, which speaks the same language: Gmail itself then applies
 * in:, label:, has:attachment and filename:. account: terms must be bound first (bindQuery);
 * returns null when the bound query matches nothing.
 */
export function compileToGmailRaw(ast: QueryNode): string | null {
  const p = (n: QueryNode, top: boolean): string => {
    switch (n.kind) {
      case "all":
        return "";
      case "none":
        throw new QueryCompileError("a query that matches nothing has no X-GM-RAW form");
      case "and": {
        const s = n.children.map((c) => p(c, false)).join(" ");
        return top ? s : `(${s})`;
      }
      case "or":
        return `{${n.children.map((c) => p(c, false)).join(" ")}}`;
      case "not":
        return `-${p(n.child, false)}`;
      case "text":
        return gq(n.value, n.phrase);
      case "address":
        return `${n.field}:${gq(n.value, n.phrase)}`;
      case "subject":
        return `subject:${gq(n.value, n.phrase)}`;
      case "in":
      case "label":
      case "filename":
        return `${n.kind}:${gq(n.value)}`;
      case "is":
        return n.flag === "flagged" ? "is:starred" : `is:${n.flag}`;
      case "has_attachment":
        return "has:attachment";
      case "size":
        return `${n.op}:${n.bytes}`;
      case "date":
        return `${n.op}:${n.date.replace(/-/g, "/")}`;
      case "age":
        return `${n.op}_than:${n.amount}${n.unit}`;
      case "msgid":
        return `rfc822msgid:${n.value.slice(1, -1)}`;
      case "account":
        throw new QueryCompileError("bind account: terms (bindQuery) before compiling for X-GM-RAW");
      case "item":
        throw new QueryCompileError(ITEM_NEEDS_CACHE);
    }
  };
  if (ast.kind === "none") return null;
  return p(ast, true);
}
