import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/client";

/** Renders a server's tools/list as the golden file holds it: JSON round-tripped, two-space indented. */
export async function renderToolsList(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  return `${JSON.stringify(JSON.parse(JSON.stringify(tools)), null, 2)}\n`;
}

/** A short line diff: every changed region with two lines of context, numbered as in the golden file. */
export function lineDiff(expected: string, actual: string, context = 2): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--;
    endB--;
  }
  const out: string[] = [];
  for (let i = Math.max(0, start - context); i < start; i++) out.push(`  ${i + 1}: ${a[i]}`);
  for (let i = start; i <= endA; i++) out.push(`- ${i + 1}: ${a[i]}`);
  for (let i = start; i <= endB; i++) out.push(`+ ${i + 1}: ${b[i]}`);
  for (let i = endA + 1; i <= Math.min(a.length - 1, endA + context); i++) out.push(`  ${i + 1}: ${a[i]}`);
  return out.join("\n");
}

/**
 * Compares the server's real tools/list with a committed golden file. With UPDATE_GOLDEN=1 the file
 * is rewritten instead. Throws with a readable diff when they differ.
 */
export async function expectToolsListGolden(client: Client, golden: string | URL): Promise<void> {
  const path = golden instanceof URL ? fileURLToPath(golden) : golden;
  const actual = await renderToolsList(client);
  if (process.env["UPDATE_GOLDEN"] === "1") {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) {
    throw new Error(`Golden file ${path} is missing; run the tests with UPDATE_GOLDEN=1 to write it`);
  }
  const expected = readFileSync(path, "utf8");
  if (expected !== actual) {
    throw new Error(
      `tools/list differs from ${path} (rerun with UPDATE_GOLDEN=1 if the change is intended):\n${lineDiff(expected, actual)}`,
    );
  }
}

/** A JSON value with every object's keys sorted, so two renderings compare by content alone. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)]));
}

/**
 * Checks a tools/list against a golden file as JSON values: the same tools in the same order, with
 * the same fields and values, whatever the order of keys inside an object. This is for a second
 * client of a server whose golden file another client writes: the v2 client's 2025-era parse puts
 * the keys its schemas declare (`type`, `properties`, `required`) before the others, and its
 * 2026-07-28 parse keeps the server's order, so the two render one list in two key
 * orders. It never writes the file; `expectToolsListGolden` does.
 */
export async function expectToolsListMatchesGolden(client: Client, golden: string | URL): Promise<void> {
  const path = golden instanceof URL ? fileURLToPath(golden) : golden;
  const render = (text: string) => `${JSON.stringify(sortedKeys(JSON.parse(text)), null, 2)}\n`;
  if (!existsSync(path)) throw new Error(`Golden file ${path} is missing; expectToolsListGolden writes it`);
  const actual = render(await renderToolsList(client));
  const expected = render(readFileSync(path, "utf8"));
  if (expected !== actual) {
    throw new Error(
      `tools/list differs from ${path} (keys sorted on both sides):\n${lineDiff(expected, actual)}`,
    );
  }
}
