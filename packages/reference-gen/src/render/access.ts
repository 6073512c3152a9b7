import type { ListedTool } from "../model.js";

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
