import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { createKitHttpHandler } from "../src/http/handler.js";
import { connectHttp } from "../src/testing/clients.js";
import { postWithoutEnd } from "../src/testing/endless-body.js";
import { type HttpHandle, type HttpRequestInfo, serveHttp, staticTokenVerifier } from "../src/transports.js";

/** The additive HTTP hooks: extra routes beside the MCP endpoint, and the 403 step-up for tools/call. */

const TOKEN = "reader";
const METADATA = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp";
let http: HttpHandle;
let seen: HttpRequestInfo[] = [];

beforeAll(async () => {
  http = await serveHttp(createExampleServer(), {
    port: 0,
    verifier: staticTokenVerifier(TOKEN, ["example:read"]),
    resourceMetadataUrl: METADATA,
    scopeChallenge: true,
    routes: (req, info) => {
      seen.push(info);
      return new URL(req.url).pathname === "/hello" ? new Response("hi") : undefined;
    },
    log: () => {},
  });
});
afterAll(() => http.close());

const base = () => http.url.replace(/\/mcp$/, "");

function get(path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, base());
    const req = request({ host: "127.0.0.1", port: u.port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("routes", () => {
  it("serve other paths, told the peer's address; unknown paths stay 404", async () => {
    seen = [];
    const r = await fetch(`${base()}/hello`);
    expect(await r.text()).toBe("hi");
    expect(seen).toEqual([{ remoteAddress: "127.0.0.1" }]);
    expect((await fetch(`${base()}/nope`)).status).toBe(404);
  });

  it("sit behind the Host and Origin checks", async () => {
    seen = [];
    expect(await get("/hello", "evil.example")).toBe(403);
    const foreign = await fetch(`${base()}/hello`, { headers: { origin: "http://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(seen).toEqual([]);
  });
});

describe("scopeChallenge", () => {
  const call = (name: string) =>
    fetch(http.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name, arguments: { text: "x" } },
      }),
    });

  it("answers a tools/call beyond the token's scopes with 403 insufficient_scope naming token + tool scopes", async () => {
    const r = await call("add_note");
    expect(r.status).toBe(403);
    expect(r.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", error_description="The tool add_note needs the scope example:write", scope="example:read example:write", resource_metadata="${METADATA}"`,
    );
  });

  it("lets calls within the scopes through, in both eras", async () => {
    for (const era of ["legacy", "modern"] as const) {
      const c = await connectHttp(http.url, TOKEN, { era });
      const r = await c.client.callTool({ name: "list_notes", arguments: {} });
      expect(r.isError, era).toBeFalsy();
      await c.close();
    }
  });
});

describe("request bodies", () => {
  it("over the bound are refused with 413 without being read to their end, and the next call is served", async () => {
    const r = await postWithoutEnd(http.url, {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    });
    expect(r.status).toBe(413);
    // Answered at the bound (what sockets buffer besides), long before the client's own limit of 1 GiB
    expect(r.sentBytes).toBeLessThan(256 * 1024 * 1024);
    const client = await connectHttp(http.url, TOKEN);
    try {
      expect((await client.client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("over the bound are refused by the kit's handler itself, on a host without the SDK's Node adapter", async () => {
    const handler = createKitHttpHandler(createExampleServer(), {
      caller: { scopes: ["example:read"] },
      allowedHosts: ["kit.test"],
      log: () => undefined,
    });
    try {
      let pulled = 0;
      // 64 MiB in all (a handler reading it whole then answers something else than 413)
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 64 * 1024 * 1024) return controller.close();
          pulled += 64 * 1024;
          controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
        },
      });
      const res = await handler.fetch(
        new Request("http://kit.test/mcp", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: endless,
          duplex: "half",
        } as RequestInit),
      );
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
        "Payload Too Large: Request body must not exceed 4194304 bytes",
      );
      expect(pulled).toBeLessThan(8 * 1024 * 1024);
    } finally {
      await handler.close();
    }
  });
});
