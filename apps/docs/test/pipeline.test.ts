// The reference pipeline and the static server, without a browser or a build: fast checks of the pieces
// the site test relies on.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { generate, SERVERS } from "../scripts/generate-reference.mjs";
import { resolveFile, startStaticServer } from "../scripts/static-server.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures/reference");
const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "docs-pipeline-"));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("generate-reference", () => {
  it("copies a server's reference into content/, its mcp-tools.json to the stable URL, and lists it", async () => {
    const app = tempDir();
    const manifest = await generate({ fixtures: FIXTURES, appDir: app });
    const kit = manifest.servers.find((s) => s.id === "kit")!;
    expect(kit.status).toBe("fixture");
    expect(kit.toolPages).toEqual(["/docs/kit/reference/add_note", "/docs/kit/reference/read_message"]);
    expect(kit.tools).toEqual(["add_note", "read_message"]);
    expect(existsSync(join(app, "content/docs/kit/reference/add_note.mdx"))).toBe(true);
    expect(existsSync(join(app, "content/docs/kit/reference/meta.json"))).toBe(true);
    // The schemas live at the stable URL only, never as a content file.
    expect(existsSync(join(app, "content/docs/kit/reference/mcp-tools.json"))).toBe(false);
    const json = JSON.parse(readFileSync(join(app, "public/kit/mcp-tools.json"), "utf8"));
    expect(json.tools.map((t: { name: string }) => t.name)).toEqual(["add_note", "read_message"]);
    const written = JSON.parse(readFileSync(join(app, ".generated/reference.json"), "utf8"));
    expect(written.servers.map((s: { id: string }) => s.id)).toEqual(SERVERS.map((s) => s.id));
  });

  it("gives a server without a reference a placeholder page, so links to its reference still resolve", async () => {
    const app = tempDir();
    const manifest = await generate({ fixtures: FIXTURES, appDir: app });
    const dexi = manifest.servers.find((s) => s.id === "dexi")!;
    expect(dexi.status).toBe("skipped");
    expect(dexi.toolPages).toEqual([]);
    const page = readFileSync(join(app, "content/docs/dexi/reference/index.mdx"), "utf8");
    expect(page).toMatch(/^---\ntitle: Tool reference\n/);
    expect(page).toContain("was not generated in this build");
    expect(existsSync(join(app, "public/dexi/mcp-tools.json"))).toBe(false);
  });

  it("replaces a previous run's pages, dropping tools that are gone", async () => {
    const app = tempDir();
    const stale = join(app, "content/docs/kit/reference/removed_tool.mdx");
    mkdirSync(dirname(stale), { recursive: true });
    writeFileSync(stale, "---\ntitle: removed_tool\n---\n");
    await generate({ fixtures: FIXTURES, appDir: app });
    expect(existsSync(stale)).toBe(false);
  });
});

describe("static-server", () => {
  it("maps /a/b to a/b, a/b.html or a/b/index.html, and never leaves the root", () => {
    const root = tempDir();
    mkdirSync(join(root, "docs/kit"), { recursive: true });
    writeFileSync(join(root, "docs/kit.html"), "kit");
    writeFileSync(join(root, "docs/kit/index.html"), "not this one");
    writeFileSync(join(root, "index.html"), "home");
    writeFileSync(join(root, "llms.txt"), "llms");
    expect(resolveFile(root, "/docs/kit")).toBe(join(root, "docs/kit.html"));
    expect(resolveFile(root, "/docs/kit/")).toBe(join(root, "docs/kit/index.html"));
    expect(resolveFile(root, "/")).toBe(join(root, "index.html"));
    expect(resolveFile(root, "/llms.txt")).toBe(join(root, "llms.txt"));
    expect(resolveFile(root, "/missing")).toBeUndefined();
    expect(resolveFile(root, "/../../etc/passwd")).toBeUndefined();
    expect(resolveFile(root, "/%2e%2e/%2e%2e/etc/passwd")).toBeUndefined();
    expect(resolveFile(root, "/%E0%A4%A")).toBeUndefined();
  });

  it("serves 404.html with status 404 for a missing page, on loopback", async () => {
    const root = tempDir();
    writeFileSync(join(root, "404.html"), "<h1>gone</h1>");
    writeFileSync(join(root, "search"), '{"type":"advanced"}');
    const server = await startStaticServer({ root });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const missing = await fetch(`${server.url}/nope`);
      expect(missing.status).toBe(404);
      expect(await missing.text()).toBe("<h1>gone</h1>");
      const index = await fetch(`${server.url}/search?x=1`);
      expect(index.status).toBe(200);
      expect(index.headers.get("content-type")).toContain("application/json");
      expect((await fetch(`${server.url}/search`, { method: "POST" })).status).toBe(405);
    } finally {
      await server.close();
    }
  });
});
