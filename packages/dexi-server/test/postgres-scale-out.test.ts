/**
 * Two `dexi-mcp --http` instances on one PostgreSQL behind a round-robin proxy (no session affinity):
 * what one writes the other finds at once, a token revoked through one stops working on both, and
 * killing one mid-write loses no note it acknowledged.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { connectHttp, type RoundRobinProxy, roundRobinProxy } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AuthService } from "../src/auth/service.js";
import { freePort } from "../src/bench/oauth.js";
import { PgStore } from "../src/store/postgres/store.js";
import { freshDatabase } from "./postgres-helpers.js";

const BIN = fileURLToPath(new URL("../dist/bin/dexi-mcp.js", import.meta.url));
const REDIRECT = "http://127.0.0.1:9/cb";

let store: PgStore;
let proxy: RoundRobinProxy;
let origin: string;
let url: string;
const instances: ChildProcess[] = [];

function start(port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [BIN, "--db", url, "--http", `127.0.0.1:${port}`, "--public-url", origin],
    {
      env: { ...process.env, DEXI_EMBEDDINGS: "hash", MCP_HTTP_TOKEN: "" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  instances.push(child);
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("OAuth issuer")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`dexi-mcp exited ${code}: ${err}`)));
  });
}

/** A full consent by ann through the authorization server's own steps: access and refresh tokens. */
async function consent(): Promise<{ access: string; refresh: string; clientId: string }> {
  const auth = new AuthService(store.auth, { issuer: origin, resource: `${origin}/mcp` });
  const { client_id } = (await auth.register({ client_name: "scale", redirect_uris: [REDIRECT] })) as {
    client_id: string;
  };
  const verifier = randomBytes(32).toString("base64url");
  const req = await auth.checkRequest(
    new URLSearchParams({
      client_id,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    }),
  );
  const ann = (await store.accounts.ensureUser("ann", Date.now())).id;
  const back = new URL(await auth.consent(req, ann, { scopes: ["notes:read", "notes:write"] }));
  const t = await auth.token(
    new URLSearchParams({
      grant_type: "authorization_code",
      code: back.searchParams.get("code") ?? "",
      client_id,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    }),
  );
  return { access: t.access_token, refresh: t.refresh_token, clientId: client_id };
}

const mcpStatus = async (token: string) =>
  (
    await fetch(proxy.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    })
  ).status;

beforeAll(async () => {
  url = await freshDatabase();
  store = await PgStore.open(url);
  const ports = [await freePort(), await freePort()];
  proxy = await roundRobinProxy(ports.map((p) => `http://127.0.0.1:${p}`));
  origin = new URL(proxy.url).origin;
  await Promise.all(ports.map((p) => start(p)));
}, 60_000);

afterAll(async () => {
  for (const c of instances) c.kill("SIGKILL");
  await proxy?.close();
  await store?.close();
});

it("finds through one instance at once what the other wrote", async () => {
  const { access } = await consent();
  const c = await connectHttp(proxy.url, access, { era: "modern" });
  try {
    const before = proxy.served.length;
    for (let i = 0; i < 4; i++) {
      const made = await c.client.callTool({
        name: "create_note",
        arguments: { title: `hop ${i}`, text: `word${i}` },
      });
      expect(made.isError).toBeFalsy();
      const found = await c.client.callTool({ name: "search_notes", arguments: { query: `word${i}` } });
      expect((found.structuredContent as { total: number }).total).toBe(1);
    }
    // Both instances answered calls.
    expect(new Set(proxy.served.slice(before))).toEqual(new Set([0, 1]));
  } finally {
    await c.close();
  }
});

it("stops a token revoked through one instance on both", async () => {
  const { access, clientId } = await consent();
  expect([await mcpStatus(access), await mcpStatus(access)]).toEqual([200, 200]);
  const revoked = await fetch(`${origin}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: access, client_id: clientId }).toString(),
  });
  expect(revoked.status).toBe(200);
  // The next two calls reach both instances in turn: neither accepts the token.
  expect([await mcpStatus(access), await mcpStatus(access)]).toEqual([401, 401]);
});

it("loses no acknowledged note when one instance is killed mid-write", async () => {
  const { access } = await consent();
  const c = await connectHttp(proxy.url, access, { era: "modern" });
  const acknowledged: string[] = [];
  const writes = Array.from({ length: 40 }, async (_, i) => {
    const title = `burst ${i}`;
    try {
      const r = await c.client.callTool({ name: "create_note", arguments: { title, text: "burst" } });
      if (!r.isError) acknowledged.push(title);
      // Killed while the other writes are in flight, some of them on it.
      if (acknowledged.length === 5) instances[0]!.kill("SIGKILL");
    } catch {
      // refused or cut off by the kill: not acknowledged
    }
  });
  await Promise.all(writes);
  await c.close();
  expect(instances[0]!.signalCode).toBe("SIGKILL");
  // Some writes were cut off by the kill (and so not acknowledged); others went through the survivor.
  expect(acknowledged.length).toBeGreaterThan(5);
  expect(acknowledged.length).toBeLessThan(40);
  const ann = (await store.accounts.ensureUser("ann", Date.now())).id;
  const { rows } = await store.notes.list({ userId: ann, teammates: [] }, { sort: "created" }, 1000, 0);
  const titles = new Set(rows.map((r) => r.title));
  expect(acknowledged.filter((t) => !titles.has(t))).toEqual([]);
});
