import type { QueryNode } from "./ast.js";

const needsQuotes = (v: string) =>
  v === "" ||
  /[\s(){}"]/u.test(v) ||
  v === "OR" ||
  v === "AND" ||
  v.startsWith("-") ||
  /^[A-Za-z_]+:/.test(v);
const q = (v: string, phrase = false) => (phrase || needsQuotes(v) ? `"${v}"` : v);

/**
 * Prints the canonical form of a query: lower-case field names, `is:starred` as `is:flagged`,
 * sizes in bytes, dates as YYYY-MM-DD, groups as explicit OR. Two queries with the same meaning
 * in this grammar print the same; the cursor hash uses it.
 */
export function formatQuery(node: QueryNode, top = true): string {
  switch (node.kind) {
    case "all":
      return "";
    case "none":
      return "-()";
    case "and": {
      const s = node.children.map((c) => formatQuery(c, false)).join(" ");
      return top ? s : `(${s})`;
    }
    case "or":
      return `(${node.children.map((c) => formatQuery(c, false)).join(" OR ")})`;
    case "not":
      return `-${formatQuery(node.child, false)}`;
    case "text":
      return q(node.value, node.phrase);
    case "address":
      return `${node.field}:${q(node.value, node.phrase)}`;
    case "subject":
      return `subject:${q(node.value, node.phrase)}`;
    case "in":
    case "label":
    case "filename":
    case "account":
    case "item":
      return `${node.kind}:${q(node.value)}`;
    case "msgid":
      return `rfc822msgid:${node.value}`;
    case "is":
      return `is:${node.flag}`;
    case "has_attachment":
      return "has:attachment";
    case "size":
      return `${node.op}:${node.bytes}`;
    case "date":
      return `${node.op}:${node.date}`;
    case "age":
      return `${node.op}_than:${node.amount}${node.unit}`;
  }
}
