/**
 * Sign in from the chat over HTTP: the built bin served by the kit's Streamable HTTP transport, two
 * instances of it sharing one request-state key (as a deployment behind a load balancer would), with
 * the world of test/sign-in.test.ts (the test authorization server, Dovecot's oauth2 passdb, the
 * daemon and its loopback redirect, the person in headless Chromium).
 *
 * - A 2025-11-25 client (the v1 SDK `Client`, URL-mode elicitation) in a session on one instance:
 *   asked through `elicitation/create` on the session's stream, told `notifications/elicitation/complete`
 *   once the sign-in is done, and the search goes on in the same call.
 * - A 2026-07-28 client (the v2 `Client`, URL mode) through a plain round-robin proxy in front of both
 *   instances: the search returns `input_required` with the URL, the retry carrying the answer lands
 *   on the other instance, which finds the same sign-in in the daemon and finishes the call.
 * Declined, cancelled or unable to ask: AUTH_REQUIRED as before, nothing stored.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import type { ChildProcess } from "node:child_process";
import { REQUEST_STATE_KEY_ENV } from "@mcpforge/toolkit";
import { newClient, type RoundRobinProxy, roundRobinProxy, startHttpBin } from "@mcpforge/toolkit/testing";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SignInEnv, startSignInEnv } from "./helpers/sign-in-env.js";

type Json = Record<string, unknown>;
/**
 * What the person does: sign in on the page, decline or cancel; or the client cannot ask in URL mode
 * (it declares form mode only), or cannot ask at all (it declares no elicitation).
 */
type Person = "sign-in" | "decline" | "cancel" | "no-url-mode" | "no-elicitation";

interface Asked {
  mode?: string;
  url?: string;
  message: string;
  elicitationId?: string;
}

interface Outcome {
  isError: boolean;
  structured: Json;
  asked: Asked[];
  /** elicitationIds of the `notifications/elicitation/complete` heard (2025-11-25). */
  completed: string[];
  /** For each POST of the search call: which instance behind the proxy answered, and whether it carried answers. */
  calls: Array<{ served: number | undefined; answered: boolean }>;
}

const TOKEN = `signin-${randomBytes(8).toString("hex")}`;
let env: SignInEnv;
let instances: Array<{ url: string; child: ChildProcess }>;
let proxy: RoundRobinProxy;

beforeAll(async () => {
  env = await startSignInEnv();
  // Every instance seals and opens the request state with the same key, as a deployment's would.
  const spawn = {
    ...env.spawn,
    env: { ...env.spawn.env, [REQUEST_STATE_KEY_ENV]: randomBytes(32).toString("hex") },
  };
  instances = await Promise.all([startHttpBin(spawn, TOKEN), startHttpBin(spawn, TOKEN)]);
  proxy = await roundRobinProxy(instances.map((i) => i.url));
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  for (const i of instances ?? []) i.child.kill();
  await env?.stop();
});

beforeEach(async () => {
  // Each case starts signed out: the stored grant is removed (the daemon sees the file go).
  fs.rmSync(env.grantFile(), { force: true });
  expect(await env.authState()).toBe("missing");
});

/** The person's answer; an accepted URL is opened in the browser after the answer, as a client would. */
function personOf(person: Person, asked: Asked[], opened: Promise<void>[]) {
  return (params: unknown): { action: "accept" | "decline" | "cancel" } => {
    const q = params as Asked;
    asked.push(q);
    if (person === "decline" || person === "cancel") return { action: person };
    if (q.url) opened.push(env.signInInBrowser(q.url));
    return { action: "accept" };
  };
}

/** A search by the v1 SDK client (2025-11-25) in a Streamable HTTP session on the first instance. */
async function searchV1(person: Person): Promise<Outcome> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport: V1Http } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  const { ElicitRequestSchema, ElicitationCompleteNotificationSchema } = await import(
    "@modelcontextprotocol/sdk/types.js"
  );
  const asked: Asked[] = [];
  const completed: string[] = [];
  const opened: Promise<void>[] = [];
  const asks = person !== "no-elicitation";
  const client = new Client(
    { name: "signin-v1", version: "0.0.0" },
    asks
      ? { capabilities: { elicitation: person === "no-url-mode" ? { form: {} } : { form: {}, url: {} } } }
      : {},
  );
  if (asks) {
    const answer = personOf(person, asked, opened);
    client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params) as never);
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
      completed.push(n.params.elicitationId);
    });
  }
  const transport = new V1Http(new URL(instances[0]!.url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  try {
    expect(transport.sessionId).toEqual(expect.any(String));
    expect(transport.protocolVersion).toBe("2025-11-25");
    const r = await client.callTool({ name: "search", arguments: { query: "invoice" } });
    await Promise.all(opened);
    // The notice may trail the result on its stream by a moment (longer on loaded cores).
    const expected = r.isError ? 0 : asked.length;
    for (const until = Date.now() + 30_000; completed.length < expected && Date.now() < until; )
      await new Promise((res) => setTimeout(res, 20));
    return {
      isError: r.isError === true,
      structured: (r.structuredContent ?? {}) as Json,
      asked,
      completed,
      calls: [],
    };
  } finally {
    await client.close();
  }
}

/** A search by the v2 client pinned to 2026-07-28, through the round-robin proxy. */
async function searchModern(person: Person): Promise<Outcome> {
  const asked: Asked[] = [];
  const opened: Promise<void>[] = [];
  const calls: Outcome["calls"] = [];
  const answer = personOf(person, asked, opened);
  const client = newClient({
    era: "modern",
    ...(person === "no-elicitation"
      ? {}
      : { elicitation: { modes: person === "no-url-mode" ? ["form"] : ["form", "url"], answer } }),
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(proxy.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      // Requests go one at a time, so the proxy's last pick is the instance that answered this one.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === "POST" && typeof init.body === "string") {
          const body = JSON.parse(init.body) as { method?: string; params?: Json };
          if (body.method === "tools/call")
            calls.push({
              served: proxy.served.at(-1),
              answered: body.params?.["inputResponses"] !== undefined,
            });
        }
        return response;
      },
    }),
  );
  try {
    expect(client.getProtocolEra()).toBe("modern");
    const r = await client.callTool({ name: "search", arguments: { query: "invoice" } });
    await Promise.all(opened);
    return {
      isError: r.isError === true,
      structured: (r.structuredContent ?? {}) as Json,
      asked,
      completed: [],
      calls,
    };
  } finally {
    await client.close();
  }
}

