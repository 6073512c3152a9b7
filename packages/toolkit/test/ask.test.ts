import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createExampleServer } from "../src/example/app.js";
import { Notebook } from "../src/example/domain/notebook.js";
import { createKitHttpHandler, type KitHttpHandler } from "../src/http/handler.js";
import { connectInMemory, type Elicitation, type Era, newClient } from "../src/testing/clients.js";
import { anyScopes, serverOf, tool, z } from "./helpers.js";

type Json = Record<string, unknown>;
const eras: Era[] = ["legacy", "modern"];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A tool whose one irreversible step (`steps`) needs the person's yes; `entries` counts handler runs. */
function confirmTool() {
  const counts = { entries: 0, steps: 0 };
  const def = tool({
    name: "confirm_step",
    title: "Confirm a step",
    group: "Test",
    description: "Takes one step once the person says yes.",
    scope: null,
    input: { what: z.string().max(20).describe("What to do") },
    output: { done: z.boolean(), answer: z.string() },
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    summary: (r) => (r.done ? "done" : "not done"),
    handler: async ({ what }, { ask }) => {
      counts.entries++;
      const answer = await ask({
        message: `Do ${what}?`,
        fields: { yes: { type: "boolean", title: "Do it" } },
      });
      if (answer.action !== "accept" || !answer.content.yes) return { done: false, answer: answer.action };
      counts.steps++;
      return { done: true, answer: "accept" };
    },
  });
  return { def, counts };
}

/** A person who answers every question the same way, and remembers what they were asked. */
function person(reply: (params: Json) => Json, modes: ("form" | "url")[] = ["form", "url"]) {
  const asked: Json[] = [];
  const elicitation: Elicitation = {
    modes,
    answer: (params) => {
      asked.push(params as Json);
      return reply(params as Json) as never;
    },
  };
  return { asked, elicitation };
}

async function connect(kit: Parameters<typeof connectInMemory>[0], era: Era, elicitation?: Elicitation) {
  const conn = await connectInMemory(kit, anyScopes, { era, ...(elicitation ? { elicitation } : {}) });
  cleanups.push(conn.close);
  return conn.client;
}

