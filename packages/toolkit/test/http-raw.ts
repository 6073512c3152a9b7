import { expect } from "vitest";
import type { AuthInfo } from "@modelcontextprotocol/server";
import {
  type HttpHandle,
  type LegacySessionOptions,
  serveHttp,
  type TokenVerifier,
} from "../src/transports.js";
import { serverOf, tool, z } from "./helpers.js";

/**
 * Raw HTTP against a kit listening on a port: the bytes a client sends, over `fetch`, and what comes
 * back. The kit has a `secret` tool (answers at once) and a `hold` tool that waits until the test
 * releases it, so a test can keep a request in flight.
 */

export type Json = Record<string, unknown>;

/** Tokens by name: each verifies to its client, scopes and `extra` (a user, per-token data). */
export type Tokens = Record<string, { clientId?: string; extra?: Json }>;

export function verifierOf(tokens: Tokens): TokenVerifier {
  return {
    verifyAccessToken: async (token): Promise<AuthInfo> => {
      const t = tokens[token];
      if (!t) throw new Error("unknown token");
      return {
        token,
        clientId: t.clientId ?? "app",
        scopes: [],
        expiresAt: Math.floor(Date.now() / 1000) + 600,
        ...(t.extra ? { extra: t.extra } : {}),
      };
    },
  };
}

export interface Served {
  http: HttpHandle;
  /** Each tool run, in order: `who` for secret, `hold:key` for hold. */
  runs: string[];
  logs: string[];
  /** Resolves once `hold` with this key runs. */
  entered(key: string): Promise<void>;
  /** Lets `hold` with this key return. */
  release(key: string): void;
}

export async function serve(
  tokens: Tokens,
  legacySessions: LegacySessionOptions = {},
  cleanups: (() => Promise<void>)[] = [],
): Promise<Served> {
  const runs: string[] = [];
  const logs: string[] = [];
  const gates = new Map<
    string,
    { enter: () => void; entered: Promise<void>; release: () => void; released: Promise<void> }
  >();
  const gate = (key: string) => {
    let g = gates.get(key);
    if (!g) {
      let enter = () => {};
      let release = () => {};
      const entered = new Promise<void>((r) => (enter = r));
      const released = new Promise<void>((r) => (release = r));
      g = { enter, entered, release, released };
      gates.set(key, g);
    }
    return g;
  };
  const secret = tool({
    name: "secret",
    title: "Secret",
    group: "Test",
    description: "Returns a secret of the caller's.",
    scope: null,
    input: { who: z.string().max(40).describe("Whose secret") },
    output: { secret: z.string() },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    summary: () => "a secret",
    handler: ({ who }) => {
      runs.push(who);
      return { secret: `SECRET-${who}` };
    },
  });
  const hold = tool({
    name: "hold",
    title: "Hold",
    group: "Test",
    description: "Returns once the test releases it.",
    scope: null,
    input: { key: z.string().max(40).describe("Which gate") },
    output: { key: z.string() },
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    summary: () => "held",
    handler: async ({ key }) => {
      runs.push(`hold:${key}`);
      const g = gate(key);
      g.enter();
      await g.released;
      return { key };
    },
  });
  const { kit } = serverOf([secret, hold]);
  const http = await serveHttp(kit, {
    port: 0,
    verifier: verifierOf(tokens),
    legacySessions,
    log: (line) => logs.push(line),
  });
  cleanups.push(() => http.close());
  return {
    http,
    runs,
    logs,
    entered: (key) => gate(key).entered,
    release: (key) => gate(key).release(),
  };
}

export interface Answer {
  status: number;
  messages: Json[];
  session: string | null;
  /** The 2025 session's SSE or JSON body, read to its end. */
  text: string;
}

/** The JSON-RPC messages of a body, whether JSON or an SSE stream. */
export function messagesOf(text: string): Json[] {
  if (text.startsWith("{") || text.startsWith("[")) return [JSON.parse(text)].flat();
  return [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1] as string));
}

/** A POST as sent: resolves with the status and headers, before the body (an SSE answer) ends. */
export function send(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** An answer read to its end. */
export async function read(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, messages: messagesOf(text), session: res.headers.get("mcp-session-id"), text };
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return read(await send(url, body, headers));
}

export const bearer = (token: string, session?: string | null, version?: string) => ({
  authorization: `Bearer ${token}`,
  ...(session ? { "mcp-session-id": session } : {}),
  ...(version ? { "mcp-protocol-version": version } : {}),
});

export const initialize = (protocolVersion = "2025-11-25") => ({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } },
});

export const call = (id: number | string, name: string, args: Json) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

/** Opens a 2025-era session as `token` at `version` and sends `notifications/initialized`. */
export async function openSession(url: string, token: string, version = "2025-11-25"): Promise<string> {
  const opened = await post(url, initialize(version), bearer(token));
  expect(opened.status).toBe(200);
  expect(opened.messages[0]).toMatchObject({ result: { protocolVersion: version } });
  const sid = opened.session as string;
  const done = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, bearer(token, sid));
  expect(done.status).toBe(202);
  return sid;
}

/** A secret asked for on a session: the answer's structured content, or the error status and message. */
export async function secretOn(
  url: string,
  token: string,
  session: string | null,
  who: string,
  id: number | string = 1,
) {
  const r = await post(url, call(id, "secret", { who }), bearer(token, session));
  const m = r.messages[0] as { result?: { structuredContent?: Json }; error?: { code: number } } | undefined;
  return { status: r.status, secret: m?.result?.structuredContent?.["secret"], error: m?.error };
}

/** Ends a session: the DELETE's status. */
export async function endSession(url: string, token: string, session: string): Promise<number> {
  const res = await fetch(url, { method: "DELETE", headers: bearer(token, session) });
  await res.body?.cancel();
  return res.status;
}