/** The question asked: a URL at the confirmed authorization endpoint, with PKCE and a loopback redirect. */
function expectSignInPage(asked: Asked[]): void {
  expect(asked.length).toBeGreaterThanOrEqual(1);
  for (const q of asked) expect(q.url, "only URL questions are asked").toBeDefined();
  expect(new Set(asked.map((q) => q.url)).size).toBe(1);
  const url = new URL(asked[0]!.url!);
  expect(`${url.origin}${url.pathname}`).toBe(env.auth.endpoints.authorization_endpoint);
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect(url.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
}

const NOT_SIGNED_IN = {
  reason: "AUTH_REQUIRED",
  message: "account work is not signed in (no OAuth2 grant is stored)",
};

describe("a 2025-11-25 client (v1 SDK) in an HTTP session", () => {
  it("is asked to open the provider's page, told when it is done, and the search succeeds in the same call", async () => {
    const r = await searchV1("sign-in");
    expect(r.structured).toMatchObject({ count: 1 });
    expect(r.isError).toBe(false);
    expectSignInPage(r.asked);
    expect(r.asked).toHaveLength(1);
    expect(r.asked[0]?.mode).toBe("url");
    expect(r.asked[0]?.elicitationId).toEqual(expect.any(String));
    expect(r.completed).toEqual([r.asked[0]?.elicitationId]);
    expect(fs.existsSync(env.grantFile())).toBe(true);
    expect(await env.authState()).toBe("ok");
  }, 120_000);

  it.each(["decline", "cancel"] as const)(
    "a %s answer is no consent: AUTH_REQUIRED, nothing stored, nothing completed",
    async (person) => {
      const r = await searchV1(person);
      expect(r.isError).toBe(true);
      expect(r.structured["error"]).toMatchObject(NOT_SIGNED_IN);
      expect(r.asked).toHaveLength(1);
      expect(r.completed).toEqual([]);
      expect(fs.existsSync(env.grantFile())).toBe(false);
    },
    60_000,
  );

  it.each(["no-url-mode", "no-elicitation"] as const)(
    "a client that cannot ask in URL mode (%s): AUTH_REQUIRED, asked nothing",
    async (person) => {
      const r = await searchV1(person);
      expect(r.structured["error"]).toMatchObject(NOT_SIGNED_IN);
      expect(r.asked).toHaveLength(0);
      expect(fs.existsSync(env.grantFile())).toBe(false);
    },
    60_000,
  );
});

describe("a 2026-07-28 client (v2) through a round-robin proxy in front of two instances", () => {
  it("gets input_required with the URL; the answered retry, on the other instance, finishes the search", async () => {
    const r = await searchModern("sign-in");
    expect(r.structured).toMatchObject({ count: 1 });
    expect(r.isError).toBe(false);
    expectSignInPage(r.asked);
    // The first round asked; the retry carrying the answer was served by the other instance.
    const asking = r.calls.find((c) => !c.answered);
    const retry = r.calls.find((c) => c.answered);
    expect(asking?.served).toBeDefined();
    expect(retry?.served).toBeDefined();
    expect(retry?.served).not.toBe(asking?.served);
    // 2026-07-28 URL questions carry no elicitationId.
    expect(r.asked[0]?.elicitationId).toBeUndefined();
    expect(fs.existsSync(env.grantFile())).toBe(true);
    expect(await env.authState()).toBe("ok");
  }, 120_000);

  it.each(["decline", "cancel"] as const)(
    "a %s answer is no consent: AUTH_REQUIRED, nothing stored",
    async (person) => {
      const r = await searchModern(person);
      expect(r.isError).toBe(true);
      expect(r.structured["error"]).toMatchObject(NOT_SIGNED_IN);
      expect(r.asked).toHaveLength(1);
      expect(fs.existsSync(env.grantFile())).toBe(false);
    },
    60_000,
  );

  it.each(["no-url-mode", "no-elicitation"] as const)(
    "a client that cannot ask in URL mode (%s): AUTH_REQUIRED, asked nothing",
    async (person) => {
      const r = await searchModern(person);
      expect(r.structured["error"]).toMatchObject(NOT_SIGNED_IN);
      expect(r.asked).toHaveLength(0);
      expect(fs.existsSync(env.grantFile())).toBe(false);
    },
    60_000,
  );
});
