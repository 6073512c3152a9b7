import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { authorizeUrl, FormClient, pkce, rawConsent, register, tokenRequest } from "./oauth-helpers.js";
import { runDexi } from "./helpers.js";
import { freshLocation } from "./stores.js";

/** The built bin (run `npm run build` first): `dexi-mcp --http` without a static token (--token-file, MCP_HTTP_TOKEN) is an OAuth server. */
const BIN = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));
let dir: string;
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dexi-oauth-bin-"));
  const db = await freshLocation(dir);
  expect(
    (await runDexi(db, ["users", "add", "ann", "--password-stdin"], "correct horse battery\n")).code,
  ).toBe(0);
  child = spawn(process.execPath, [BIN, "--db", db, "--http", "127.0.0.1:0"], {
    env: { ...process.env, DEXI_EMBEDDINGS: "hash", MCP_HTTP_TOKEN: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  base = await new Promise<string>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /OAuth issuer (http:\/\/127\.0\.0\.1:\d+);/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`dexi-mcp exited ${code}: ${err}`)));
  });
}, 30_000);

afterAll(() => {
  child?.kill();
  rmSync(dir, { recursive: true, force: true });
});

it("publishes both metadata documents and answers 401 naming the resource metadata", async () => {
  const prm = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
    string,
    unknown
  >;
  expect(prm).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
  const as = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<
    string,
    unknown
  >;
  expect(as).toMatchObject({ issuer: base, code_challenge_methods_supported: ["S256"] });
  const r = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(r.status).toBe(401);
  expect(r.headers.get("www-authenticate")).toContain(
    `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
  );
});

it("signs in a user added with dexi users add and issues a token", async () => {
  const redirect = "http://127.0.0.1:9/cb";
  const clientId = await register(base, redirect);
  const p = pkce();
  const consented = await rawConsent(
    new FormClient(base),
    authorizeUrl(base, { clientId, redirectUri: redirect, challenge: p.challenge, method: "S256" }),
  );
  const code = new URL(consented.headers.get("location")!).searchParams.get("code")!;
  const t = await tokenRequest(base, {
    grant_type: "authorization_code",
    code,
    client_id: clientId,
    redirect_uri: redirect,
    code_verifier: p.verifier,
  });
  expect(t.status).toBe(200);
  expect(((await t.json()) as { scope: string }).scope).toBe("notes:read notes:write");
});
