import { ALL, and, type LeafNode, NONE, not, or, type QueryNode, leaves, mapLeaves } from "./ast.js";

/** Special-use roles a folder can carry, as the cache and `in:` name them. */
export type FolderRole = "inbox" | "sent" | "drafts" | "trash" | "junk" | "archive" | "all" | "flagged";

/** `in:` names that mean a role rather than a folder name (Gmail's words included). */
export const IN_ROLE_ALIASES: Record<string, FolderRole> = {
  inbox: "inbox",
  sent: "sent",
  drafts: "drafts",
  draft: "drafts",
  trash: "trash",
  bin: "trash",
  spam: "junk",
  junk: "junk",
  archive: "archive",
};

/** `in:anywhere` (Gmail) and `in:all` search every folder, Trash and Junk included. */
export const IN_ANYWHERE = new Set(["anywhere", "all"]);

/** Gmail's system label for a role, as X-GM-LABELS reports it. */
export const ROLE_LABEL: Partial<Record<FolderRole, string>> = {
  inbox: "\\Inbox",
  sent: "\\Sent",
  drafts: "\\Draft",
  trash: "\\Trash",
  junk: "\\Spam",
};

export interface FolderInfo {
  /** The folder's full name on the server. */
  path: string;
  role?: FolderRole | null | undefined;
}

/** Maps an imapflow special-use flag ("\\Sent") to a role. */
export function roleFromSpecialUse(specialUse: string | undefined | null, path: string): FolderRole | null {
  if (path.toUpperCase() === "INBOX") return "inbox";
  const map: Record<string, FolderRole> = {
    "\\inbox": "inbox",
    "\\sent": "sent",
    "\\drafts": "drafts",
    "\\trash": "trash",
    "\\junk": "junk",
    "\\archive": "archive",
    "\\all": "all",
    "\\flagged": "flagged",
  };
  return specialUse ? (map[specialUse.toLowerCase()] ?? null) : null;
}

/** Does `in:value` name this folder? (name in any case, or its role by a role word) */
export function inMatchesFolder(value: string, folder: FolderInfo): boolean {
  const v = value.toLowerCase();
  if (IN_ANYWHERE.has(v)) return true;
  if (folder.path.toLowerCase() === v) return true;
  const role = IN_ROLE_ALIASES[v];
  return role !== undefined && folder.role === role;
}

/** True when some `in:` term names Trash, Junk or anywhere, which lifts the default exclusion. */
export function mentionsIn(ast: QueryNode): boolean {
  return leaves(ast).some((l) => l.kind === "in");
}

/**
 * The folders a search covers: every folder except Trash and Junk unless the query has an `in:`
 * term (then the `in:` terms themselves decide, folder by folder).
 */
export function folderInScope(ast: QueryNode, folder: FolderInfo): boolean {
  if (mentionsIn(ast)) return true;
  return folder.role !== "trash" && folder.role !== "junk";
}

/**
 * Partially evaluates a query for one account and, optionally, one folder: `account:` terms
 * become true/false, and with a folder and no labels on the account, `in:` terms too.
 * The result is folded, so `{kind:"none"}` means nothing in that scope can match.
 */
export function bindQuery(
  ast: QueryNode,
  scope: { account?: string; folder?: FolderInfo; labels?: boolean },
): QueryNode {
  const bound = mapLeaves(ast, (leaf) => {
    if (leaf.kind === "account" && scope.account !== undefined) {
      return leaf.value.toLowerCase() === scope.account.toLowerCase() ? ALL : NONE;
    }
    if (leaf.kind === "in" && scope.folder && !scope.labels) {
      return inMatchesFolder(leaf.value, scope.folder) ? ALL : NONE;
    }
    return leaf;
  });
  return dropUnsearchable(bound);
}

/** Whether a term holds a letter or digit: one without indexes to nothing in unicode61. */
const searchable = (value: string) => /[\p{L}\p{N}]/u.test(value);

