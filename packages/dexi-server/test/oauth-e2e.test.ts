import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userId } from "./helpers.js";
import {
  callbackServer,
  type ConsentChoice,
  consentIn,
  launchBrowser,
  type OAuthServer,
  startOAuthServer,
  TestProvider,
} from "./oauth-helpers.js";

/**
 * The whole flow as a person and an app live it: the SDK client's own OAuth support discovers,
 * registers and redeems, while headless Chromium signs in and consents on Dexi's real pages.
 */

const SHOTS = fileURLToPath(new URL("./screenshots/", import.meta.url));

let server: OAuthServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let callback: Awaited<ReturnType<typeof callbackServer>>;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startOAuthServer();
  browser = await launchBrowser();
  callback = await callbackServer();
  // Ann's own notes: some in folder Work tagged #client, some elsewhere.
  const ann = { userId: await userId(server.app, "ann"), scopes: ["notes:read", "notes:write"] };
  for (const [title, text, folder] of [
    ["Kickoff", "Client kickoff agenda #client", "Work"],
    ["Invoice", "Send the invoice #client #money", "Work"],
    ["Holiday", "Pack sunscreen #trip", null],
  ] as const) {
    const n = await server.app.notes.create(ann, { title, text });
    if (folder) await server.app.notes.file(ann, n.id, folder);
  }
}, 60_000);

afterAll(async () => {
  await callback?.close();
  await browser?.close();
  await server?.close();
});

type Era = "legacy" | "modern";

const clientFor = (era: Era) =>
  new Client(
    { name: "oauth-e2e", version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );

/**
 * Connects with the SDK's OAuth support; whenever it sends the person to Dexi, the browser consents
 * with `choice` and the transport finishes with the code the redirect brought back.
 */
async function connectWithConsent(
  era: Era,
  provider: TestProvider,
  page: Page,
  choice: ConsentChoice,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { authProvider: provider });
    const client = clientFor(era);
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      const back = callback.wait();
      await consentIn(page, provider.authUrls.at(-1)!, choice);
      await transport.finishAuth(await back);
    }
  }
  throw new Error("never connected");
}

/** A tool call that, refused for scope, steps up through the browser once and is tried again. */
async function callWithStepUp(
  c: { client: Client; transport: StreamableHTTPClientTransport },
  provider: TestProvider,
  page: Page,
  name: string,
  args: Record<string, unknown>,
  choice: ConsentChoice,
) {
  try {
    return await c.client.callTool({ name, arguments: args });
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    const back = callback.wait();
    await consentIn(page, provider.authUrls.at(-1)!, choice);
    await c.transport.finishAuth(await back);
    return c.client.callTool({ name, arguments: args });
  }
}

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
const titles = (r: Result) =>
  ((r.structuredContent?.["items"] as { title: string }[]) ?? []).map((i) => i.title).sort();

