import { groupOf, type ListedTool, type ServerInfo, scopeOf, titleOf } from "../model.js";

/** Object keys sorted at every depth (array order is kept: it can mean something, as in an enum). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** `mcp-tools.json`: every tool's facts and its schemas as listed, for agents, scripts and the docs site. */
export function renderToolsJson(tools: readonly ListedTool[], server: ServerInfo): string {
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const doc = {
    server: { name: server.name, version: server.version },
    tools: sorted.map((t) => ({
      name: t.name,
      title: titleOf(t),
      description: t.description ?? "",
      group: groupOf(t),
      scope: scopeOf(t),
      annotations: sortKeys(t.annotations ?? {}),
      inputSchema: sortKeys(t.inputSchema),
      outputSchema: t.outputSchema ? sortKeys(t.outputSchema) : null,
    })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
