import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ClientDocuments } from "../src/auth/documents.js";
import {
  authorizeUrl,
  FormClient,
  type OAuthServer,
  pkce,
  rawConsent,
  startOAuthServer,
  tokenRequest,
} from "./oauth-helpers.js";

/** Client ID metadata documents, served from loopback (the only place tests may fetch from). */

const REDIRECT = "http://127.0.0.1:9/callback";
let docs: Server;
let docBase: string;
let hits: Record<string, number> = {};
let server: OAuthServer;

beforeAll(async () => {
  docs = createServer((req, res) => {
    const path = req.url ?? "/";
    hits[path] = (hits[path] ?? 0) + 1;
    const id = `${docBase}${path}`;
    if (path === "/slow.json") return; // never answers
    res.writeHead(200, { "content-type": "application/json" });
    if (path === "/huge.json") return res.end(JSON.stringify({ client_id: id, pad: "x".repeat(5000) }));
    if (path === "/liar.json")
      return res.end(JSON.stringify({ client_id: `${docBase}/other.json`, redirect_uris: [REDIRECT] }));
    res.end(JSON.stringify({ client_id: id, client_name: "Doc App", redirect_uris: [REDIRECT] }));
  });
  await new Promise<void>((r) => docs.listen(0, "127.0.0.1", () => r()));
  docBase = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
  server = await startOAuthServer({
    documents: new ClientDocuments({ allowLoopbackHttp: true, timeoutMs: 300, maxBytes: 2048 }),
  });
});
afterAll(async () => {
  await server?.close();
  docs.closeAllConnections();
  await new Promise<void>((r) => docs.close(() => r()));
});

it("takes a URL client id: fetches its document once, names the app from it, and issues tokens", async () => {
  hits = {};
  const clientId = `${docBase}/app.json`;
  const p = pkce();
  const browser = new FormClient(server.base);
  const url = authorizeUrl(server.base, {
    clientId,
    redirectUri: REDIRECT,
    challenge: p.challenge,
    method: "S256",
  });
  const page = await (await browser.get(url)).text();
  expect(page).toContain("Sign in to connect Doc App.");
  const consented = await rawConsent(browser, url);
  const code = new URL(consented.headers.get("location")!).searchParams.get("code")!;
  const r = await tokenRequest(server.base, {
    grant_type: "authorization_code",
    code,
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_verifier: p.verifier,
  });
  expect(r.status).toBe(200);
  expect(hits["/app.json"]).toBe(1);
  const meta = (await (
    await fetch(`${server.base}/.well-known/oauth-authorization-server`)
  ).json()) as Record<string, unknown>;
  expect(meta["client_id_metadata_document_supported"]).toBe(true);
});

it("refuses a document that is slow, too large, or names another client id", async () => {
  const { challenge } = pkce();
  for (const [path, why] of [
    ["/slow.json", "no answer in time"],
    ["/huge.json", "longer than 2048 bytes"],
    ["/liar.json", "its client_id is not its own URL"],
  ]) {
    const started = Date.now();
    const r = await fetch(
      authorizeUrl(server.base, {
        clientId: `${docBase}${path}`,
        redirectUri: REDIRECT,
        challenge,
        method: "S256",
      }),
      { redirect: "manual" },
    );
    expect(r.status, path).toBe(400);
    expect(await r.text()).toContain(why);
    expect(Date.now() - started).toBeLessThan(2_000);
  }
});

it("takes http ids only when told to (tests), and never a bare origin", () => {
  const strict = new ClientDocuments();
  expect(strict.isDocumentId("https://app.example/client.json")).toBe(true);
  expect(strict.isDocumentId("https://app.example/")).toBe(false);
  expect(strict.isDocumentId(`${docBase}/app.json`)).toBe(false);
  expect(strict.isDocumentId("https://localhost/app.json")).toBe(false);
  expect(strict.isDocumentId("https://192.168.1.10/app.json")).toBe(false);
  expect(strict.isDocumentId("https://10.0.0.1/app.json")).toBe(false);
  expect(strict.isDocumentId("https://[::1]/app.json")).toBe(false);
  expect(strict.isDocumentId("dexi-abc")).toBe(false);
});
