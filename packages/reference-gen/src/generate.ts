import { type GenerateOptions, type ListedTool, type ServerInfo, sortByGroup } from "./model.js";
import { renderIndexPage } from "./render/index-page.js";
import { renderToolPage } from "./render/page.js";
import { renderToolsJson } from "./render/tools-json.js";

/** File names the generator owns besides the tool pages; a tool may not take one of them. */
const RESERVED = new Set(["index", "meta", "mcp-tools"]);
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Normalises `--base-path`: a leading slash, no trailing one; "" (the site root) stays "". */
export function normaliseBasePath(basePath: string | undefined): string {
  // redos-ok: the owner's own --base-path
  const trimmed = (basePath ?? "").trim().replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/**
 * Renders the whole reference from a tools/list: `<tool>.mdx` per tool, `index.mdx`, `meta.json`
 * and `mcp-tools.json`, keyed by file name. Pure: the same input always gives the same bytes.
 */
export function generateReference(
  tools: readonly ListedTool[],
  server: ServerInfo,
  options: GenerateOptions = {},
): Map<string, string> {
  checkNames(tools);
  const basePath = normaliseBasePath(options.basePath);
  const jsonUrl = options.jsonUrl ?? `${basePath}/mcp-tools.json`;
  const ordered = sortByGroup(tools);
  const files = new Map<string, string>();
  files.set("index.mdx", renderIndexPage(ordered, server, basePath, jsonUrl));
  for (const tool of [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    files.set(`${tool.name}.mdx`, renderToolPage(tool, jsonUrl));
  }
  const meta = { title: "Reference", pages: ["index", ...ordered.map((t) => t.name)] };
  files.set("meta.json", `${JSON.stringify(meta, null, 2)}\n`);
  files.set("mcp-tools.json", renderToolsJson(tools, server));
  return files;
}

function checkNames(tools: readonly ListedTool[]): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (!SAFE_NAME.test(tool.name) || RESERVED.has(tool.name)) {
      throw new Error(
        `The tool name "${tool.name}" cannot be a page file name (it must match ${SAFE_NAME} and not be index, meta or mcp-tools)`,
      );
    }
    if (seen.has(tool.name)) throw new Error(`The server lists the tool "${tool.name}" twice`);
    seen.add(tool.name);
  }
}
