// Walks the built site (out/) in headless Debian Chromium: every page loads cleanly and offline, every
// generated tool page shows its sections, search finds a tool, internal links resolve.
// Needs `npm run build` first; it never builds by itself (a build takes most of a minute).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startStaticServer } from "../scripts/static-server.mjs";

const APP = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(APP, "out");
const MANIFEST = join(APP, ".generated/reference.json");
const SCREENSHOT = join(APP, "test-results/reference-page.png");
const SECTIONS = ["description", "arguments", "example-call", "result", "annotations"] as const;
const SECTION_TITLES = ["Description", "Arguments", "Example call", "Result", "Annotations"];
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

interface ManifestServer {
  id: string;
  status: "generated" | "fixture" | "skipped" | "failed";
  tools: string[];
  toolPages: string[];
  toolsJson?: string;
}
interface SitePage {
  url: string;
  markdown: string;
  title: string;
}

let server: { url: string; close: () => Promise<void> };
let context: BrowserContext;
let profileDir: string;
let pages: SitePage[];
let manifest: { servers: ManifestServer[] };
/** Problems seen by the browser anywhere during the run, with the page that caused them. */
const problems: string[] = [];
const outsideRequests: string[] = [];
const aborted = new Set<string>();
const sectionProblems: string[] = [];
const checkedToolPages = new Set<string>();
let currentUrl = "";
/** Every same-site link seen on any page: target -> the first page linking to it. */
const links = new Map<string, string>();

function isLoopback(url: URL): boolean {
  return url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]";
}

beforeAll(async () => {
  if (!existsSync(join(OUT, "index.html")) || !existsSync(MANIFEST)) {
    throw new Error("apps/docs/out is missing: run `npm run build -w @mcpforge/docs` before the test");
  }
  manifest = JSON.parse(readFileSync(MANIFEST, "utf8"));
  server = await startStaticServer({ root: OUT });
  pages = ((await (await fetch(`${server.url}/pages.json`)).json()) as { pages: SitePage[] }).pages;
  rmSync(SCREENSHOT, { force: true });
  profileDir = mkdtempSync(join(tmpdir(), "docs-chromium-"));
  // A persistent context is the way to give Chromium a fresh --user-data-dir of our own.
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  // Nothing may leave the machine: record and block any request to a non-loopback host.
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === "data:" || url.protocol === "blob:" || isLoopback(url)) return route.continue();
    outsideRequests.push(`${currentUrl}: ${url.href}`);
    return route.abort();
  });
  context.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`${currentUrl}: console error: ${msg.text()}`);
  });
  context.on("weberror", (err) => problems.push(`${currentUrl}: page error: ${err.error().message}`));
  context.on("requestfailed", (req) => {
    const error = req.failure()?.errorText ?? "";
    // ERR_ABORTED is a cancellation, not a failure: the Next router cancels its own prefetches, and moving
    // to the next page cancels whatever the last one still loaded. Each such URL is fetched again at the
    // end and must be served. Every other failure, and every HTTP status >= 400, counts at once.
    if (error === "net::ERR_ABORTED") aborted.add(req.url());
    else problems.push(`${currentUrl}: request failed: ${req.url()} ${error}`);
  });
  context.on("response", (res) => {
    if (res.status() >= 400) problems.push(`${currentUrl}: HTTP ${res.status()} for ${res.url()}`);
  });
});

beforeEach(() => {
  // Each test answers for its own pages only.
  problems.length = 0;
});

