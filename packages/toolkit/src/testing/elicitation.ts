import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { REQUEST_STATE_KEY_ENV } from "../server.js";
import { connectStdio, type Elicitation, newClient, type StdioSpawn } from "./clients.js";
import { startHttpBin } from "./matrix.js";
import { type RoundRobinProxy, roundRobinProxy } from "./proxy.js";

/**
 * The era matrix's clients that answer the person's questions (elicitation): the v1 SDK `Client`
 * 1.32 (2025-11-25: `elicitation/create`, URL mode with `notifications/elicitation/complete`) and
 * the v2 `Client` pinned to 2026-07-28 (`input_required`, the call retried with the answer), each
 * over stdio and Streamable HTTP, and the 2026-07-28 client also against two instances behind a
 * plain round-robin proxy (the retry lands on the other instance). The "person" accepts, declines
 * or cancels; a fourth client declares no elicitation at all.
 */
export type AskingClient = "sdk-v1" | "sdk-v2-modern";
export type AskingTransport = "stdio" | "http" | "http-2-instances";
/** What the person does with the question; `cannot-ask` is a client without the capability. */
export type PersonAnswer = "accept" | "decline" | "cancel" | "cannot-ask";

export interface AskingCombination {
  client: AskingClient;
  transport: AskingTransport;
  answer: PersonAnswer;
}

const ANSWERS = ["accept", "decline", "cancel", "cannot-ask"] as const;

export const ELICITATION_MATRIX: readonly AskingCombination[] = (
  [
    ["sdk-v1", "stdio"],
    ["sdk-v1", "http"],
    ["sdk-v2-modern", "stdio"],
    ["sdk-v2-modern", "http"],
    ["sdk-v2-modern", "http-2-instances"],
  ] as const
).flatMap(([client, transport]) => ANSWERS.map((answer) => ({ client, transport, answer })));

type Json = Record<string, unknown>;

export interface AskTarget {
  /** The built bin; for HTTP the matrix appends `--http 127.0.0.1:0 --token <token>`. */
  spawn: StdioSpawn;
  /** A call that asks a form question and, when the person accepts, takes one irreversible step. */
  form: {
    tool: string;
    args: Json;
    /** The content the person's accept fills the form with. */
    accept: Json;
    /** Checks the call's structured content for what the person answered. */
    check: (answer: PersonAnswer, structured: Json) => void;
  };
  /** A call that asks the person to open a URL. */
  url: { tool: string; args: Json; check: (answer: PersonAnswer, structured: Json) => void };
  /** How many times the irreversible step has run, read where it lands (a file every instance writes). */
  count: () => number;
}

interface AskingDriver {
  call(tool: string, args: Json): Promise<{ isError: boolean; structured: Json }>;
  close(): Promise<void>;
}

interface Heard {
  asked: ElicitRequest["params"][];
  completed: string[];
}

function fail(message: string): never {
  throw new Error(message);
}

function answerOf(answer: PersonAnswer, accept: Json): Elicitation["answer"] {
  return (params): ElicitResult => {
    if (answer === "accept")
      return params.mode === "url"
        ? { action: "accept" }
        : { action: "accept", content: accept as ElicitResult["content"] & object };
    return { action: answer === "decline" ? "decline" : "cancel" };
  };
}