describe("ctx.ask in both eras, in process", () => {
  for (const era of eras) {
    it(`${era}: accepted, the step runs once (the handler ran twice, the step after the answer only)`, async () => {
      const { def, counts } = confirmTool();
      const p = person(() => ({ action: "accept", content: { yes: true } }));
      const client = await connect(serverOf([def]).kit, era, p.elicitation);
      const r = await client.callTool({ name: "confirm_step", arguments: { what: "it" } });
      expect(r.structuredContent).toEqual({ done: true, answer: "accept" });
      expect(counts).toEqual({ entries: 2, steps: 1 });
      expect(p.asked).toHaveLength(1);
      expect(p.asked[0]).toMatchObject({
        message: "Do it?",
        requestedSchema: { type: "object", properties: { yes: { type: "boolean" } }, required: ["yes"] },
      });
    });

    for (const action of ["decline", "cancel"] as const) {
      it(`${era}: ${action}d, the step never runs`, async () => {
        const { def, counts } = confirmTool();
        const p = person(() => ({ action }));
        const client = await connect(serverOf([def]).kit, era, p.elicitation);
        const r = await client.callTool({ name: "confirm_step", arguments: { what: "it" } });
        expect(r.structuredContent).toEqual({ done: false, answer: action });
        expect(counts.steps).toBe(0);
        expect(p.asked).toHaveLength(1);
      });
    }

    it(`${era}: a client without the capability is never asked: unavailable`, async () => {
      const { def, counts } = confirmTool();
      const client = await connect(serverOf([def]).kit, era);
      const r = await client.callTool({ name: "confirm_step", arguments: { what: "it" } });
      expect(r.structuredContent).toEqual({ done: false, answer: "unavailable" });
      expect(counts).toEqual({ entries: 1, steps: 0 });
    });

    it(`${era}: only the declared modes are asked: a form-only client cannot get a URL, a URL-only one no form`, async () => {
      const notebook = new Notebook();
      const formOnly = person(() => ({ action: "accept", content: { decision: "send" } }), ["form"]);
      const a = await connect(createExampleServer({ notebook }), era, formOnly.elicitation);
      expect((await a.callTool({ name: "connect_mailbag", arguments: {} })).structuredContent).toEqual({
        connected: false,
        answer: "unavailable",
      });
      expect(formOnly.asked).toHaveLength(0);
      const urlOnly = person(() => ({ action: "accept" }), ["url"]);
      const b = await connect(createExampleServer({ notebook }), era, urlOnly.elicitation);
      const r = await b.callTool({ name: "forward_message", arguments: { id: 1, to: "bob@example.com" } });
      expect(r.structuredContent).toEqual({ status: "held", answer: "unavailable" });
      expect(urlOnly.asked).toHaveLength(0);
      expect(notebook.outbox.all()).toHaveLength(0);
      expect((await b.callTool({ name: "connect_mailbag", arguments: {} })).structuredContent).toEqual({
        connected: true,
        answer: "accept",
      });
    });

    it(`${era}: two questions in turn: each asked once, the first answer carried in the sealed state`, async () => {
      let steps = 0;
      const two = tool({
        name: "two_questions",
        title: "Two questions",
        group: "Test",
        description: "Asks a name, then a colour.",
        scope: null,
        input: {},
        output: { name: z.string(), colour: z.string() },
        annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
        summary: (r) => r.name,
        handler: async (_input, { ask }) => {
          const name = await ask({ message: "Name?", fields: { name: { type: "string", maxLength: 20 } } });
          const colour = await ask({
            message: "Colour?",
            fields: { colour: { type: "string", enum: ["red", "blue"] } },
          });
          if (name.action !== "accept" || colour.action !== "accept") return { name: "", colour: "" };
          steps++;
          return { name: name.content.name, colour: colour.content.colour };
        },
      });
      const p = person((params) =>
        params["message"] === "Name?"
          ? { action: "accept", content: { name: "Ada" } }
          : { action: "accept", content: { colour: "blue" } },
      );
      const client = await connect(serverOf([two]).kit, era, p.elicitation);
      const r = await client.callTool({ name: "two_questions", arguments: {} });
      expect(r.structuredContent).toEqual({ name: "Ada", colour: "blue" });
      expect(p.asked.map((a) => a["message"])).toEqual(["Name?", "Colour?"]);
      expect(steps).toBe(1);
    });

    it(`${era}: a handler that catches the unwinding still waits for the answer`, async () => {
      let steps = 0;
      const swallowing = tool({
        name: "swallow",
        title: "Swallow",
        group: "Test",
        description: "Catches everything around its question.",
        scope: null,
        input: {},
        output: { ok: z.boolean() },
        annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
        summary: () => "ok",
        handler: async (_input, { ask }) => {
          try {
            const a = await ask({ message: "Go?", fields: { go: { type: "boolean" } } });
            if (a.action === "accept" && a.content.go) steps++;
            return { ok: a.action === "accept" };
          } catch {
            return { ok: false };
          }
        },
      });
      const p = person(() => ({ action: "accept", content: { go: true } }));
      const client = await connect(serverOf([swallowing]).kit, era, p.elicitation);
      expect((await client.callTool({ name: "swallow", arguments: {} })).structuredContent).toEqual({
        ok: true,
      });
      expect(steps).toBe(1);
    });

    it(`${era}: an accepted answer that does not fit the form is INVALID_ARGUMENT, never consent`, async () => {
      const { def, counts } = confirmTool();
      const p = person(() => ({ action: "accept", content: { yes: "please" } }));
      const client = await connect(serverOf([def]).kit, era, p.elicitation);
      const r = await client.callTool({ name: "confirm_step", arguments: { what: "it" } });
      expect(r.isError).toBe(true);
      expect((r.structuredContent as { error: Json }).error).toMatchObject({ reason: "INVALID_ARGUMENT" });
      expect(String((r.structuredContent as { error: Json }).error["message"])).toContain("Do it?");
      expect(counts.steps).toBe(0);
    });
  }

  it("a request-state key shorter than 32 bytes is refused at start-up, naming where it comes from", () => {
    const { def } = confirmTool();
    expect(() => serverOf([def], { askState: { key: "short" } })).toThrow(
      "The request-state key (askState.key or MCPFORGE_REQUEST_STATE_KEY) must be at least 32 bytes",
    );
  });

  it("kit.callTool without a transport cannot ask: unavailable", async () => {
    const { def, counts } = confirmTool();
    const r = await serverOf([def]).kit.callTool("confirm_step", { what: "it" }, anyScopes);
    expect(r.structuredContent).toEqual({ done: false, answer: "unavailable" });
    expect(counts.steps).toBe(0);
  });
});

