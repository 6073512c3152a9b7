/**
 * A light HTTP load generator's two halves. A real v2 SDK client opens a connection (the 2025
 * `initialize` and its session, or the 2026-07-28 discovery) and makes a tools/call, whose request is
 * recorded (`recordToolCall`); `replayToolCall` then sends that request again with a fresh id, tool
 * and arguments over a keep-alive node:http agent. The SDK client's own work per call (fetch, schema
 * checks) costs about as much CPU as a server's, so on a small machine a benchmark driving many SDK
 * clients measures its own clients as much as the server it loads.
 */
import { type Agent, request } from "node:http";
import { type Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type Era, newClient } from "./clients.js";

/** A tools/call request as an SDK client sent it. */
export interface RecordedCall {
  url: URL;
  headers: Record<string, string>;
  body: { params: Record<string, unknown> } & Record<string, unknown>;
}

export interface RecordOptions {
  era: Era;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  clientName?: string;
  /** What the client does once connected; it must make at least one tools/call. */
  calls: (client: Client) => Promise<void>;
}

/**
 * Connects an SDK client, runs `calls` and returns the last tools/call request it sent, with the
 * client kept open (a 2025 session lives as long as its client: close it when the replays are done).
 */
export async function recordToolCall(
  url: string,
  options: RecordOptions,
): Promise<{ call: RecordedCall; close(): Promise<void> }> {
  let call: RecordedCall | undefined;
  const client = newClient({ era: options.era, clientName: options.clientName ?? "replay" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${options.token}` } },
    fetch: (input, init) => {
      if (typeof init?.body === "string") {
        const body = JSON.parse(init.body) as RecordedCall["body"];
        if (body["method"] === "tools/call") {
          call = {
            url: new URL(String(input)),
            headers: Object.fromEntries(new Headers(init.headers).entries()),
            body,
          };
        }
      }
      return fetch(input, init);
    },
  });
  try {
    await client.connect(transport);
    await options.calls(client);
  } catch (err) {
    await client.close();
    throw err;
  }
  if (!call) {
    await client.close();
    throw new Error("the SDK client sent no tools/call request to record");
  }
  return { call, close: () => client.close() };
}

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

function post(
  agent: Agent,
  url: URL,
  headers: Record<string, string>,
  body: string,
  retried = false,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { ...headers, "content-length": Buffer.byteLength(body) },
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
        post(agent, url, headers, body, true).then(resolve, reject);
      } else reject(err);
    });
    req.end(body);
  });
}

/** The JSON-RPC answer to `id` in a reply: the body itself, or a `data:` line of an SSE stream. */
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
      // Not JSON: the caller's check reports the whole reply.
    }
  }
  return undefined;
}

export interface ReplayedResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

/**
 * Sends a recorded tools/call again with a fresh id, arguments and, optionally, tool name (and
 * `url`, another instance of the same server). Returns the result; throws when the server answered
 * anything but HTTP 200 with a result for that id (an error result is returned, for the caller to judge).
 */
export async function replayToolCall(
  agent: Agent,
  call: RecordedCall,
  next: { id: number; arguments: Record<string, unknown>; name?: string; url?: URL },
): Promise<ReplayedResult> {
  const params = {
    ...call.body.params,
    arguments: next.arguments,
    ...(next.name ? { name: next.name } : {}),
  };
  const body = JSON.stringify({ ...call.body, id: next.id, params });
  // The 2026-07-28 era names the tool in a header too; it must match the body.
  const headers =
    next.name && "mcp-name" in call.headers ? { ...call.headers, "mcp-name": next.name } : call.headers;
  const reply = await post(agent, next.url ?? call.url, headers, body);
  const result = answerOf(reply, next.id)?.["result"] as ReplayedResult | undefined;
  if (reply.status !== 200 || !result) {
    throw new Error(`tools/call failed: HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
  }
  return result;
}
