/**
 * A held send approved in the chat (hold_approval = "client") over HTTP: the built bin served by the
 * kit's Streamable HTTP transport, two instances sharing one request-state key. A 2025-11-25 client
 * (the v1 SDK `Client`, form elicitation) works in a session on one instance; a 2026-07-28 client (the
 * v2 `Client`) goes through a plain round-robin proxy in front of both, so the retry carrying the
 * person's answer is served by the other instance than the round that asked. Deliveries are counted at
 * the SMTP server: Send delivers exactly one message; declined or unable to ask, none, and the held
 * draft stays. (test/approval.test.ts covers the same over stdio, and "owner".)
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { type SendEnv, startSendEnv } from "@mcpforge/chainmail/testing";
import { REQUEST_STATE_KEY_ENV } from "@mcpforge/toolkit";
import { newClient, type RoundRobinProxy, roundRobinProxy, startHttpBin } from "@mcpforge/toolkit/testing";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../bin/chainmail-mcp.js", import.meta.url));
const CLIENT_POLICY = 'allowed_recipients = ["bob@example.com"]\nhold_approval = "client"\n';
const TOKEN = `approval-${randomBytes(8).toString("hex")}`;

type Json = Record<string, unknown>;
/** What the person does: Send, decline or cancel the question, or the client cannot ask at all. */
type Person = "send" | "decline" | "cancel" | "cannot-ask";
type Era = "2025-11-25 in a session" | "2026-07-28 behind the proxy";

interface Driver {
  asked: unknown[];
  /** For the 2026-07-28 client: each POST of a tools/call, the instance that served it, and whether it carried answers. */
  calls: Array<{ served: number | undefined; answered: boolean }>;
  call(tool: string, args: Json): Promise<{ isError: boolean; structured: Json }>;
  close(): Promise<void>;
}

let env: SendEnv;
let instances: Array<{ url: string; child: ChildProcess }>;
let proxy: RoundRobinProxy;

beforeAll(async () => {
  env = await startSendEnv({ work: { sendPolicy: CLIENT_POLICY } });
  const spawn = {
    command: process.execPath,
    args: [BIN, "--home", env.dir],
    env: { CHAINMAIL_MCP_GATE_MAX_AGE_MS: "0", [REQUEST_STATE_KEY_ENV]: randomBytes(32).toString("hex") },
  };
  instances = await Promise.all([startHttpBin(spawn, TOKEN), startHttpBin(spawn, TOKEN)]);
  proxy = await roundRobinProxy(instances.map((i) => i.url));
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  for (const i of instances ?? []) i.child.kill();
  await env?.stop();
});

const answerOf = (person: Person) => (): { action: "accept" | "decline" | "cancel"; content?: Json } =>
  person === "send"
    ? { action: "accept", content: { decision: "send" } }
    : { action: person === "cancel" ? "cancel" : "decline" };

async function v1Driver(person: Person): Promise<Driver> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport: V1Http } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const asked: unknown[] = [];
  const client = new Client(
    { name: "approval-v1-http", version: "0.0.0" },
    person === "cannot-ask" ? {} : { capabilities: { elicitation: { form: {} } } },
  );
  if (person !== "cannot-ask") {
    const answer = answerOf(person);
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer() as never;
    });
  }
  const transport = new V1Http(new URL(instances[0]!.url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  expect(transport.sessionId).toEqual(expect.any(String));
  expect(transport.protocolVersion).toBe("2025-11-25");
  return {
    asked,
    calls: [],
    call: async (name, args) => {
      const r = await client.callTool({ name, arguments: args });
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
    },
    close: () => client.close(),
  };
}

async function modernDriver(person: Person): Promise<Driver> {
  const asked: unknown[] = [];
  const calls: Driver["calls"] = [];
  const answer = answerOf(person);
  const client = newClient({
    era: "modern",
    ...(person === "cannot-ask"
      ? {}
      : {
          elicitation: {
            modes: ["form"],
            answer: (params) => {
              asked.push(params);
              return answer() as never;
            },
          },
        }),
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
  expect(client.getProtocolEra()).toBe("modern");
  return {
    asked,
    calls,
    call: async (name, args) => {
      const r = await client.callTool({ name, arguments: args });
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
    },
    close: () => client.close(),
  };
}

async function withDriver(era: Era, person: Person, fn: (d: Driver) => Promise<void>): Promise<void> {
  const d = era === "2025-11-25 in a session" ? await v1Driver(person) : await modernDriver(person);
  try {
    await fn(d);
  } finally {
    await d.close();
  }
}

const delivered = () => env.relay.transactions().length;
const drafts = () => env.dv.messageCount("alice", "Drafts");

const ERAS: Era[] = ["2025-11-25 in a session", "2026-07-28 behind the proxy"];

describe.each(ERAS)("hold_approval = client over HTTP, a %s", (era) => {
  it("Send delivers exactly one message, counted at the SMTP server", async () => {
    await withDriver(era, "send", async (d) => {
      const before = delivered();
      const draftsBefore = await drafts();
      const r = await d.call("send_email", {
        account: "work",
        to: ["mallory@evil.test"],
        subject: `approve over http ${era}`,
        body: "hello",
      });
      expect(r.isError).toBe(false);
      expect(r.structured).toMatchObject({ status: "sent" });
      expect(d.asked).toHaveLength(1);
      expect(env.relay.transactions().slice(before)).toEqual([
        { from: "alice@example.com", rcpts: ["mallory@evil.test"] },
      ]);
      expect(await drafts()).toBe(draftsBefore);
      const row = (await env.client.readAudit({ action: "send" })).rows[0];
      expect(row?.summary).toMatch(/^approved in the client by the person/);
      if (era === "2026-07-28 behind the proxy") {
        const asking = d.calls.find((c) => !c.answered);
        const retry = d.calls.find((c) => c.answered);
        expect(asking?.served).toBeDefined();
        expect(retry?.served).toBeDefined();
        expect(retry?.served).not.toBe(asking?.served);
      }
    });
  }, 60_000);

  it.each(["decline", "cancel", "cannot-ask"] as const)(
    "with %s, delivers nothing and leaves the held draft",
    async (person) => {
      await withDriver(era, person, async (d) => {
        const before = delivered();
        const draftsBefore = await drafts();
        const r = await d.call("send_email", {
          account: "work",
          to: ["mallory@evil.test"],
          subject: `${person} over http ${era}`,
        });
        expect(r.isError).toBe(false);
        expect(r.structured).toMatchObject({
          status: "held",
          blocked: [{ untrusted: "mallory@evil.test" }],
          draft_ref: expect.stringMatching(/^m1\./),
        });
        expect(d.asked).toHaveLength(person === "cannot-ask" ? 0 : 1);
        expect(delivered()).toBe(before);
        expect(await drafts()).toBe(draftsBefore + 1);
      });
    },
    60_000,
  );
});
