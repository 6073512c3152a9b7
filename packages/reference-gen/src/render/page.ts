import {
  conditionOf,
  GENERATED_COMMENT,
  groupOf,
  type JsonSchema,
  type ListedTool,
  scopeOf,
  titleOf,
  UNGROUPED,
} from "../model.js";
import { accessLabel, HINTS } from "./access.js";
import { exampleCall } from "./example-call.js";
import { describeCell } from "./facts.js";
import { flattenObject } from "./flatten.js";
import { blockquote, code, frontMatter, mdText, table } from "./markdown.js";
import { SchemaDoc, successSchema } from "./schema.js";
import { typeLabel } from "./types.js";

/** One tool's reference page, in the layout of the seed's rendered `list_notes` page. */
export function renderToolPage(tool: ListedTool, jsonUrl: string): string {
  const scope = scopeOf(tool);
  const sections = [
    frontMatter({ title: tool.name, description: titleOf(tool) }),
    GENERATED_COMMENT,
    table(
      ["Group", "Access", "MCP name"],
      [[mdText(groupOf(tool) ?? UNGROUPED), mdText(accessLabel(tool)), code(tool.name)]],
    ),
    ...(scope ? [`Required scope: ${code(scope)}.`] : []),
    "## Description [#description]",
    ...descriptionSection(tool),
    "## Arguments [#arguments]",
    argumentsSection(tool),
    "## Example call [#example-call]",
    "The smallest valid request: required arguments only, with placeholder values.",
    `\`\`\`json\n${JSON.stringify(exampleCall(tool), null, 2)}\n\`\`\``,
    "## Result [#result]",
    ...resultSection(tool),
    "## Annotations [#annotations]",
    annotationsTable(tool),
    pointerLine(jsonUrl),
  ];
  return `${sections.join("\n\n")}\n`;
}

export function pointerLine(jsonUrl: string): string {
  return `The full input and output JSON Schemas for every tool are in [${mdText(jsonUrl)}](${jsonUrl}).`;
}

function descriptionSection(tool: ListedTool): string[] {
  const text = tool.description ?? "";
  if (text.trim() === "") return ["The server sends no description for this tool."];
  return [
    "The description the MCP server sends to the model, word for word. Its rules apply to every call.",
    blockquote(text),
  ];
}

function argumentsSection(tool: ListedTool): string {
  const doc = new SchemaDoc(tool.inputSchema);
  const rows = flattenObject(doc, tool.inputSchema);
  if (rows.length === 0) return "No arguments.";
  return table(
    ["Argument", "Type", "Required", "Description"],
    rows.map((r) => [
      code(r.path),
      code(typeLabel(doc, r.node)),
      r.required ? "Yes" : "No",
      describeCell(doc, r.node),
    ]),
  );
}

function resultSection(tool: ListedTool): string[] {
  const { schema, hasErrorBranch } = successSchema(tool.outputSchema);
  const failure = hasErrorBranch
    ? "A failed call returns `isError: true`, and its `structuredContent.error` holds `reason` (a fixed code), `message` and `hint` (what to do next); `content` says the same as text."
    : "A failed call returns `isError: true`, with the error in `content`.";
  if (!schema || !tool.outputSchema) {
    return [
      "The server lists no output schema for this tool: its result is described by the `content` blocks only.",
      failure,
    ];
  }
  const doc = new SchemaDoc(tool.outputSchema);
  const rows = flattenObject(doc, schema as JsonSchema);
  const intro =
    "The result has `structuredContent` that matches this schema. The same data is also in `content` as JSON text (after a one-line summary, on servers that add one).";
  if (rows.length === 0) {
    return [
      intro,
      `The structured content has no declared fields (type ${code(typeLabel(doc, schema))}).`,
      failure,
    ];
  }
  const body = table(
    ["Field", "Type", "Required", "Description"],
    rows.map((r) => [
      code(r.path),
      code(typeLabel(doc, r.node)),
      r.required ? "Yes" : "No",
      describeCell(doc, r.node),
    ]),
  );
  return [intro, body, failure];
}

function annotationsTable(tool: ListedTool): string {
  const a = tool.annotations ?? {};
  return table(
    ["Hint", "Value"],
    HINTS.map((hint) => {
      const when = conditionOf(tool, hint);
      if (when !== null) return [code(hint), `${code("true")} ${mdText(when)}, else ${code("false")}`];
      return [code(hint), typeof a[hint] === "boolean" ? code(String(a[hint])) : "not set"];
    }),
  );
}
