/**
 * Toolsets and the read-only mode: which of a server's declared tools one run serves, chosen by
 * `--tools GROUP,…` / `MCP_TOOLS` and `--read-only` / `MCP_READ_ONLY`. Some clients pass only the
 * first tools of a long list to the model, and some people want a server that can only read; both
 * pick from the groups the declarations already carry (`toolFactory({group})`). Also how a run lists
 * them: with their output schemas only under `--output-schemas` / `MCP_OUTPUT_SCHEMAS`.
 */
import type { Annotations, AnyTool } from "./define.js";

/** The environment variable naming the groups to serve, as `--tools` does (not `list`). */
export const TOOLS_ENV = "MCP_TOOLS";
/** The environment variable that, set to 1 (or true, yes), serves only the read-only tools. */
export const READ_ONLY_ENV = "MCP_READ_ONLY";
/** The environment variable that, set to 1 (or true, yes), lists each tool's output schema, as `--output-schemas` does. */
export const OUTPUT_SCHEMAS_ENV = "MCP_OUTPUT_SCHEMAS";

/** Raised for a flag or variable a server cannot start with; a bin prints its message and exits non-zero. */
export class FlagError extends Error {
  override readonly name = "FlagError";
}

/**
 * How a group is written in `--tools`: lower case, each run of anything but a letter or a digit a
 * single "-" ("Accounts and folders" is `accounts-and-folders`). A name given to `--tools` is
 * spelled the same way before it is compared, so the declared name, in any case, also works.
 */
export function groupFlagName(group: string): string {
  return group
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, ""); // redos-ok: the line above made each run of "-" one "-"
}

/** What one run serves: the chosen groups (all when absent) and whether only read-only tools. */
export interface ToolSelection {
  /** The groups as given (declared names or their flag spellings); undefined: every group. */
  groups?: readonly string[];
  readOnly: boolean;
}

/** The part of the common flags a selection is read from. */
export interface SelectionFlags {
  tools?: readonly string[] | "list";
  readOnly?: boolean;
}

/**
 * The selection of one run: `--tools` over `MCP_TOOLS`; read-only when `--read-only` is given or
 * `MCP_READ_ONLY` is on. Throws FlagError for a variable it cannot read.
 */
export function selectionOf(flags: SelectionFlags, env: NodeJS.ProcessEnv): ToolSelection {
  let groups: readonly string[] | undefined;
  if (Array.isArray(flags.tools)) groups = flags.tools;
  else if (flags.tools === undefined && env[TOOLS_ENV]) {
    const given = splitGroups(env[TOOLS_ENV], TOOLS_ENV);
    if (given === "list") {
      throw new FlagError(`${TOOLS_ENV} takes group names; to see them, run the server with --tools list`);
    }
    groups = given;
  }
  return { ...(groups ? { groups } : {}), readOnly: flags.readOnly === true || envFlag(env, READ_ONLY_ENV) };
}

/**
 * Whether a run's tools/list carries each tool's `outputSchema`: when `--output-schemas` is given or
 * `MCP_OUTPUT_SCHEMAS` is on; off by default (see the kit README, "Output schemas are opt-in": they
 * are most of a long list's bytes and clients only validate results with them). Throws FlagError
 * for a variable it cannot read.
 */
export function outputSchemasOf(flags: { outputSchemas?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return flags.outputSchemas === true || envFlag(env, OUTPUT_SCHEMAS_ENV);
}

/** Splits a `--tools` value: `list`, or comma-separated group names (at least one). */
export function splitGroups(value: string, name = "--tools"): string[] | "list" {
  if (value.trim().toLowerCase() === "list") return "list";
  const groups = value
    .split(",")
    .map((g) => g.trim())
    .filter((g) => g !== "");
  if (groups.length === 0) throw new FlagError(`${name} takes group names separated by commas, or list`);
  return groups;
}

function envFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? "").trim().toLowerCase();
  if (value === "" || value === "0" || value === "false" || value === "no") return false;
  if (value === "1" || value === "true" || value === "yes") return true;
  throw new FlagError(`${name} takes 1 (or true, yes) or 0 (or false, no); got "${env[name]}"`);
}

/** The tools of each declared group: groups by their flag spelling, tools by name. */
export function groupsOf(tools: readonly AnyTool[]): Map<string, AnyTool[]> {
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...tools].sort(
    (a, b) => byName(groupFlagName(a.group), groupFlagName(b.group)) || byName(a.name, b.name),
  );
  const groups = new Map<string, AnyTool[]>();
  for (const tool of sorted) {
    const list = groups.get(tool.group);
    if (list) list.push(tool);
    else groups.set(tool.group, [tool]);
  }
  return groups;
}

/**
 * Whether a tool is served under `selection`, given its current annotations. Throws FlagError,
 * naming the valid groups, when the selection names a group no tool declares.
 */
export function selectionFilter(
  tools: readonly AnyTool[],
  selection: ToolSelection,
): (tool: AnyTool, annotations: Annotations) => boolean {
  let chosen: Set<string> | undefined;
  if (selection.groups) {
    const byFlag = new Map<string, string>();
    for (const group of groupsOf(tools).keys()) byFlag.set(groupFlagName(group), group);
    chosen = new Set();
    for (const given of selection.groups) {
      const group = byFlag.get(groupFlagName(given));
      if (group === undefined) {
        throw new FlagError(
          `no tool group "${given}"; the groups are ${[...byFlag.keys()].join(", ")} (see --tools list)`,
        );
      }
      chosen.add(group);
    }
  }
  return (tool, annotations) =>
    (chosen === undefined || chosen.has(tool.group)) && (!selection.readOnly || annotations.readOnly);
}

/** What `--tools list` prints: each group's flag spelling and declared name, then its tools. */
export function toolGroupsText(tools: readonly AnyTool[]): string {
  const groups = groupsOf(tools);
  const lines = [
    `Tool groups: serve some with --tools GROUP,... (or ${TOOLS_ENV}=GROUP,...); a group is matched`,
    `case-insensitively, by its declared name or the spelling shown. --read-only (or ${READ_ONLY_ENV}=1)`,
    "serves only the tools marked read-only.",
  ];
  const width = Math.max(...tools.map((t) => t.name.length));
  for (const [group, list] of groups) {
    lines.push("", `${groupFlagName(group)}  (${group})`);
    for (const tool of list) {
      const marks = [
        tool.annotations.readOnly ? "read-only" : "",
        tool.visibleWhen ? "gated: listed only while the server allows it" : "",
      ].filter(Boolean);
      lines.push(`  ${tool.name.padEnd(width)}  ${marks.join("; ")}`.trimEnd());
    }
  }
  return `${lines.join("\n")}\n`;
}