async function v1Driver(
  target: AskTarget,
  transport: AskingTransport,
  url: string,
  token: string,
  env: Record<string, string>,
  answer: PersonAnswer,
  heard: Heard,
): Promise<AskingDriver> {
  // The v1 SDK is an optional peer: only the matrix needs it.
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { ElicitRequestSchema, ElicitationCompleteNotificationSchema } = await import(
    "@modelcontextprotocol/sdk/types.js"
  );
  const asks = answer !== "cannot-ask";
  const client = new Client(
    { name: "matrix-v1-asking", version: "0.0.0" },
    asks ? { capabilities: { elicitation: { form: {}, url: {} } } } : {},
  );
  if (asks) {
    const respond = answerOf(answer, target.form.accept);
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      heard.asked.push(request.params as ElicitRequest["params"]);
      return (await respond(request.params as ElicitRequest["params"])) as never;
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
      heard.completed.push(n.params.elicitationId);
    });
  }
  if (transport === "stdio") {
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    await client.connect(
      new StdioClientTransport({
        command: target.spawn.command,
        args: target.spawn.args ?? [],
        env: { ...(process.env as Record<string, string>), ...(target.spawn.env ?? {}), ...env },
        ...(target.spawn.cwd ? { cwd: target.spawn.cwd } : {}),
        stderr: "ignore",
      }),
    );
  } else {
    const { StreamableHTTPClientTransport: V1Http } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    await client.connect(
      new V1Http(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
  }
  return {
    call: async (tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
    },
    close: () => client.close(),
  };
}

/** A POST the 2026-07-28 client sent over HTTP, and which instance behind the proxy answered it. */
interface SentPost {
  body: Json & { method?: string; params?: Json };
  headers: Record<string, string>;
  served: number | undefined;
}

async function modernDriver(
  target: AskTarget,
  transport: AskingTransport,
  url: string,
  token: string,
  env: Record<string, string>,
  answer: PersonAnswer,
  heard: Heard,
  proxy: RoundRobinProxy | undefined,
  posts: SentPost[],
): Promise<AskingDriver> {
  const respond = answerOf(answer, target.form.accept);
  const elicitation: Elicitation | undefined =
    answer === "cannot-ask"
      ? undefined
      : {
          modes: ["form", "url"],
          answer: (params) => {
            heard.asked.push(params);
            return respond(params);
          },
          onComplete: (id) => heard.completed.push(id),
        };
  const options = { era: "modern" as const, ...(elicitation ? { elicitation } : {}) };
  if (transport === "stdio") {
    const conn = await connectStdio(
      { ...target.spawn, env: { ...(target.spawn.env ?? {}), ...env } },
      options,
    );
    return {
      call: async (tool, args) => {
        const r = await conn.client.callTool({ name: tool, arguments: args });
        return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
      },
      close: () => conn.close(),
    };
  }
  const client = newClient(options);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      // Requests go one at a time, so the proxy's last pick is the instance that answered this one.
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === "POST" && typeof init.body === "string") {
          posts.push({
            body: JSON.parse(init.body) as SentPost["body"],
            headers: Object.fromEntries(new Headers(init.headers).entries()),
            served: proxy?.served.at(-1),
          });
        }
        return response;
      },
    }),
  );
  if (client.getProtocolEra() !== "modern") fail(`the v2 client landed on ${client.getProtocolEra()}`);
  return {
    call: async (tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      return { isError: r.isError === true, structured: (r.structuredContent ?? {}) as Json };
    },
    close: () => client.close(),
  };
}

/** The JSON-RPC answer to `id` in an HTTP response: its JSON body, or a `data:` line of its SSE stream. */
async function rpcAnswer(response: Response, id: number): Promise<Json> {
  const text = await response.text();
  const docs = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
    : [text];
  for (const doc of docs) {
    const message = JSON.parse(doc) as Json;
    if (message["id"] === id) return message;
  }
  return fail(`no answer to request ${id} in: ${text.slice(0, 500)}`);
}

/**
 * Runs one combination of the elicitation matrix; throws with what went wrong. `target` may be a
 * function of a temp folder made for this combination (and removed after it).
 */