describe.each(["legacy", "modern"] as const)("the %s era", (era) => {
  it("consents read-only to folder Work, is held to it, steps up to write, and stops when revoked", async () => {
    const context = await browser.browser.newContext();
    const page = await context.newPage();
    const provider = new TestProvider(callback.url, `Test App (${era})`);
    const shots = era === "legacy" ? { signIn: `${SHOTS}sign-in.png`, consent: `${SHOTS}consent.png` } : {};
    const c = await connectWithConsent(era, provider, page, {
      untick: ["notes:write"],
      folder: "Work",
      shots,
    });
    expect(provider.saved?.scope).toBe("notes:read");

    // Within the grant: only the folder's notes.
    const listed = (await c.client.callTool({ name: "list_notes", arguments: {} })) as Result;
    expect(listed.isError).toBeFalsy();
    const shown = (listed.structuredContent?.["items"] as { title: string; folder?: string }[]) ?? [];
    expect(titles(listed)).toEqual(expect.arrayContaining(["Invoice", "Kickoff"]));
    expect(shown.every((n) => n.folder === "Work")).toBe(true);
    const found = (await c.client.callTool({
      name: "search_notes",
      arguments: { query: "sunscreen" },
    })) as Result;
    expect(found.structuredContent?.["total"]).toBe(0);

    // Outside the scope: the server answers 403 insufficient_scope, the SDK re-authorizes, the person
    // consents again (now to writing), and the call goes through.
    const before = provider.authUrls.length;
    const created = (await callWithStepUp(
      c,
      provider,
      page,
      "create_note",
      { title: `Call ${era}`, text: "Phone the client" },
      {
        folder: "Work",
        tag: "#client",
      },
    )) as Result;
    expect(provider.authUrls.length).toBe(before + 1);
    expect(provider.authUrls.at(-1)!.searchParams.get("scope")?.split(" ").sort()).toEqual([
      "notes:read",
      "notes:write",
    ]);
    expect(created.isError).toBeFalsy();
    expect(provider.saved?.scope?.split(" ").sort()).toEqual(["notes:read", "notes:write"]);
    // The boundary still holds for writes: the note went into Work with #client.
    const note = (await c.client.callTool({
      name: "get_note",
      arguments: { note_id: created.structuredContent!["id"] },
    })) as Result;
    expect(note.structuredContent).toMatchObject({ folder: "Work", tags: ["#client"] });

    // One live grant per app: the step-up replaced the first.
    const grants = (await server.setup.auth.grants(await userId(server.app, "ann"))).filter(
      (g) => g.clientName === provider.name,
    );
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({
      scopes: ["notes:read", "notes:write"],
      folder: "Work",
      tag: "#client",
    });

    // The connected-apps page lists it; revoking there stops the token at once.
    await page.goto(`${server.base}/apps`);
    const row = page.locator("tr", { hasText: provider.name });
    await expect(row.textContent()).resolves.toContain("folder Work, tag #client");
    if (era === "legacy") await page.screenshot({ path: `${SHOTS}connected-apps.png`, fullPage: true });
    await row.locator('form[action="/apps/revoke"] button').click();
    await page.waitForURL(`${server.base}/apps`);
    await expect(page.locator("tr", { hasText: provider.name }).count()).resolves.toBe(0);

    const raw = await fetch(server.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toContain(
      `resource_metadata="${server.setup.resourceMetadataUrl}"`,
    );
    await expect(c.client.callTool({ name: "list_notes", arguments: {} })).rejects.toThrow();
    await context.close();
  }, 120_000);
});

it("shows a request it cannot answer on a page of its own, never redirecting", async () => {
  const context = await browser.browser.newContext();
  const page = await context.newPage();
  const r = await page.goto(
    `${server.base}/authorize?client_id=unknown-app&redirect_uri=https%3A%2F%2Fevil.example%2F`,
  );
  expect(r?.status()).toBe(400);
  expect(page.url()).toContain(`${server.base}/authorize`);
  await expect(page.locator("p").first().textContent()).resolves.toBe("This app is not registered with Dexi");
  await page.screenshot({ path: `${SHOTS}cannot-connect.png`, fullPage: true });
  await context.close();
}, 60_000);

it("restricting further on the connected-apps page narrows a live token at once", async () => {
  const context = await browser.browser.newContext();
  const page = await context.newPage();
  const provider = new TestProvider(callback.url, "Narrowed App");
  const c = await connectWithConsent("modern", provider, page, {});
  const all = (await c.client.callTool({ name: "list_notes", arguments: {} })) as Result;
  expect(titles(all).length).toBeGreaterThanOrEqual(3);
  await page.goto(`${server.base}/apps`);
  const row = page.locator("tr", { hasText: "Narrowed App" });
  await row.locator('input[name="scope"][value="notes:write"]').uncheck();
  await row.locator('select[name="tag"]').selectOption("#trip");
  await row.locator('form[action="/apps/restrict"] button').click();
  await page.waitForURL(`${server.base}/apps`);
  const narrowed = (await c.client.callTool({ name: "list_notes", arguments: {} })) as Result;
  expect(titles(narrowed)).toEqual(["Holiday"]);
  const g = (await server.setup.auth.grants(await userId(server.app, "ann"))).find(
    (x) => x.clientName === "Narrowed App",
  );
  expect(g).toMatchObject({ scopes: ["notes:read"], tag: "#trip", folder: null });
  await context.close();
}, 120_000);
