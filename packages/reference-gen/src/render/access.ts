import { conditionOf, type ListedTool } from "../model.js";

export const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/**
 * Read-only, Destructive or Write, from the hints. A missing destructiveHint counts as destructive,
 * which is the MCP default for a tool that is not read-only.
 */
export function accessOf(tool: ListedTool): "Read-only" | "Destructive" | "Write" {
  const a = tool.annotations ?? {};
  if (a.readOnlyHint === true) return "Read-only";
  if (a.destructiveHint !== false) return "Destructive";
  return "Write";
}

/**
 * The access of a page or index row: accessOf, except that a tool destructive only under a
 * condition the server states (a live annotation) reads "Write, destructive while …", whatever the
 * hint was at the moment the pages were generated.
 */
export function accessLabel(tool: ListedTool): string {
  const when = conditionOf(tool, "destructiveHint");
  if (when === null || tool.annotations?.readOnlyHint === true) return accessOf(tool);
  return `Write, destructive ${when}`;
}