/**
 * The query without its word, subject and address terms that hold no letter or digit (a lone "&",
 * "...", `from:@`), as Gmail ignores them. The cache's word index cannot match such a term and the
 * server's substring search would, so the two sources answered the same query differently ("..."
 * was every message from the cache, none from Dovecot); bindQuery takes them out for both. Each
 * leaves its AND, OR or NOT ("invoice OR ..." is "invoice"), and a query of nothing else matches
 * every message, as an empty query does.
 */
export function dropUnsearchable(node: QueryNode): QueryNode {
  return withoutUnsearchable(node) ?? ALL;
}

function withoutUnsearchable(node: QueryNode): QueryNode | undefined {
  switch (node.kind) {
    case "and":
    case "or": {
      const kids = node.children.map(withoutUnsearchable).filter((k): k is QueryNode => k !== undefined);
      return kids.length === 0 ? undefined : node.kind === "and" ? and(kids) : or(kids);
    }
    case "not": {
      const child = withoutUnsearchable(node.child);
      return child === undefined ? undefined : not(child);
    }
    case "text":
    case "subject":
    case "address":
      return searchable(node.value) ? node : undefined;
    default:
      return node;
  }
}

/**
 * Pulls `account:` terms out: for each known account, the query left once its account terms are
 * decided, leaving out accounts the query cannot match. `named` lists every account the query
 * names (a caller refuses names it does not know). `restrict`, when non-empty, is the `accounts`
 * argument of search: the accounts searched are those in it AND matching the account: terms.
 */
export function splitAccounts(
  ast: QueryNode,
  known: string[],
  restrict: string[] = [],
): { perAccount: Map<string, QueryNode>; named: string[] } {
  const named = [
    ...new Set(
      leaves(ast)
        .filter((l): l is Extract<LeafNode, { kind: "account" }> => l.kind === "account")
        .map((l) => l.value),
    ),
  ];
  const perAccount = new Map<string, QueryNode>();
  const allowed = restrict.length ? new Set(restrict.map((a) => a.toLowerCase())) : null;
  for (const account of known) {
    if (allowed && !allowed.has(account.toLowerCase())) continue;
    const bound = bindQuery(ast, { account });
    if (bound.kind !== "none") perAccount.set(account, bound);
  }
  return { perAccount, named };
}

export interface QueryNeeds {
  /** Some word or phrase may match a body: the cache needs bodies to answer completely. */
  bodies: boolean;
  /** has:attachment / filename: need the body structure (kept with the headers). */
  structure: boolean;
  /** label: / in: may match Gmail labels. */
  labels: boolean;
}

export function queryNeeds(ast: QueryNode): QueryNeeds {
  const ls = leaves(ast);
  return {
    bodies: ls.some((l) => l.kind === "text"),
    structure: ls.some((l) => l.kind === "has_attachment" || l.kind === "filename"),
    labels: ls.some((l) => l.kind === "label" || l.kind === "in"),
  };
}

/**
 * Whether a cache holding this coverage answers the query completely: headers and structure are
 * always kept, so the only gap is bodies for word and phrase terms.
 */
export function cacheCanAnswer(
  ast: QueryNode,
  coverage: { headersComplete: boolean; bodiesComplete: boolean },
): boolean {
  if (!coverage.headersComplete) return false;
  return !queryNeeds(ast).bodies || coverage.bodiesComplete;
}

/** Evaluates the boolean structure with a caller-supplied truth value for each leaf. */
export function evaluate(node: QueryNode, leaf: (l: LeafNode) => boolean): boolean {
  switch (node.kind) {
    case "all":
      return true;
    case "none":
      return false;
    case "and":
      return node.children.every((c) => evaluate(c, leaf));
    case "or":
      return node.children.some((c) => evaluate(c, leaf));
    case "not":
      return !evaluate(node.child, leaf);
    default:
      return leaf(node);
  }
}
