/**
 * The docs say only what is true (issue 31 point 9): every `chainmail …` command that the READMEs and
 * the chainmail docs pages name exists (it is in `chainmail --help`, and `chainmail WORD --help`
 * exits 0 while an unknown word exits 2), and every tool count they state is one the server really
 * lists: all of its tools (with the gated ones) or the ones listed whatever the policy says.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { chainmailTools } from "../src/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CHAINMAIL = path.join(root, "packages/chainmail/bin/chainmail.js");
const DOCS = [
  "README.md",
  "packages/chainmail/README.md",
  "packages/chainmail/BENCHMARKS.md",
  "packages/chainmail-mcp/README.md",
  ...fs
    .readdirSync(path.join(root, "apps/docs/content/docs/chainmail"))
    .filter((f) => f.endsWith(".mdx"))
    .map((f) => `apps/docs/content/docs/chainmail/${f}`),
];
const text = (f: string) => fs.readFileSync(path.join(root, f), "utf8");

const run = (args: string[]) =>
  spawnSync(process.execPath, [CHAINMAIL, ...args], {
    encoding: "utf8",
    input: "",
    env: { ...process.env, CHAINMAIL_HOME: "/nonexistent/chainmail-docs-truth" },
    timeout: 20_000,
  });

/** Each command a doc names in code: `chainmail` and the lowercase words after it (no arguments). */
function namedCommands(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of DOCS) {
    for (const m of text(file).matchAll(/`chainmail((?: [a-z][a-z-]*)+)/g)) {
      const words = m[1]!.trim().split(" ");
      const key = words.join(" ");
      found.set(key, [...(found.get(key) ?? []), file]);
    }
  }
  return found;
}

describe("the commands the docs name", () => {
  const usage = run(["--help"]).stdout;
  const commands = namedCommands();

  it("finds the commands in the docs at all (the scan works)", () => {
    expect(commands.has("policy confirm")).toBe(true);
    expect(commands.size).toBeGreaterThan(10);
  });

  it("an unknown command is an error, also with --help", () => {
    const r = run(["no-such-command", "--help"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown command "no-such-command"');
  });

  for (const [command, files] of namedCommands()) {
    it(`chainmail ${command} (named in ${[...new Set(files)].join(", ")}) exists`, () => {
      const [first, second] = command.split(" ");
      // `chainmail WORD --help` answers for a command the CLI knows, and exits 2 for any other.
      const r = run([first!, "--help"]);
      expect(r.status, r.stderr).toBe(0);
      expect(usage).toMatch(new RegExp(`^ {2}(?:.*\\| )?${first}\\b`, "m"));
      // A subcommand is in the usage line of its command: `cache sync`, `policy [status] | policy confirm`.
      if (second !== undefined)
        expect(usage).toMatch(new RegExp(`(?:^ {2}|\\| )${first} (?:\\[)?(?:[a-z-]+\\|)*${second}\\b`, "m"));
    });
  }
});

describe("every command of chainmail --help", () => {
  const usage = run(["--help"]).stdout;
  // The first word of each usage line (`  search [QUERY] ...`), and of each `| word` alternative on it.
  const words = new Set(
    [...usage.matchAll(/^ {2}([a-z][a-z-]*)\b(.*)$/gm)].flatMap((m) => [
      m[1]!,
      ...[...m[2]!.matchAll(/\| +([a-z][a-z-]*)\b/g)].map((x) => x[1]!),
    ]),
  );
  const readme = text("packages/chainmail/README.md");
  const cliSection = readme.slice(
    readme.indexOf("\n## CLI"),
    readme.indexOf("\n## ", readme.indexOf("\n## CLI") + 1),
  );

  it("finds the commands in the usage (the scan works)", () => {
    for (const w of ["search", "get", "thread", "audit", "outbox", "item", "flags", "raw"])
      expect(words.has(w), w).toBe(true);
  });

  for (const word of words) {
    it(`chainmail ${word} answers --help and is named in the README's CLI section`, () => {
      const r = run([word, "--help"]);
      expect(r.status, r.stderr).toBe(0);
      expect(cliSection).toMatch(new RegExp(`\`${word}\\b`));
    });
  }
});

describe("the tool counts the docs state", () => {
  const all = chainmailTools.length;
  const ungated = chainmailTools.filter((t) => t.visibleWhen === undefined).length;

  it("the server has the seed's 38 tools, 36 of them always listed", () => {
    expect([all, ungated]).toEqual([38, 36]);
  });

  for (const file of DOCS) {
    const counts = [...text(file).matchAll(/\b(\d+) (?:[a-z]+ ){0,2}tools\b/g)].map((m) => Number(m[1]));
    if (counts.length === 0) continue;
    it(`${file} states only true counts (${counts.join(", ")})`, () => {
      for (const n of counts) expect([all, ungated]).toContain(n);
    });
  }

  it("chainmail-mcp --help counts the tools listed without a daemon", () => {
    const r = spawnSync(
      process.execPath,
      [path.join(root, "packages/chainmail-mcp/bin/chainmail-mcp.js"), "--help"],
      {
        encoding: "utf8",
      },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`lists the ${ungated}\ntools that are not gated`);
  });
});