/** A 2026-07-28 client whose HTTP requests are recorded, over the kit's handler in process. */
async function recordingModern(handler: KitHttpHandler, elicitation?: Elicitation) {
  const posts: { headers: Record<string, string>; body: Json & { params: Json } }[] = [];
  const client = newClient({ era: "modern", ...(elicitation ? { elicitation } : {}) });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://kit.test/mcp"), {
      fetch: (url, init) => {
        if (init?.method === "POST" && typeof init.body === "string") {
          posts.push({
            headers: Object.fromEntries(new Headers(init.headers).entries()),
            body: JSON.parse(init.body),
          });
        }
        return handler.fetch(new Request(url, init));
      },
    }),
  );
  cleanups.push(() => client.close());
  return { client, posts };
}

/** Sends one JSON-RPC request as the recorded client would, returning its answer. */
async function send(handler: KitHttpHandler, headers: Record<string, string>, body: Json): Promise<Json> {
  const response = await handler.fetch(
    new Request("http://kit.test/mcp", { method: "POST", headers, body: JSON.stringify(body) }),
  );
  const text = await response.text();
  const docs = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
    : [text];
  const found = docs.map((d) => JSON.parse(d) as Json).find((m) => m["id"] === body["id"]);
  if (!found) throw new Error(`no answer in ${text}`);
  return found;
}

describe("the sealed request state on 2026-07-28", () => {
  async function answeredFlow() {
    const notebook = new Notebook();
    const kit = createExampleServer({ notebook });
    const handler = createKitHttpHandler(kit, {
      caller: anyScopes,
      allowedHosts: ["kit.test"],
      log: () => undefined,
    });
    cleanups.push(() => handler.close());
    const p = person(() => ({ action: "accept", content: { decision: "send" } }));
    const { client, posts } = await recordingModern(handler, p.elicitation);
    const r = await client.callTool({ name: "forward_message", arguments: { id: 1, to: "bob@example.com" } });
    expect(r.structuredContent).toEqual({ status: "sent", answer: "send" });
    const retry = posts.find((q) => q.body.params["inputResponses"] !== undefined);
    if (!retry) throw new Error("no retry recorded");
    expect(notebook.outbox.all()).toHaveLength(1);
    return { notebook, handler, retry };
  }

  it("a client that sends the same answered retry twice more: the step still ran once (the answer's id keys it)", async () => {
    const { notebook, handler, retry } = await answeredFlow();
    for (const id of [101, 102]) {
      const answer = await send(handler, retry.headers, { ...retry.body, id });
      expect((answer["result"] as Json)["structuredContent"]).toEqual({ status: "sent", answer: "send" });
    }
    expect(notebook.outbox.all()).toHaveLength(1);
  });

  it("a changed state is refused (-32602), and nothing is sent", async () => {
    const { notebook, handler, retry } = await answeredFlow();
    const state = String(retry.body.params["requestState"]);
    const [version, body, mac] = state.split(".");
    const forged = JSON.parse(Buffer.from(body!, "base64url").toString()) as Json;
    const tampered = `${version}.${Buffer.from(JSON.stringify({ ...forged, exp: (forged["exp"] as number) + 1 })).toString("base64url")}.${mac}`;
    const answer = await send(handler, retry.headers, {
      ...retry.body,
      id: 201,
      params: { ...retry.body.params, requestState: tampered },
    });
    expect(answer["error"]).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    expect(notebook.outbox.all()).toHaveLength(1);
  });

  it("the answer carried to other arguments, or without its state, is not consent: the person is asked again", async () => {
    const { notebook, handler, retry } = await answeredFlow();
    const elsewhere = await send(handler, retry.headers, {
      ...retry.body,
      id: 301,
      params: { ...retry.body.params, arguments: { id: 2, to: "eve@example.com" } },
    });
    expect((elsewhere["result"] as Json)["resultType"]).toBe("input_required");
    const { requestState: _dropped, ...stateless } = retry.body.params;
    const forged = await send(handler, retry.headers, { ...retry.body, id: 302, params: stateless });
    expect((forged["result"] as Json)["resultType"]).toBe("input_required");
    expect(notebook.outbox.all()).toHaveLength(1);
  });

  it("a state is bound to the token's client: another client's token cannot carry it", async () => {
    const notebook = new Notebook();
    const clients: Record<string, string> = { "token-a": "client-a", "token-b": "client-b" };
    const handler = createKitHttpHandler(createExampleServer({ notebook }), {
      allowedHosts: ["kit.test"],
      log: () => undefined,
      verifier: {
        verifyAccessToken: async (token) => {
          const clientId = clients[token];
          if (!clientId) throw new Error("unknown token");
          return {
            token,
            clientId,
            scopes: ["example:read", "example:write"],
            expiresAt: Date.now() / 1000 + 600,
          };
        },
      },
    });
    cleanups.push(() => handler.close());
    const p = person(() => ({ action: "accept", content: { decision: "send" } }));
    const posts: { headers: Record<string, string>; body: Json & { params: Json } }[] = [];
    const client = newClient({ era: "modern", elicitation: p.elicitation });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://kit.test/mcp"), {
        requestInit: { headers: { authorization: "Bearer token-a" } },
        fetch: (url, init) => {
          if (init?.method === "POST" && typeof init.body === "string") {
            posts.push({
              headers: Object.fromEntries(new Headers(init.headers).entries()),
              body: JSON.parse(init.body),
            });
          }
          return handler.fetch(new Request(url, init));
        },
      }),
    );
    cleanups.push(() => client.close());
    await client.callTool({ name: "forward_message", arguments: { id: 1, to: "bob@example.com" } });
    const retry = posts.find((q) => q.body.params["inputResponses"] !== undefined)!;
    const answer = await send(
      handler,
      { ...retry.headers, authorization: "Bearer token-b" },
      { ...retry.body, id: 501 },
    );
    expect(answer["error"]).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    expect(notebook.outbox.all()).toHaveLength(1);
  });

  it("a state sealed by a server with another key is refused", async () => {
    const { retry } = await answeredFlow();
    const other = createExampleServer();
    const handler = createKitHttpHandler(other, {
      caller: anyScopes,
      allowedHosts: ["kit.test"],
      log: () => undefined,
    });
    cleanups.push(() => handler.close());
    const answer = await send(handler, retry.headers, { ...retry.body, id: 401 });
    expect(answer["error"]).toMatchObject({ code: -32602 });
  });
});

