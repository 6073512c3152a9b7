import type { QueryNode } from "./ast.js";
import { dropUnsearchable, IN_ANYWHERE, IN_ROLE_ALIASES, ROLE_LABEL, mentionsIn } from "./analyze.js";
import { ageCutoffMs, dayStartMs } from "./time.js";
import { exactIdFloor } from "../cache/arrival-id.js";
import { QueryCompileError } from "./errors.js";
import { cjkSpaced } from "./cjk.js";

/**
 * A WHERE clause over the cache's `messages` table aliased `m`, with positional parameters.
 * User text only ever travels in `params`: FTS5 MATCH expressions are built by us with every
 * user term quoted as an FTS5 string, and the whole expression is itself a bound parameter.
 */
export interface SqlWhere {
  where: string;
  params: (string | number)[];
  /**
   * An FTS5 expression every matching row satisfies (the query's text terms when they are joined
   * to the rest by AND), or null. Its FTS5 count bounds the number of matches cheaply.
   */
  ftsBound: string | null;
  /** The FTS5 table `ftsBound` is matched against (`ftsTableOf`). */
  ftsTable: FtsTable;
  /**
   * The arrival time (ms) every matching row is at or after (the latest top-level after: or
   * newer_than: AND-ed to the rest), or null: the date index's range from it holds every match.
   */
  dateFloor: number | null;
  /**
   * When the where is `ftsBound AND rest`: the rest alone, so a page can be read from FTS5 in
   * rowid (arrival) order with the rest tested per hit (src/cache/search-plan.ts); else null.
   */
  ftsRest: { where: string; params: (string | number)[] } | null;
  /**
   * When the query is a whole address (`from:ann@example.com`) AND-ed with the rest, and has no text
   * term: the address, its field (src/cache/address-index.ts) and the rest as a condition on the
   * address index's rows `a` (joined to `m` when `join`), so count and page read that index's
   * range (src/cache/search-plan.ts); else null.
   */
  addr: AddrDriver | null;
}

export interface AddrDriver {
  address: string;
  field: number;
  where: string;
  params: (string | number)[];
  /** Whether `where` reads the message row (`m`), not only the index row (`a`). */
  join: boolean;
  /**
   * Whether `where` bounds the index row's id (a date term: ids follow arrival), so the address's
   * kept per-folder counts cannot answer its count.
   */
  bounded: boolean;
  /**
   * Whether the query has `has:attachment` AND-ed to the address, left out of `where`: the plan
   * tests it on the attachment index's entry of each row (src/cache/search-plan.ts), which is
   * smaller than the message rows and needs no message row read.
   */
  attached: boolean;
}

/** message_addresses.field of each address term (the same numbers as src/cache/address-index.ts). */
const ADDRESS_FIELD = { from: 0, to: 1, cc: 2, bcc: 3 } as const;

/**
 * A whole ASCII address, unquoted (`ann@example.com`): matched as that address, in any ASCII case,
 * from the address index. Anything else (`acme.com`, `ann`, a quoted phrase, a non-ASCII address)
 * stays a phrase in the field's words.
 */
export function exactAddress(n: QueryNode): boolean {
  return n.kind === "address" && !n.phrase && isWholeAddress(n.value);
}

/**
 * `local@domain.tld` in printable ASCII without spaces or quotes: what `/^[!#-~]+@[!#-~]+\.[!#-~]+$/`
 * says (some `@` after the first character, then some `.` with a character on each side), decided
 * in one pass; that expression's backtracking was cubic in the term (seconds for a 2,000-character
 * query of `@` and `.`).
 */
