// The typed AST of a parsed query. Every leaf keeps `pos`, the 1-based position of its first
// character in the query text, so later stages can point at the term they cannot handle.

export type AddressField = "from" | "to" | "cc" | "bcc";
export type FlagState = "unread" | "read" | "flagged" | "answered" | "draft";
export type AgeUnit = "d" | "m" | "y";

export type QueryNode =
  | { kind: "all" }
  | { kind: "none" }
  | { kind: "and"; children: QueryNode[] }
  | { kind: "or"; children: QueryNode[] }
  | { kind: "not"; child: QueryNode }
  /** A bare word or a "phrase": matches subject, addresses/names and body. */
  | { kind: "text"; value: string; phrase: boolean; pos: number }
  | { kind: "address"; field: AddressField; value: string; phrase: boolean; pos: number }
  | { kind: "subject"; value: string; phrase: boolean; pos: number }
  | { kind: "in"; value: string; pos: number }
  | { kind: "label"; value: string; pos: number }
  | { kind: "is"; flag: FlagState; pos: number }
  | { kind: "has_attachment"; pos: number }
  | { kind: "filename"; value: string; pos: number }
  | { kind: "size"; op: "larger" | "smaller"; bytes: number; pos: number }
  /** after:/before: with a calendar date, `date` as YYYY-MM-DD (a UTC day). */
  | { kind: "date"; op: "after" | "before"; date: string; pos: number }
  | { kind: "age"; op: "newer" | "older"; amount: number; unit: AgeUnit; pos: number }
  | { kind: "account"; value: string; pos: number }
  /** rfc822msgid:ID, the message with that Message-ID; `value` in angle brackets, as the header has it. */
  | { kind: "msgid"; value: string; pos: number }
  /**
   * item:ID, the threads linked to a work item (and the live items below it). `threads` is filled
   * in from the item store before compiling, as [account, thread key] pairs; only the cache answers.
   */
  | { kind: "item"; value: string; pos: number; threads?: Array<[string, string]> };

export type LeafNode = Exclude<QueryNode, { kind: "all" | "none" | "and" | "or" | "not" }>;

export const ALL: QueryNode = { kind: "all" };
export const NONE: QueryNode = { kind: "none" };

/** AND of the children with the trivial cases folded (all/none, one child, nested ands). */
export function and(children: QueryNode[]): QueryNode {
  const out: QueryNode[] = [];
  for (const c of children) {
    if (c.kind === "all") continue;
    if (c.kind === "none") return NONE;
    if (c.kind === "and") out.push(...c.children);
    else out.push(c);
  }
  if (out.length === 0) return ALL;
  if (out.length === 1) return out[0] as QueryNode;
  return { kind: "and", children: out };
}

/** OR of the children with the trivial cases folded. */
export function or(children: QueryNode[]): QueryNode {
  const out: QueryNode[] = [];
  for (const c of children) {
    if (c.kind === "none") continue;
    if (c.kind === "all") return ALL;
    if (c.kind === "or") out.push(...c.children);
    else out.push(c);
  }
  if (out.length === 0) return NONE;
  if (out.length === 1) return out[0] as QueryNode;
  return { kind: "or", children: out };
}

export function not(child: QueryNode): QueryNode {
  if (child.kind === "all") return NONE;
  if (child.kind === "none") return ALL;
  if (child.kind === "not") return child.child;
  return { kind: "not", child };
}

/** Rebuilds the tree bottom-up, replacing leaves by what `f` returns (then folding constants). */
export function mapLeaves(
  node: QueryNode,
  f: (leaf: LeafNode, negated: boolean) => QueryNode,
  negated = false,
): QueryNode {
  switch (node.kind) {
    case "all":
    case "none":
      return node;
    case "and":
      return and(node.children.map((c) => mapLeaves(c, f, negated)));
    case "or":
      return or(node.children.map((c) => mapLeaves(c, f, negated)));
    case "not":
      return not(mapLeaves(node.child, f, !negated));
    default:
      return f(node, negated);
  }
}

export function leaves(node: QueryNode): LeafNode[] {
  const out: LeafNode[] = [];
  mapLeaves(node, (l) => {
    out.push(l);
    return l;
  });
  return out;
}
