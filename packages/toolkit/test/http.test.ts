import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCommonFlags, parseHttpAddress, parseServerArgs } from "../src/cli.js";
import { createExampleServer } from "../src/example/app.js";
import { connectHttp } from "../src/testing/clients.js";
import { type HttpHandle, serveHttp, staticTokenVerifier } from "../src/transports.js";

let http: HttpHandle;
const TOKEN = "read-only-token";

beforeAll(async () => {
  http = await serveHttp(createExampleServer(), {
    port: 0,
    verifier: staticTokenVerifier(TOKEN, ["example:read"]),
    requiredScopes: ["example:read"],
  });
});
afterAll(() => http.close());

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
};

function post(headers: Record<string, string>, body: unknown = initialize) {
  return fetch(http.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

describe("Streamable HTTP", () => {
  it("binds 127.0.0.1 by default", () => {
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("answers 401 with a Bearer challenge without a token and with a wrong one", async () => {
    for (const headers of [{}, { authorization: "Bearer nope" }] as Record<string, string>[]) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      // RFC 6750: the scheme, the error, and the scopes the server requires; no metadata URL configured.
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain('scope="example:read"');
      expect(challenge).not.toContain("resource_metadata");
    }
  });

  it("names the resource metadata in the 401 challenge when it is configured", async () => {
    const metadata = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp";
    const withMetadata = await serveHttp(createExampleServer(), {
      port: 0,
      verifier: staticTokenVerifier(TOKEN, ["example:read"]),
      resourceMetadataUrl: metadata,
    });
    try {
      const res = await fetch(withMetadata.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(initialize),
      });
      expect(res.status).toBe(401);
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer error="invalid_token"/);
      expect(challenge).toContain(`resource_metadata="${metadata}"`);
    } finally {
      await withMetadata.close();
    }
  });

  it("answers 403 insufficient_scope when the token lacks the scopes the server requires", async () => {
    const strict = await serveHttp(createExampleServer(), {
      port: 0,
      verifier: staticTokenVerifier(TOKEN, ["example:read"]),
      requiredScopes: ["example:admin"],
    });
    const res = await fetch(strict.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(initialize),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain("insufficient_scope");
    await strict.close();
  });

  it("refuses a foreign Host header (DNS rebinding protection)", async () => {
    // fetch() may not set Host, so this goes through node:http.
    const url = new URL(http.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: {
            host: `evil.example.com:${url.port}`,
            authorization: `Bearer ${TOKEN}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
  });

  it.each(["legacy", "modern"] as const)(
    "serves a %s-era SDK client, with the token's scopes deciding each call",
    async (era) => {
      const { client, close } = await connectHttp(http.url, TOKEN, { era });
      expect(client.getProtocolEra()).toBe(era);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("list_notes");
      const read = await client.callTool({ name: "list_notes", arguments: {} });
      expect(read.structuredContent).toEqual({ notes: [], total: 0 });
      const write = await client.callTool({ name: "add_note", arguments: { text: "x" } });
      expect(write.isError).toBe(true);
      expect((write.structuredContent as { error: { reason: string } }).error.reason).toBe(
        "INSUFFICIENT_SCOPE",
      );
      await close();
    },
  );
});

describe("common flags", () => {
  it.each([
    ["8080", { host: "127.0.0.1", port: 8080 }],
    ["0.0.0.0:80", { host: "0.0.0.0", port: 80 }],
    ["[::1]:9000", { host: "::1", port: 9000 }],
  ])("parses --http %s", (value, expected) => {
    expect(parseHttpAddress(value)).toEqual(expected);
  });

  it.each(["", "host:", "99999", "a:b"])("refuses --http %j", (value) => {
    expect(() => parseHttpAddress(value)).toThrow(/--http takes \[host:\]port/);
  });

  it("leaves the server's own flags in order", () => {
    const flags = parseCommonFlags(["--db", "x.db", "--http=8080", "--tools", "notes", "--user", "ann"]);
    expect(flags).toEqual({
      help: false,
      version: false,
      http: { host: "127.0.0.1", port: 8080 },
      tools: ["notes"],
      rest: ["--db", "x.db", "--user", "ann"],
    });
  });

  it("parses a bin's argv with parseArgs: the common flags plus its own, strictly", () => {
    const { flags, values, positionals } = parseServerArgs(
      [
        "--db",
        "x.db",
        "--http=8080",
        "--session-idle-minutes",
        "5",
        "--max-sessions",
        "3",
        "--max-sessions-per-user",
        "2",
        "import",
        "-h",
      ],
      { db: { type: "string" }, quiet: { type: "boolean" } },
      { allowPositionals: true },
    );
    expect(flags).toMatchObject({
      http: { host: "127.0.0.1", port: 8080 },
      sessionIdleMinutes: 5,
      maxSessions: 3,
      maxSessionsPerUser: 2,
      help: true,
    });
    expect(values.db).toBe("x.db");
    expect(values.quiet).toBeUndefined();
    expect(positionals).toEqual(["import"]);
    expect(() => parseServerArgs(["--nope"], {})).toThrow(/Unknown option '--nope'/);
    expect(() => parseServerArgs(["--db"], { db: { type: "string" } })).toThrow(/argument missing/);
    expect(() => parseServerArgs(["--max-sessions", "0"], {})).toThrow(
      /--max-sessions takes a positive number/,
    );
    expect(() => parseServerArgs(["--max-sessions-per-user", "none"], {})).toThrow(
      /--max-sessions-per-user takes a positive number/,
    );
  });
});
