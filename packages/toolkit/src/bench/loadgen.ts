/**
 * A light load generator for Streamable HTTP. A real v2 SDK client opens each connection (the 2025
 * `initialize` and its session, or the 2026-07-28 discovery) and makes one tools/call; its request
 * is recorded and then replayed with fresh ids and arguments over a keep-alive node:http agent. The
 * SDK client's own work per call (fetch, schema checks) costs about as much CPU as the server's, and
 * on two cores it would compete with the server it is meant to load.
 */
import { type Agent, request } from "node:http";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type Era, newClient } from "../testing/clients.js";
import { argsOf, BENCH_TOKEN, TOOL_NAME } from "./tool-data.js";

export interface Wire {
  url: URL;
  headers: Record<string, string>;
  body: { params: Record<string, unknown> } & Record<string, unknown>;
}

export interface Opened {
  wire: Wire;
  close(): Promise<void>;
}

/** Opens one client the SDK's way and returns the tools/call request it sent, to replay. */
export async function openClient(url: string, era: Era): Promise<Opened> {
  let wire: Wire | undefined;
  const client = newClient({ era, clientName: "bench" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${BENCH_TOKEN}` } },
    fetch: (input, init) => {
      if (typeof init?.body === "string") {
        const body = JSON.parse(init.body) as Wire["body"];
        if (body["method"] === "tools/call") {
          wire = {
            url: new URL(String(input)),
            headers: Object.fromEntries(new Headers(init.headers).entries()),
            body,
          };
        }
      }
      return fetch(input, init);
    },
  });
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: TOOL_NAME, arguments: argsOf(0) });
  if (!wire) throw new Error("the SDK client sent no tools/call request to record");
  return { wire, close: () => client.close() };
}

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

function post(agent: Agent, wire: Wire, body: string, retried = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: wire.url.hostname,
        port: wire.url.port,
        path: wire.url.pathname,
        method: "POST",
        headers: { ...wire.headers, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"] ?? "", text }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed while idle fails before the request reached it;
      // node's documentation prescribes exactly one retry on a fresh socket.
      if (!retried && req.reusedSocket && err.code === "ECONNRESET") {
        post(agent, wire, body, true).then(resolve, reject);
      } else reject(err);
    });
    req.end(body);
  });
}

/** The JSON-RPC answer in a reply: the body itself, or the `data:` line of an SSE stream. */
function answerOf(reply: Reply, id: number): Record<string, unknown> | undefined {
  const docs = reply.contentType.startsWith("text/event-stream")
    ? reply.text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
    : [reply.text];
  for (const doc of docs) {
    try {
      const msg = JSON.parse(doc) as Record<string, unknown>;
      if (msg["id"] === id) return msg;
    } catch {
      // Not JSON: the check below reports the whole reply.
    }
  }
  return undefined;
}

/** One replayed tools/call; throws unless the server answered it with a successful result. */
export async function replayCall(agent: Agent, wire: Wire, id: number, i: number): Promise<void> {
  const body = JSON.stringify({ ...wire.body, id, params: { ...wire.body.params, arguments: argsOf(i) } });
  const reply = await post(agent, wire, body);
  const msg = answerOf(reply, id);
  const result = msg?.["result"] as
    | { isError?: boolean; structuredContent?: { total?: unknown } }
    | undefined;
  if (reply.status !== 200 || !result || result.isError || result.structuredContent?.total !== 3) {
    throw new Error(`tools/call under load failed: HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
  }
}
