#!/usr/bin/env node
// Generates each server's reference pages from its running tools/list, through reference-gen.
// Output is never edited by hand and never committed (see .gitignore): the build runs this first.
//
//   node scripts/generate-reference.mjs                 run reference-gen against every built server
//   node scripts/generate-reference.mjs --fixtures DIR  copy DIR/<server>/ instead (tests of the pipeline)
//
// Per server it writes content/docs/<server>/reference/ (<tool>.mdx, index.mdx, meta.json),
// public/<server>/mcp-tools.json (the stable URL), and one manifest, .generated/reference.json,
// that the site test reads to know which tool pages must exist.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const APP = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = resolve(APP, "../..");
const REFERENCE_GEN_CLI = join(ROOT, "packages/reference-gen/dist/cli.js");

/**
 * The servers the site documents; `bin` is relative to the package, `args` make it start without
 * setup. `--output-schemas`: the pages' Result sections are rendered from each tool's output schema,
 * which a kit server lists only when asked.
 */
export const SERVERS = [
  {
    id: "dexi",
    title: "Dexi",
    pkg: "packages/dexi-server",
    bin: "dist/bin/dexi-mcp.js",
    args: ["--db", ":memory:", "--output-schemas"],
  },
  {
    id: "notes-status",
    title: "notes-status",
    pkg: "packages/notes-status-server",
    bin: "dist/bin/notes-status-mcp.js",
    args: ["--db", ":memory:", "--output-schemas"],
  },
  {
    id: "chainmail",
    title: "chainmail",
    pkg: "packages/chainmail-mcp",
    bin: "bin/chainmail-mcp.js",
    // A home with no daemon, so no running daemon of the user changes the pages; the gated tools are
    // listed anyway, as the reference must cover them.
    args: ["--home", "/nonexistent/chainmail-reference", "--list-gated-tools", "--output-schemas"],
  },
  {
    id: "kit",
    title: "the kit's example server",
    pkg: "packages/toolkit",
    bin: "dist/example/bin/mcpforge-example.js",
    args: ["--output-schemas"],
  },
];

