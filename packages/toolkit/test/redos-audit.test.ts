/**
 * scripts/redos-audit.mjs, which every package's lint runs over its source: it refuses a pattern
 * that backtracks super-linearly and a pattern built at run time, unless a `redos-ok:` comment says
 * why it is safe, and passes linear patterns.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function audit(files: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "redos-audit-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const r = spawnSync(process.execPath, [path.join(root, "scripts", "redos-audit.mjs"), "src"], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

it("refuses a quadratic pattern and names an attack on it", () => {
  const r = audit({ "src/a.ts": 'export const trim = (s: string) => s.replace(/\\s+$/, "");\n' });
  expect(r.code).toBe(1);
  expect(r.out).toMatch(/src\/a\.ts:1: \/\\s\+\$\/: polynomial backtracking, e\.g\. on /);
});

it("refuses a pattern built at run time, and accepts either once marked", () => {
  const dynamic = "export const has = (w: string, s: string) => new RegExp(w).test(s);\n";
  expect(audit({ "src/b.ts": dynamic }).out).toContain("src/b.ts:1: a pattern built at run time");
  const marked = audit({
    "src/b.ts": `// A word of ours.\n// redos-ok: one literal word\n${dynamic}`,
    "src/c.ts": 'export const t = (s: string) => s.replace(/\\s+$/, ""); // redos-ok: a short field\n',
  });
  expect(marked.code).toBe(0);
});

it("passes linear patterns, and leaves testing/ and bench/ code out", () => {
  const r = audit({
    "src/d.ts": "export const words = (s: string) => s.split(/\\s+/).filter((w) => /^[a-z]+$/i.test(w));\n",
    "src/testing/e.ts": 'export const t = (s: string) => s.replace(/\\s+$/, "");\n',
  });
  expect(r.code).toBe(0);
  expect(r.out).toContain("redos-audit: 2 patterns");
});
