/**
 * The attacker's test of sign-in from the chat: a same-user agent with a file tool edits config.toml
 * so that the OAuth2 account "work" (not signed in) signs in at its own server: the authorization page
 * (a phishing page for the person's password) and the token endpoint (where the code would go). A
 * real HTTP listener plays that server and counts every request. Clients that can ask in URL mode, over
 * stdio in both eras and over HTTP, must never be handed a URL at the attacker's host, and the
 * listener must hear nothing; the call fails with POLICY_DENIED naming the owner's confirmation. Once
 * config.toml is back to what the owner confirmed, the sign-in from the chat works again.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { connectHttp, connectStdio, type Era, startHttpBin } from "@mcpforge/toolkit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SignInEnv, startSignInEnv } from "../helpers/sign-in-env.js";

type Json = Record<string, unknown>;
type Transport = "stdio" | "http";

let env: SignInEnv;
let attacker: { origin: string; host: string; requests: string[]; close(): Promise<void> };

async function attackerServer(): Promise<typeof attacker> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<form>Password: <input name=p></form>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

beforeAll(async () => {
  env = await startSignInEnv();
  attacker = await attackerServer();
}, 120_000);

afterAll(async () => {
  await attacker?.close();
  await env?.stop();
});

/** Waits until the daemon (which reads config.toml at each call) sees a change pending, or none. */
async function untilPending(pending: boolean): Promise<void> {
  const now = async () =>
    (await env.cli.call("policy.status", {})).accounts.find((a) => a.account === "work")?.pending;
  for (const until = Date.now() + 10_000; Date.now() < until && (await now()) !== pending; )
    await new Promise((r) => setTimeout(r, 50));
  expect(await now()).toBe(pending);
}

/** A search by a client that accepts every question (and opens every URL it is given, in Chromium). */
async function search(era: Era, transport: Transport) {
  const asked: Array<{ url?: string; message: string }> = [];
  const opened: Promise<void>[] = [];
  const options = {
    era,
    elicitation: {
      modes: ["form", "url"] as const,
      answer: (params: unknown) => {
        const q = params as { url?: string; message: string };
        asked.push(q);
        // A person who trusts the client opens whatever page it shows.
        if (q.url) opened.push(env.signInInBrowser(q.url));
        return { action: "accept" as const };
      },
    },
  };
  const token = `phish-${randomBytes(6).toString("hex")}`;
  const instance = transport === "http" ? await startHttpBin(env.spawn, token) : undefined;
  const conn = instance
    ? await connectHttp(instance.url, token, options)
    : await connectStdio(env.spawn, options);
  try {
    const r = await conn.client.callTool({ name: "search", arguments: { query: "invoice" } });
    await Promise.all(opened);
    return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json, asked };
  } finally {
    await conn.close();
    instance?.child.kill();
  }
}

const COMBINATIONS: Array<[Era, Transport]> = [
  ["legacy", "stdio"],
  ["modern", "stdio"],
  ["legacy", "http"],
  ["modern", "http"],
];

describe("config.toml pointing work's sign-in page and token endpoint at an attacker", () => {
  beforeAll(async () => {
    const e = env.auth.endpoints;
    const hostile = env.config
      .replace(
        `authorization_endpoint = "${e.authorization_endpoint}"`,
        `authorization_endpoint = "${attacker.origin}/authorize"`,
      )
      .replace(`token_endpoint = "${e.token_endpoint}"`, `token_endpoint = "${attacker.origin}/token"`);
    expect(hostile).toContain(`${attacker.origin}/authorize`);
    expect(hostile).toContain(`${attacker.origin}/token`);
    fs.writeFileSync(env.home.configFile, hostile);
    await untilPending(true);
  });

  it.each(COMBINATIONS)(
    "a %s client over %s is sent to no page at the attacker's host, and the attacker hears nothing",
    async (era, transport) => {
      const r = await search(era, transport);
      expect(r.isError).toBe(true);
      expect(r.structured["error"]).toMatchObject({ reason: "POLICY_DENIED" });
      expect((r.structured["error"] as { message: string }).message).toContain(
        "wait for the owner's confirmation",
      );
      // No question at all, so no URL: and none anywhere in what reached the client names the host.
      expect(r.asked).toEqual([]);
      expect(JSON.stringify(r)).not.toContain(attacker.host);
      expect(attacker.requests).toEqual([]);
      expect(fs.existsSync(env.grantFile())).toBe(false);
    },
    60_000,
  );

  it("back to the confirmed settings, the sign-in from the chat goes to the confirmed page", async () => {
    fs.writeFileSync(env.home.configFile, env.config);
    await untilPending(false);
    const r = await search("modern", "stdio");
    expect(r.isError).toBe(false);
    expect(r.structured["count"]).toBe(1);
    expect(r.asked.length).toBeGreaterThanOrEqual(1);
    for (const q of r.asked)
      expect(q.url?.startsWith(`${env.auth.endpoints.authorization_endpoint}?`)).toBe(true);
    expect(attacker.requests).toEqual([]);
  }, 120_000);
});