export function isWholeAddress(v: string): boolean {
  if (!/^[!#-~]+$/.test(v)) return false;
  const at = v.indexOf("@", 1);
  return at > 0 && v.lastIndexOf(".", v.length - 2) >= at + 2;
}

/** The address as the index stores it: SQLite's lower() folds ASCII letters only. */
const asciiLower = (v: string) => v.replace(/[A-Z]+/g, (c) => c.toLowerCase());
const addressIn = "m.id IN (SELECT id FROM message_addresses WHERE address = ? AND field = ?)";

/** Delimiter of the *_norm list columns, so `instr` matches whole items. */
export const LIST_SEP = "\u001f";
export const listItem = (v: string) => `${LIST_SEP}${v.toLowerCase()}${LIST_SEP}`;
export const listColumn = (items: Iterable<string>) => {
  const arr = [...items].map((v) => v.toLowerCase());
  return arr.length ? `${LIST_SEP}${arr.join(LIST_SEP)}${LIST_SEP}` : "";
};

const FTS_COLUMN = {
  subject: "subject",
  from: "from_addr",
  to: "to_addr",
  cc: "cc_addr",
  bcc: "bcc_addr",
} as const;

/**
 * An FTS5 string literal: the whole term is one phrase, so FTS5 operators inside it are inert. CJK
 * characters in it are set apart as the index has them (./cjk.ts), so `会議` is the phrase `会 議`.
 */
export const ftsString = (value: string) => `"${cjkSpaced(value).replace(/"/g, '""')}"`;

function ftsLeaf(node: QueryNode): string | null {
  if (exactAddress(node)) return null;
  if (node.kind === "text") return ftsString(node.value);
  if (node.kind === "subject") return `${FTS_COLUMN.subject} : ${ftsString(node.value)}`;
  if (node.kind === "address") return `${FTS_COLUMN[node.field]} : ${ftsString(node.value)}`;
  return null;
}

/** The FTS5 expression for a subtree that only holds text terms, or null when it has others. */
function ftsExpr(node: QueryNode): string | null {
  switch (node.kind) {
    case "or": {
      const parts = node.children.map(ftsExpr);
      return parts.every((p) => p !== null) ? `(${parts.join(" OR ")})` : null;
    }
    case "and": {
      // FTS5's NOT is binary (a NOT b): negations need at least one positive term to hang on
      const pos: string[] = [];
      const neg: string[] = [];
      for (const c of node.children) {
        const e = c.kind === "not" ? ftsExpr(c.child) : ftsExpr(c);
        if (e === null) return null;
        (c.kind === "not" ? neg : pos).push(e);
      }
      if (pos.length === 0) return null;
      return `(${pos.join(" AND ")}${neg.map((n) => ` NOT ${n}`).join("")})`;
    }
    default:
      return ftsLeaf(node);
  }
}

/** Terms that an index of the messages table (or FTS) answers on its own. */
const hasOwnIndex = (n: QueryNode): boolean =>
  (n.kind === "is" && (n.flag === "unread" || n.flag === "flagged")) ||
  ["has_attachment", "size", "date", "age", "text", "subject", "address"].includes(n.kind);

/**
 * The word index a MATCH runs against. `subjects_fts` holds the subjects alone
 * (src/cache/storage-migration.ts), indexed as messages_fts indexes its subject column, so an
 * expression of `subject:` terms only matches the same rows there; it reads only the subject's
 * position lists, where messages_fts reads a word's list over every column (`subject:update` read
 * the list of `update` in nearly every body).
 */
export type FtsTable = "messages_fts" | "subjects_fts";

/** Whether every word of an FTS-only subtree is a `subject:` term (negated ones too). */
const subjectsOnly = (n: QueryNode): boolean => {
  if (n.kind === "subject") return true;
  if (n.kind !== "and" && n.kind !== "or") return false;
  return n.children.every((c) => (c.kind === "not" ? subjectsOnly(c.child) : subjectsOnly(c)));
};

/** The table for the MATCH of these FTS-only subtrees (AND-ed or OR-ed together). */
export const ftsTableOf = (nodes: QueryNode[]): FtsTable =>
  nodes.length > 0 && nodes.every(subjectsOnly) ? "subjects_fts" : "messages_fts";

const inFtsOf = (table: FtsTable) => `m.id IN (SELECT rowid FROM ${table} WHERE ${table} MATCH ?)`;

export interface SqlOptions {
  /** Leave out Trash and Junk unless the query has an in: term (default true). */
  defaultScope?: boolean;
  /**
   * The ids of the Trash and Junk folders that hold messages, when the caller knows them: the
   * scope clause then names them, or is left out when there are none (faster than a sub-select).
   */
  excludedFolderIds?: number[];
  /**
   * Whether any cached message has labels (default true). When none has, `in:` tests the folder
   * alone: the label alternatives would match nothing, and reading each row's label list keeps
   * SQLite from answering `in:` with `is:` from an index alone.
   */
  labels?: boolean;
}

export function compileToSql(ast: QueryNode, now: Date, options: SqlOptions = {}): SqlWhere {
  const params: (string | number)[] = [];
  const node = dropUnsearchable(ast);

  // `folderIndex` false: an `in:` term must not drive the query through the folder index, because
  // an AND sibling has an index of its own (a flag's partial index, size, date, FTS): without
  // statistics SQLite takes `folder_id IN (...)` as the more selective and then reads every row of
  // the folder (`is:unread in:inbox` read the whole INBOX). The `+` leaves the test to the other
  // index's entries, which carry folder_id.
  const compile = (n: QueryNode, folderIndex = true): string => {
    switch (n.kind) {
      case "all":
        return "1";
      case "none":
        return "0";
      case "not":
        return `NOT (${compile(n.child)})`;
      case "and":
      case "or": {
        if (n.children.length === 0) return n.kind === "and" ? "1" : "0";
        const whole = ftsExpr(n);
        if (whole !== null) {
          params.push(whole);
          return inFtsOf(ftsTableOf([n]));
        }
        // Merge the text-only children into one MATCH; compile the rest as SQL
        const fts: string[] = [];
        const ftsNodes: QueryNode[] = [];
        const rest: QueryNode[] = [];
        for (const c of n.children) {
          const e = c.kind === "not" ? null : ftsExpr(c);
          if (e === null) rest.push(c);
          else {
            fts.push(e);
            ftsNodes.push(c);
          }
        }
        const parts: string[] = [];
        if (fts.length) {
          params.push(
            fts.length === 1 ? (fts[0] as string) : `(${fts.join(n.kind === "and" ? " AND " : " OR ")})`,
          );
          parts.push(inFtsOf(ftsTableOf(ftsNodes)));
        }
        const driven = n.kind === "and" && (fts.length > 0 || rest.some(hasOwnIndex));
        for (const c of rest) parts.push(`(${compile(c, !driven)})`);
        return parts.join(n.kind === "and" ? " AND " : " OR ");
      }
      case "address":
        if (exactAddress(n)) {
          params.push(asciiLower(n.value), ADDRESS_FIELD[n.field]);
          return addressIn;
        }
        params.push(ftsLeaf(n) as string);
        return inFtsOf("messages_fts");
      case "text":
      case "subject":
        params.push(ftsLeaf(n) as string);
        return inFtsOf(ftsTableOf([n]));
      case "in": {
        const v = n.value.toLowerCase();
        if (IN_ANYWHERE.has(v)) return "1";
        const role = IN_ROLE_ALIASES[v] ?? null;
        const roleLabel = role ? ROLE_LABEL[role] : undefined;
        params.push(v, role ?? "");
        const folder = `${folderIndex ? "" : "+"}m.folder_id IN (SELECT id FROM folders WHERE path_norm = ? OR role = ?)`;
        if (options.labels === false) return folder;
        params.push(listItem(v), listItem(roleLabel ?? v));
        return `(${folder} OR instr(m.labels_norm, ?) > 0 OR instr(m.labels_norm, ?) > 0)`;
      }
      case "label":
        params.push(listItem(n.value), listItem(n.value));
        return "(instr(m.labels_norm, ?) > 0 OR instr(m.keywords_norm, ?) > 0)";
      case "is":
        switch (n.flag) {
          case "unread":
            return "m.seen = 0";
          case "read":
            return "m.seen = 1";
          case "flagged":
            return "m.flagged = 1";
          case "answered":
            return "m.answered = 1";
          case "draft":
            return "m.draft = 1";
        }
        break;
      case "has_attachment":
        return "m.has_attachment = 1";
      case "filename":
        params.push(n.value.toLowerCase());
        return "instr(m.filenames_norm, ?) > 0";
      case "size":
        params.push(n.bytes);
        return n.op === "larger" ? "m.size > ?" : "m.size < ?";
      case "date":
        params.push(dayStartMs(n.date));
        return n.op === "after" ? "m.internal_date >= ?" : "m.internal_date < ?";
      case "age":
        params.push(ageCutoffMs(now, n.amount, n.unit));
        return n.op === "newer" ? "m.internal_date >= ?" : "m.internal_date < ?";
      case "account":
        params.push(n.value);
        return "m.account = ? COLLATE NOCASE";
      case "msgid":
        params.push(n.value);
        return "m.id IN (SELECT x.id FROM message_meta x WHERE x.message_id = ?)";
      case "item": {
        if (!n.threads) throw new QueryCompileError("item: terms need their linked threads filled in first");
        if (n.threads.length === 0) return "0";
        params.push(JSON.stringify(n.threads));
        // Materialized once: the linked threads' messages, by the (account, thread_key) index.
        return "m.id IN (SELECT t.id FROM json_each(?) j JOIN messages t ON t.account = json_extract(j.value, '$[0]') AND t.thread_key = json_extract(j.value, '$[1]'))";
      }
    }
    throw new Error("unreachable query node");
  };

  let where = compile(node);
  let ftsBound = ftsExpr(node);
  let ftsTable = ftsTableOf(ftsBound === null ? [] : [node]);
  if (ftsBound === null && node.kind === "and") {
    const kids = node.children.filter((c) => c.kind !== "not" && ftsExpr(c) !== null);
    const fts = kids.map((c) => ftsExpr(c) as string);
    if (fts.length) ftsBound = fts.length === 1 ? (fts[0] as string) : `(${fts.join(" AND ")})`;
    ftsTable = ftsTableOf(kids);
  }
  const inFts = inFtsOf(ftsTable);
  // compile puts a merged text match first, its expression first in params
  let ftsRest: SqlWhere["ftsRest"] = null;
  if (ftsBound !== null && params[0] === ftsBound) {
    if (where === inFts) ftsRest = { where: "1", params: [] };
    else if (where.startsWith(`${inFts} AND `))
      ftsRest = { where: where.slice(inFts.length + 5), params: params.slice(1) };
  }
  const scoped = (options.defaultScope ?? true) && !mentionsIn(ast);
  const addr = ftsBound === null ? addrDriver(node, now, options, scoped) : null;
  if (scoped) {
    const ids = options.excludedFolderIds;
    const scope = !ids
      ? "m.folder_id NOT IN (SELECT id FROM folders WHERE role IN ('trash', 'junk'))"
      : ids.length
        ? `m.folder_id NOT IN (${ids.map(() => "?").join(", ")})`
        : null;
    if (scope) {
      where = `(${where}) AND ${scope}`;
      params.push(...(ids ?? []));
      if (ftsRest)
        ftsRest = { where: `(${ftsRest.where}) AND ${scope}`, params: [...ftsRest.params, ...(ids ?? [])] };
    }
  }
  return { where, params, ftsBound, ftsTable, dateFloor: dateFloor(node, now), ftsRest, addr };
}

/**
 * The address driver of `node` (see SqlWhere.addr): its first whole-address term, not negated, at
 * the top or directly under a top-level AND; the other terms compiled as the rest.
 */
function addrDriver(node: QueryNode, now: Date, options: SqlOptions, scoped: boolean): AddrDriver | null {
  const kids = node.kind === "and" ? node.children : [node];
  const lead = kids.find(exactAddress) as Extract<QueryNode, { kind: "address" }> | undefined;
  if (!lead) return null;
  const attached = kids.some((k) => k.kind === "has_attachment");
  const conds: string[] = [];
  const params: (string | number)[] = [];
  // A date term is a bound on the index row's id (ids follow arrival: src/cache/arrival-id.ts),
  // tested without the message row: at a million messages `from:` a sender of 39,986 messages
  // `after:` a date counted 2,647 matches in 1.5 ms reading each message row, 0.4 without
  const others: QueryNode[] = [];
  for (const k of kids) {
    if (k === lead || k.kind === "has_attachment") continue;
    const bound = idBoundOf(k, now);
    if (!bound) {
      others.push(k);
      continue;
    }
    conds.push(bound.sql);
    params.push(bound.id);
  }
  const bounded = conds.length > 0;
  let join = false;
  if (others.length) {
    const rest = compileToSql(
      others.length === 1 ? (others[0] as QueryNode) : { kind: "and", children: others },
      now,
      {
        ...options,
        defaultScope: false,
      },
    );
    conds.push(`(${rest.where})`);
    params.push(...rest.params);
    join = true;
  }
  if (scoped) {
    const ids = options.excludedFolderIds;
    if (!ids) {
      conds.push("m.folder_id NOT IN (SELECT id FROM folders WHERE role IN ('trash', 'junk'))");
      join = true;
    } else if (ids.length) {
      // (the index row carries the folder: no message row read for the scope)
      conds.push(`a.folder_id NOT IN (${ids.map(() => "?").join(", ")})`);
      params.push(...ids);
    }
  }
  return {
    address: asciiLower(lead.value),
    field: ADDRESS_FIELD[lead.field],
    where: conds.length ? conds.join(" AND ") : "1",
    params,
    join,
    bounded,
    attached,
  };
}

/**
 * A date term (`after:`, `before:`, `newer_than:`, `older_than:`) as a bound on the address index
 * row's id, exactly what its `m.internal_date` condition says (src/cache/arrival-id.ts,
 * `exactIdFloor`); null for any other term, or a date outside the ids' range.
 */
function idBoundOf(n: QueryNode, now: Date): { sql: string; id: number } | null {
  let ms: number;
  let atLeast: boolean;
  if (n.kind === "date") {
    ms = dayStartMs(n.date);
    atLeast = n.op === "after";
  } else if (n.kind === "age") {
    ms = ageCutoffMs(now, n.amount, n.unit);
    atLeast = n.op === "newer";
  } else return null;
  const id = exactIdFloor(ms);
  return id === null ? null : { sql: atLeast ? "a.id >= ?" : "a.id < ?", id };
}

/** The latest lower bound on internal_date that a match of `n` must meet, or null. */
export function dateFloor(n: QueryNode, now: Date): number | null {
  if (n.kind === "date") return n.op === "after" ? dayStartMs(n.date) : null;
  if (n.kind === "age") return n.op === "newer" ? ageCutoffMs(now, n.amount, n.unit) : null;
  if (n.kind !== "and") return null;
  let floor: number | null = null;
  for (const c of n.children) {
    const f = dateFloor(c, now);
    if (f !== null && (floor === null || f > floor)) floor = f;
  }
  return floor;
}
