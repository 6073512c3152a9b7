import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ListedTool, ServerInfo } from "../src/model.js";
import { type Io, run } from "../src/run.js";

export const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
export const TOOLKIT_DIR = join(PACKAGE_DIR, "..", "toolkit");
export const EXAMPLE_CLI = join(TOOLKIT_DIR, "dist", "example", "bin", "mcpforge-example.js");
export const STATIC_SERVER = fileURLToPath(new URL("./fixtures/static-server.mjs", import.meta.url));

/** Builds the kit when its dist is missing (a fresh clone that ran no build yet). */
export function ensureKitBuilt(): void {
  if (existsSync(EXAMPLE_CLI)) return;
  execFileSync("npx", ["tsup"], { cwd: TOOLKIT_DIR, stdio: "ignore" });
}

export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `refgen-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A gate file that lists the example's gated `purge` tool, so the reference covers every tool. */
export function openGate(dir: string): string {
  const path = join(dir, "gate.json");
  writeFileSync(path, JSON.stringify({ allowPurge: true }));
  return path;
}

/** The example server as the docs read it: with its output schemas, which the Result sections come from. */
export function exampleCommand(gateFile?: string): string {
  return `node ${quote(EXAMPLE_CLI)} --output-schemas${gateFile ? ` --gate-file ${quote(gateFile)}` : ""}`;
}

export function staticCommand(fixture: string, ...flags: string[]): string {
  return ["node", STATIC_SERVER, fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url)), ...flags]
    .map(quote)
    .join(" ");
}

function quote(word: string): string {
  return /^[\w/.:=@+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process (the same code as the bin) and captures what it prints. */
export async function cli(args: string[], cwd?: string): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    ...(cwd ? { cwd } : {}),
  };
  const code = await run(args, io);
  return { code, stdout, stderr };
}

export function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) out.set(name, readFileSync(join(dir, name), "utf8"));
  return out;
}

export function loadFixture(name: string): { server: ServerInfo; tools: ListedTool[] } {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), "utf8"));
}