export async function checkElicitation(
  combination: AskingCombination,
  targetIn: AskTarget | ((dir: string) => AskTarget),
): Promise<void> {
  const { client, transport, answer } = combination;
  const dir = mkdtempSync(join(tmpdir(), `mcp-ask-${client}-${transport}-${answer}-`));
  try {
    await runElicitation(typeof targetIn === "function" ? targetIn(dir) : targetIn, combination);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runElicitation(target: AskTarget, combination: AskingCombination): Promise<void> {
  const { client, transport, answer } = combination;
  const token = `matrix-${randomBytes(8).toString("hex")}`;
  // Every instance seals and opens the request state with the same key, as a deployment's would.
  const env = { [REQUEST_STATE_KEY_ENV]: randomBytes(32).toString("hex") };
  const spawn = { ...target.spawn, env: { ...(target.spawn.env ?? {}), ...env } };
  const instances =
    transport === "stdio"
      ? []
      : await Promise.all(
          Array.from({ length: transport === "http-2-instances" ? 2 : 1 }, () => startHttpBin(spawn, token)),
        );
  const proxy =
    transport === "http-2-instances" ? await roundRobinProxy(instances.map((i) => i.url)) : undefined;
  const url = proxy?.url ?? instances[0]?.url ?? "";
  const heard: Heard = { asked: [], completed: [] };
  const posts: SentPost[] = [];
  let driver: AskingDriver | undefined;
  try {
    driver =
      client === "sdk-v1"
        ? await v1Driver(target, transport, url, token, env, answer, heard)
        : await modernDriver(target, transport, url, token, env, answer, heard, proxy, posts);

    // The form: the irreversible step runs once on accept, never otherwise.
    const before = target.count();
    const form = await driver.call(target.form.tool, target.form.args);
    if (form.isError) fail(`${target.form.tool} failed: ${JSON.stringify(form.structured)}`);
    target.form.check(answer, form.structured);
    const ran = target.count() - before;
    if (ran !== (answer === "accept" ? 1 : 0)) fail(`the step ran ${ran} times after "${answer}"`);
    const asked = heard.asked.length;
    if (asked !== (answer === "cannot-ask" ? 0 : 1))
      fail(`the person was asked ${asked} times, answering "${answer}"`);
    if (answer !== "cannot-ask" && heard.asked[0]?.mode === "url") fail("the form question came as a URL");

    if (proxy && answer === "accept") await checkRetryElsewhere(target, url, posts);

    // The URL: asked as such; on 2025-11-25 an accepted one is completed with its own elicitationId.
    const link = await driver.call(target.url.tool, target.url.args);
    if (link.isError) fail(`${target.url.tool} failed: ${JSON.stringify(link.structured)}`);
    target.url.check(answer, link.structured);
    if (answer !== "cannot-ask") {
      const question = heard.asked[1] as { mode?: string; url?: string; elicitationId?: string } | undefined;
      if (question?.mode !== "url" || !question.url)
        fail(`the URL question came as ${JSON.stringify(question)}`);
      const expected = answer === "accept" && client === "sdk-v1" ? [question.elicitationId] : [];
      if (client === "sdk-v1" && !question.elicitationId)
        fail("a 2025-11-25 URL question has no elicitationId");
      // 2026-07-28 has no elicitationId: a question carrying one would mean the era was misread.
      if (client === "sdk-v2-modern" && question.elicitationId !== undefined) {
        fail(`a 2026-07-28 URL question carries an elicitationId: ${JSON.stringify(question)}`);
      }
      // The notice may trail the result on its stream by a moment.
      const until = Date.now() + 5_000;
      while (heard.completed.length < expected.length && Date.now() < until)
        await new Promise((r) => setTimeout(r, 20));
      if (JSON.stringify(heard.completed) !== JSON.stringify(expected)) {
        fail(
          `elicitation/complete notices ${JSON.stringify(heard.completed)}, expected ${JSON.stringify(expected)}`,
        );
      }
    } else if (heard.asked.length !== 0) fail("a client without the capability was asked");
  } finally {
    await driver?.close().catch(() => undefined);
    await proxy?.close();
    for (const i of instances) i.child.kill();
  }
}

/**
 * Behind the proxy: the answered retry went to the other instance than the round that asked, and
 * sending that same answered retry twice more (a client retrying it) takes the step no further.
 */
async function checkRetryElsewhere(target: AskTarget, url: string, posts: SentPost[]): Promise<void> {
  const calls = posts.filter(
    (p) => p.body.method === "tools/call" && p.body.params?.["name"] === target.form.tool,
  );
  const asking = calls.find((p) => p.body.params?.["inputResponses"] === undefined);
  const retry = calls.find((p) => p.body.params?.["inputResponses"] !== undefined);
  if (!asking || !retry) fail(`expected the call and its retry, saw ${calls.length} calls`);
  if (asking.served === undefined || asking.served === retry.served) {
    fail(`the retry was served by instance ${retry.served}, the question by ${asking.served}`);
  }
  const before = target.count();
  for (const id of [9001, 9002]) {
    const response = await fetch(url, {
      method: "POST",
      headers: retry.headers,
      body: JSON.stringify({ ...retry.body, id }),
    });
    const message = await rpcAnswer(response, id);
    const result = message["result"] as { isError?: boolean; structuredContent?: Json } | undefined;
    if (!result || result.isError) fail(`the replayed retry got ${JSON.stringify(message)}`);
    target.form.check("accept", result.structuredContent ?? {});
  }
  if (target.count() !== before)
    fail(`replaying the answered retry took the step ${target.count() - before} more times`);
}