afterAll(async () => {
  await context?.close();
  await server?.close();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

async function open(page: Page, path: string): Promise<void> {
  currentUrl = path;
  const res = await page.goto(`${server.url}${path}`, { waitUntil: "load" });
  expect(res?.status(), `status of ${path}`).toBe(200);
  // Let hydration finish (the main thread goes idle), so its errors count for this page. Requests still in
  // flight when the walk moves on are cancelled, recorded, and fetched again by a later test.
  await page.evaluate(
    () => new Promise<void>((done) => requestIdleCallback(() => done(), { timeout: 5_000 })),
  );
}

/** What is missing on a tool page: each section heading, and an example tools/call naming the tool. */
async function sectionProblemsOf(page: Page, path: string): Promise<string[]> {
  const found: string[] = [];
  for (const [i, id] of SECTIONS.entries()) {
    const heading = page.locator(`h2#${id}`);
    if ((await heading.count()) !== 1) found.push(`${path}: no single h2#${id}`);
    else if (!(await heading.isVisible())) found.push(`${path}: h2#${id} is not visible`);
    else if (!(await heading.textContent())?.includes(SECTION_TITLES[i]!)) {
      found.push(`${path}: h2#${id} does not read "${SECTION_TITLES[i]}"`);
    }
  }
  const tool = path.split("/").pop();
  const example = page.locator("pre", { hasText: '"tools/call"' }).first();
  if ((await example.count()) === 0 || !(await example.textContent())?.includes(`"${tool}"`)) {
    found.push(`${path}: no example tools/call naming "${tool}"`);
  }
  return found;
}

async function collectLinks(page: Page, from: string): Promise<void> {
  const hrefs = await page.$$eval("a[href]", (as) => as.map((a) => (a as HTMLAnchorElement).href));
  for (const href of hrefs) {
    const url = new URL(href);
    if (!isLoopback(url)) continue;
    const key = url.pathname + url.hash;
    if (!links.has(key)) links.set(key, from);
  }
}

describe("the built docs site", () => {
  it("has a generated reference for at least one server, and each generated server's mcp-tools.json", async () => {
    const generated = manifest.servers.filter((s) => s.status === "generated" || s.status === "fixture");
    expect(generated.length, "servers with generated reference pages").toBeGreaterThan(0);
    for (const s of generated) {
      expect(s.toolPages.length, `${s.id} tool pages`).toBeGreaterThan(0);
      const res = await fetch(`${server.url}/${s.id}/mcp-tools.json`);
      expect(res.status, `/${s.id}/mcp-tools.json`).toBe(200);
      const body = JSON.stringify(await res.json());
      for (const tool of s.tools) expect(body).toContain(`"${tool}"`);
    }
  });

  it("opens every page with no console error, failed request or request leaving the machine", async () => {
    expect(pages.length).toBeGreaterThan(10);
    const toolPages = new Set(manifest.servers.flatMap((s) => s.toolPages));
    const page = await context.newPage();
    // One visit per page: the section checks of tool pages happen on the same visit (the walk is the
    // slow part of this file), and their findings are asserted by the next test.
    // The home page is not a docs page, so /pages.json does not list it.
    for (const p of [{ url: "/", title: "mcpforge", markdown: "" }, ...pages]) {
      await open(page, p.url);
      await expect(page.locator("h1").first().textContent()).resolves.toBe(p.title);
      await collectLinks(page, p.url);
      if (toolPages.has(p.url)) {
        sectionProblems.push(...(await sectionProblemsOf(page, p.url)));
        checkedToolPages.add(p.url);
        if (!existsSync(SCREENSHOT)) {
          mkdirSync(dirname(SCREENSHOT), { recursive: true });
          await page.screenshot({ path: SCREENSHOT, fullPage: true });
        }
      }
    }
    await page.close();
    expect(outsideRequests).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("shows every section on every tool page of every generated server", () => {
    const toolPages = manifest.servers.flatMap((s) => s.toolPages);
    expect(toolPages.length).toBeGreaterThan(0);
    expect([...checkedToolPages].sort(), "tool pages visited (each must be in /pages.json)").toEqual(
      [...toolPages].sort(),
    );
    expect(sectionProblems).toEqual([]);
    expect(existsSync(SCREENSHOT), `screenshot at ${SCREENSHOT}`).toBe(true);
  });

  it("finds a tool by its name with the offline search", async () => {
    // A tool name only one server has: two servers' pages of one name (dexi's and notes-status's
    // update_note) are both hits, in an order the search does not promise
    const toolNames = manifest.servers.flatMap((x) => x.toolPages.map((p) => p.split("/").pop()!));
    const once = (name: string) => toolNames.filter((n) => n === name).length === 1;
    const toolPage = manifest.servers.flatMap((x) => x.toolPages).find((p) => once(p.split("/").pop()!))!;
    expect(toolPage).toBeDefined();
    const tool = toolPage.split("/").pop()!;
    const title = pages.find((p) => p.url === toolPage)?.title ?? tool;
    const page = await context.newPage();
    await open(page, "/docs");
    await page.locator("button[data-search-full]").first().click();
    const input = page.getByRole("dialog").locator("input");
    await input.fill(tool);
    // A page hit is a result whose title line is the page's title; choosing it must open the tool's page.
    const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const hit = page
      .getByRole("dialog")
      .locator("button")
      .filter({ has: page.locator("div.font-medium", { hasText: new RegExp(`^${escaped}$`) }) })
      .first();
    await hit.waitFor({ state: "visible", timeout: 15_000 });
    await hit.click();
    await page.waitForURL((url) => url.pathname === toolPage, { timeout: 15_000 });
    await expect(page.locator("h1").first().textContent()).resolves.toBe(title);
    await page.close();
    expect(outsideRequests).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("resolves every internal link and #anchor found on the pages", async () => {
    expect(links.size).toBeGreaterThan(0);
    const htmlCache = new Map<string, string>();
    const broken: string[] = [];
    for (const [target, from] of links) {
      const [path = "/", hash] = target.split("#");
      let html = htmlCache.get(path);
      if (html === undefined) {
        const res = await fetch(`${server.url}${path}`);
        html = res.status === 200 ? await res.text() : "";
        htmlCache.set(path, html);
        if (res.status !== 200) broken.push(`${from} -> ${target}: HTTP ${res.status}`);
      }
      if (hash && html && !html.includes(`id="${decodeURIComponent(hash)}"`)) {
        broken.push(`${from} -> ${target}: no element with id "${hash}"`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("serves every request the browser cancelled", async () => {
    const broken: string[] = [];
    for (const url of aborted) {
      const res = await fetch(url);
      if (res.status !== 200) broken.push(`${url}: HTTP ${res.status}`);
    }
    expect(broken).toEqual([]);
  });

  it("serves llms.txt, llms-full.txt and a Markdown copy of every page", async () => {
    const index = await (await fetch(`${server.url}/llms.txt`)).text();
    const full = await (await fetch(`${server.url}/llms-full.txt`)).text();
    for (const p of pages) {
      expect(index, `llms.txt lists ${p.url}`).toContain(`(${p.markdown})`);
      expect(full, `llms-full.txt has ${p.url}`).toContain(`# ${p.title} (${p.url})`);
      const res = await fetch(`${server.url}${p.markdown}`);
      expect(res.status, p.markdown).toBe(200);
      expect(await res.text()).toContain(`# ${p.title} (${p.url})`);
    }
  });
});
