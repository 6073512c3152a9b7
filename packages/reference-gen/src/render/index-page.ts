import {
  GENERATED_COMMENT,
  groupOf,
  type ListedTool,
  type ServerInfo,
  sortByGroup,
  titleOf,
  UNGROUPED,
} from "../model.js";
import { accessLabel } from "./access.js";
import { code, frontMatter, mdText, slug, table } from "./markdown.js";
import { pointerLine } from "./page.js";

/** The reference's landing page: the server, then its tools by group (groups A-Z, tools A-Z). */
export function renderIndexPage(
  tools: readonly ListedTool[],
  server: ServerInfo,
  basePath: string,
  jsonUrl: string,
): string {
  const groups = new Map<string, ListedTool[]>();
  for (const tool of sortByGroup(tools)) {
    const group = groupOf(tool) ?? UNGROUPED;
    groups.set(group, [...(groups.get(group) ?? []), tool]);
  }
  const ids = new Set<string>();
  const sections: string[] = [];
  for (const [group, members] of groups) {
    let id = slug(group);
    for (let n = 2; ids.has(id); n++) id = `${slug(group)}-${n}`;
    ids.add(id);
    sections.push(
      `## ${mdText(group)} [#${id}]`,
      table(
        ["Tool", "Title", "Access"],
        members.map((t) => [
          `[${code(t.name)}](${basePath}/${encodeURIComponent(t.name)})`,
          mdText(titleOf(t)),
          mdText(accessLabel(t)),
        ]),
      ),
    );
  }
  const count = tools.length === 1 ? "1 tool" : `${tools.length} tools`;
  const parts = [
    frontMatter({
      title: "Tool reference",
      description: `The tools of the MCP server ${server.name}, by group.`,
    }),
    GENERATED_COMMENT,
    `The MCP server ${code(server.name)} version ${code(server.version)} lists ${count} in \`tools/list\`. Each page quotes the description the model reads and shows the arguments, an example call, the result and the annotations.`,
    ...(sections.length > 0 ? sections : ["The server lists no tools."]),
    pointerLine(jsonUrl),
  ];
  return `${parts.join("\n\n")}\n`;
}