describe("exactly once, whatever the person answers and the client replays (property)", () => {
  const decision = fc.oneof(fc.constantFrom("send", "keep"), fc.string({ maxLength: 8 }), fc.integer());
  const answer = fc.oneof(
    fc.record({ action: fc.constant("accept" as const), content: fc.record({ decision }) }),
    fc.record({ action: fc.constantFrom("decline" as const, "cancel" as const) }),
  );

  it("the forward is sent once exactly when the accepted answer says send, never otherwise", async () => {
    await fc.assert(
      fc.asyncProperty(answer, fc.integer({ min: 0, max: 3 }), async (reply, replays) => {
        const notebook = new Notebook();
        const handler = createKitHttpHandler(createExampleServer({ notebook }), {
          caller: anyScopes,
          allowedHosts: ["kit.test"],
          log: () => undefined,
        });
        try {
          const p = person(() => reply as Json);
          const { client, posts } = await recordingModern(handler, p.elicitation);
          const r = await client.callTool({
            name: "forward_message",
            arguments: { id: 2, to: "bob@example.com" },
          });
          const chosen = reply.action === "accept" ? reply.content.decision : undefined;
          const fits = reply.action !== "accept" || chosen === "send" || chosen === "keep";
          if (!fits) {
            expect((r.structuredContent as { error: Json }).error).toMatchObject({
              reason: "INVALID_ARGUMENT",
            });
          } else {
            expect(r.structuredContent).toEqual(
              chosen === "send"
                ? { status: "sent", answer: "send" }
                : { status: "held", answer: chosen === "keep" ? "keep" : reply.action },
            );
          }
          const retry = posts.find((q) => q.body.params["inputResponses"] !== undefined);
          for (let i = 0; i < replays; i++)
            await send(handler, retry!.headers, { ...retry!.body, id: 500 + i });
          expect(notebook.outbox.all()).toHaveLength(chosen === "send" ? 1 : 0);
          await client.close();
        } finally {
          await handler.close();
        }
      }),
      { numRuns: 25 },
    );
  }, 60_000);
});
