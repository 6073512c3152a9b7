#!/usr/bin/env node
/**
 * Every regular expression in a package's source, checked for super-linear backtracking (ReDoS)
 * with recheck, as each package's `lint` runs it: `node ../../scripts/redos-audit.mjs src`.
 *
 * Why: these servers match patterns against text they do not control (a stranger's mail, a shared
 * note, a feed item, a server's reply), and patterns that backtracked quadratically held a
 * server for 36 s on one crafted note before they were found by hand, one at a time. recheck
 * decides each pattern from its automaton (and fuzzing where that is not enough) and names an attack string when it finds one.
 *
 * A pattern flagged here is either rewritten or marked with a comment `redos-ok: <why>`, on its line
 * or in the comment right above it, saying why it is safe after all (its input is short or the
 * project's own, or a reason recheck cannot see). Patterns built at run time (`new RegExp(variable)`)
 * cannot be checked here and need the same mark. Code under `testing/` and `bench/` is left out:
 * it only ever reads the tests' own data.
 */
import fs from "node:fs";
import path from "node:path";
import { checkSync } from "recheck";
import ts from "typescript";

const MARK = "redos-ok:";
const SKIP_DIRS = new Set(["node_modules", "dist", "testing", "bench"]);
const EXTENSIONS = /\.(?:ts|tsx|mts|js|mjs)$/;

function* sourceFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) yield* sourceFiles(path.join(dir, entry.name));
    } else if (EXTENSIONS.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      yield path.join(dir, entry.name);
    }
  }
}

/** The patterns of one file: literals, and `RegExp(...)` / `new RegExp(...)` with a literal or not. */
function patternsOf(file) {
  const text = fs.readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const literalText = (node) =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const raw = node.getText(source);
      const end = raw.lastIndexOf("/");
      found.push({ node, pattern: raw.slice(1, end), flags: raw.slice(end + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "RegExp" &&
      node.arguments?.length
    ) {
      const [first, second] = node.arguments;
      const pattern = literalText(first);
      const flags = second === undefined ? "" : literalText(second);
      found.push({ node, pattern, flags, dynamic: pattern === undefined || flags === undefined });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const lines = text.split("\n");
  return found.map((p) => {
    const line = source.getLineAndCharacterOfPosition(p.node.getStart(source)).line;
    // The mark on the pattern's line or in the comment lines right above it
    let marked = lines[line]?.includes(MARK) ?? false;
    for (let i = line - 1; !marked && i >= 0 && /^\s*(\/\/|\/\*|\*)/.test(lines[i] ?? ""); i--)
      marked = lines[i]?.includes(MARK) ?? false;
    return { ...p, file, line: line + 1, marked };
  });
}

const roots = process.argv.slice(2);
if (roots.length === 0) {
  console.error("usage: redos-audit.mjs <dir>...");
  process.exit(2);
}
const problems = [];
let checked = 0;
for (const root of roots) {
  for (const file of sourceFiles(root)) {
    for (const p of patternsOf(file)) {
      checked++;
      const where = `${path.relative(process.cwd(), p.file)}:${p.line}`;
      if (p.marked) continue;
      if (p.dynamic) {
        problems.push(`${where}: a pattern built at run time cannot be checked; mark it "${MARK} <why>"`);
        continue;
      }
      const result = checkSync(p.pattern, p.flags, { timeout: 10_000 });
      if (result.status === "safe") continue;
      const detail =
        result.status === "vulnerable"
          ? `${result.complexity.type} backtracking, e.g. on ${result.attack.pattern}`
          : `recheck could not decide (${result.error?.kind ?? result.status})`;
      problems.push(`${where}: /${p.pattern}/${p.flags}: ${detail}`);
    }
  }
}
if (problems.length > 0) {
  console.error(`redos-audit: ${problems.length} of ${checked} patterns need a rewrite or a "${MARK}" mark:`);
  for (const line of problems) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`redos-audit: ${checked} patterns, none backtracks super-linearly (or each says why not)`);