function parseArgs(argv) {
  const opts = { fixtures: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--fixtures") opts.fixtures = resolve(argv[++i] ?? "");
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

const say = (line) => process.stderr.write(`generate-reference: ${line}\n`);

/** reference-gen's in-process entry (`run(argv, io)`, the CLI as a function), or undefined when not built. */
async function loadReferenceGen() {
  try {
    const lib = await import("@mcpforge/reference-gen");
    return typeof lib.run === "function" ? lib.run : undefined;
  } catch {
    return undefined;
  }
}

function referenceGenArgs(server, out) {
  const bin = join(ROOT, server.pkg, server.bin);
  // reference-gen splits this like a shell would (quotes, escapes) but runs no shell.
  const command = [process.execPath, bin, ...server.args]
    .map((a) => (/[\s"'\\]/.test(a) ? JSON.stringify(a) : a))
    .join(" ");
  return [
    "--server",
    command,
    "--out",
    out,
    "--base-path",
    `/docs/${server.id}/reference`,
    // Pages link the stable URL the site serves the schemas at.
    "--json-url",
    `/${server.id}/mcp-tools.json`,
  ];
}

/** Runs reference-gen for one server into `out`; returns an error message or undefined. */
async function runReferenceGen(server, out, lib) {
  const args = referenceGenArgs(server, out);
  if (lib) {
    let errors = "";
    const code = await lib(args, {
      stdout: () => {},
      stderr: (t) => (errors += t),
      cwd: join(ROOT, server.pkg),
    });
    return code === 0 ? undefined : `reference-gen exited ${code}: ${errors.trim().slice(-2000)}`;
  }
  const res = spawnSync(process.execPath, [REFERENCE_GEN_CLI, ...args], {
    cwd: join(ROOT, server.pkg),
    encoding: "utf8",
    timeout: 90_000,
  });
  if (res.error) return res.error.message;
  if (res.status !== 0)
    return `reference-gen exited ${res.status}: ${(res.stderr || res.stdout).trim().slice(-2000)}`;
  return undefined;
}

/** What a server's section shows when its reference could not be generated: links to it stay valid. */
function writePlaceholder(server, out, reason) {
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "index.mdx"),
    `---
title: Tool reference
description: The reference pages of ${server.title} are generated from the built server at build time.
---

The reference for ${server.title} was not generated in this build: ${reason}

Build the server (\`npm run build -w @mcpforge/${server.pkg.split("/")[1]}\`) and reference-gen, then rebuild the site
(\`npm run build -w @mcpforge/docs\`). Each tool then gets a page with its description, arguments, an example call,
its result and its annotations.
`,
  );
  writeFileSync(
    join(out, "meta.json"),
    `${JSON.stringify({ title: "Tool reference", pages: ["index"] }, null, 2)}\n`,
  );
}

/** Tool names from mcp-tools.json, whichever of the usual shapes it has. */
function toolNamesFrom(file) {
  try {
    const data = JSON.parse(readFileSync(file, "utf8"));
    const list = Array.isArray(data) ? data : Array.isArray(data.tools) ? data.tools : [];
    return list.map((t) => t?.name).filter((n) => typeof n === "string");
  } catch {
    return [];
  }
}

/** Local absolute links to an mcp-tools.json in the generated pages, so each is served where it points. */
function linkedToolsJsonPaths(dir) {
  const paths = new Set();
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".mdx")) continue;
    const text = readFileSync(join(dir, f), "utf8");
    // redos-ok: build time, over the pages reference-gen wrote from our own servers' tools/list
    for (const m of text.matchAll(/\]\((\/[^)\s#?]*mcp-tools\.json)\)/g)) paths.add(m[1]);
  }
  return [...paths];
}

/**
 * Regenerates every server's reference. `opts.fixtures`: copy DIR/<server>/ instead of running
 * reference-gen; `opts.appDir`: write under another app folder (tests), default this app.
 */
export async function generate(opts) {
  const app = opts.appDir ?? APP;
  const manifest = { generatedAt: new Date().toISOString(), servers: [] };
  const lib = opts.fixtures ? undefined : await loadReferenceGen();
  const haveGen = !!lib || existsSync(REFERENCE_GEN_CLI);
  if (!opts.fixtures && !haveGen)
    say(`reference-gen is not built (${REFERENCE_GEN_CLI}); every reference is a placeholder`);
  for (const server of SERVERS) {
    const out = join(app, "content/docs", server.id, "reference");
    const publicJson = join(app, "public", server.id, "mcp-tools.json");
    const tmp = mkdtempSync(join(tmpdir(), `docs-ref-${server.id}-`));
    let status = "generated";
    let reason;
    try {
      if (opts.fixtures) {
        const src = join(opts.fixtures, server.id);
        if (existsSync(src)) {
          cpSync(src, tmp, { recursive: true });
          status = "fixture";
        } else {
          status = "skipped";
          reason = "no fixture for this server";
        }
      } else if (!existsSync(join(ROOT, server.pkg, server.bin))) {
        status = "skipped";
        reason = `the server is not built (${server.pkg}/${server.bin} is missing)`;
      } else if (!haveGen) {
        status = "skipped";
        reason = "reference-gen is not built";
      } else {
        reason = await runReferenceGen(server, tmp, lib);
        if (reason) status = "failed";
      }
      if (status === "generated" || status === "fixture") {
        if (!existsSync(join(tmp, "index.mdx")) || !existsSync(join(tmp, "mcp-tools.json"))) {
          status = "failed";
          reason = "the output has no index.mdx or mcp-tools.json";
        }
      }
      rmSync(out, { recursive: true, force: true });
      rmSync(publicJson, { force: true });
      const entry = { id: server.id, title: server.title, status, tools: [], toolPages: [] };
      if (status === "generated" || status === "fixture") {
        const toolsJson = join(tmp, "mcp-tools.json");
        mkdirSync(dirname(publicJson), { recursive: true });
        cpSync(toolsJson, publicJson);
        for (const linked of linkedToolsJsonPaths(tmp)) {
          const target = join(app, "public", linked);
          if (target !== publicJson) {
            mkdirSync(dirname(target), { recursive: true });
            cpSync(toolsJson, target);
          }
        }
        entry.tools = toolNamesFrom(toolsJson);
        rmSync(toolsJson);
        mkdirSync(dirname(out), { recursive: true });
        cpSync(tmp, out, { recursive: true });
        const pages = readdirSync(out).filter((f) => f.endsWith(".mdx") && f !== "index.mdx");
        entry.toolPages = pages.map((f) => `/docs/${server.id}/reference/${f.slice(0, -4)}`).sort();
        entry.toolsJson = `/${server.id}/mcp-tools.json`;
        say(`${server.id}: ${status}, ${pages.length} tool pages`);
      } else {
        writePlaceholder(server, out, reason);
        entry.reason = reason;
        say(`${server.id}: ${status} (${reason}); wrote a placeholder page`);
      }
      manifest.servers.push(entry);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  mkdirSync(join(app, ".generated"), { recursive: true });
  writeFileSync(join(app, ".generated/reference.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const manifest = await generate(parseArgs(process.argv.slice(2)));
    if (manifest.servers.some((s) => s.status === "failed")) process.exitCode = 1;
  } catch (err) {
    say(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  }
}
