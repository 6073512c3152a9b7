import {
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  parseJSONRPCMessage,
  ProtocolError,
  ProtocolErrorCode,
  type RequestId,
} from "@modelcontextprotocol/server";

/**
 * The kit's answers to malformed JSON-RPC, shared by stdio and HTTP. The SDK answers a bad
 * `tools/call` with -32602 whose message is a multi-line zod issue dump, and drops an unparsable
 * stdio line without a word; a client deserves the code the JSON-RPC spec names and one line it
 * can show a person.
 */

/** The first revision without JSON-RPC batches: they exist in 2025-03-26 (and before) alone. */
export const NO_BATCHES_SINCE = "2025-06-18";

/** Whether a connection at `revision` (undefined: none negotiated yet, or 2026-07-28's none) takes batches. */
export const takesBatches = (revision: string | undefined): boolean =>
  revision !== undefined && revision < NO_BATCHES_SINCE;

export type Inbound =
  | { ok: true; message: JSONRPCMessage }
  | { ok: false; answer: JSONRPCErrorResponse | undefined };

function errorOf(id: RequestId | null, code: number, message: string): JSONRPCErrorResponse {
  // JSON-RPC answers an error whose request id could not be read with id null.
  return { jsonrpc: "2.0", id: id as RequestId, error: { code, message } };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function idOf(value: unknown): RequestId | null {
  if (!isObject(value)) return null;
  const id = value["id"];
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** Checks one decoded message; a refused request gets its answer, a refused notification none. */
export function checkMessage(value: unknown): Inbound {
  const id = idOf(value);
  const isRequest = isObject(value) && typeof value["method"] === "string" && id !== null;
  if (isRequest) {
    const problem = paramsProblem(value["method"] as string, value["params"]);
    if (problem) {
      return {
        ok: false,
        answer: errorOf(id, ProtocolErrorCode.InvalidParams, `Invalid params: ${problem}`),
      };
    }
  }
  try {
    return { ok: true, message: parseJSONRPCMessage(value) };
  } catch {
    // A broken notification is dropped without an answer, as JSON-RPC has nobody to answer.
    const notification = isObject(value) && typeof value["method"] === "string" && !("id" in value);
    if (notification) return { ok: false, answer: undefined };
    return {
      ok: false,
      answer: errorOf(id, ProtocolErrorCode.InvalidRequest, "Invalid request: not a JSON-RPC 2.0 message"),
    };
  }
}

/** Decodes one stdio line (or HTTP body); unparsable text gets -32700 with id null. */
export function decodeLine(text: string): Inbound[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message.split("\n")[0] : "not JSON";
    return [{ ok: false, answer: errorOf(null, ProtocolErrorCode.ParseError, `Parse error: ${why}`) }];
  }
  if (Array.isArray(value)) {
    if (value.length === 0)
      return [
        {
          ok: false,
          answer: errorOf(null, ProtocolErrorCode.InvalidRequest, "Invalid request: empty batch"),
        },
      ];
    // The 2025 session transport keys each answer's stream by request id: of two requests sharing
    // one, both ran and one answer was lost. Refused whole, before anything runs.
    const ids = value.filter((m) => isObject(m) && typeof m["method"] === "string").map(idOf);
    const requestIds = ids.filter((id) => id !== null);
    if (new Set(requestIds).size < requestIds.length)
      return [
        {
          ok: false,
          answer: errorOf(
            null,
            ProtocolErrorCode.InvalidRequest,
            "Invalid request: two requests in one batch share an id",
          ),
        },
      ];
    return value.map(checkMessage);
  }
  return [checkMessage(value)];
}

function paramsProblem(method: string, params: unknown): string | undefined {
  if (params !== undefined && !isObject(params)) return "params must be an object";
  if (method !== "tools/call") return undefined;
  if (params === undefined) return "tools/call needs params with the tool's name and arguments";
  if (typeof params["name"] !== "string") return "params.name must be the tool's name, a string";
  const args = params["arguments"];
  if (args !== undefined && !isObject(args))
    return "params.arguments must be an object of the tool's arguments";
  return undefined;
}

/**
 * Reduces an SDK validation dump in an outgoing -32602 to its first line plus the paths it names,
 * so a refusal the kit's own checks did not catch still reads as one line.
 */
export function oneLineError(message: JSONRPCMessage): JSONRPCMessage {
  if (!("error" in message) || !message.error.message.includes("\n")) return message;
  const text = message.error.message;
  // By hand, not by /[:\s[{]+$/ and /"path":\s*\[([^\]]*)\]/g: the dump echoes what the client sent,
  // and those backtracked quadratically on a long run of white space or of `"path":[` without `]`.
  const head = trimEndOf(text.slice(0, text.indexOf("\n")), ":[{");
  const paths = text
    .split('"path":')
    .slice(1)
    .flatMap((after) => {
      const rest = after.trimStart();
      const close = rest.indexOf("]");
      return rest.startsWith("[") && close > 0 ? [rest.slice(1, close)] : [];
    })
    .map((p) => p.replace(/[\s"]/g, "").replaceAll(",", "."));
  const detail = paths.length > 0 ? ` (at ${[...new Set(paths)].join(", ")})` : "";
  return { ...message, error: { ...message.error, message: `${head}${detail}` } };
}

const TOOLS_CALL_PREFIX = "Invalid tools/call request: ";

/** The issues of a zod issue list dumped as JSON, or undefined when `text` is not one. */
function zodIssues(text: string): { path: unknown[]; message: string }[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const isIssue = (i: unknown): i is { path: unknown[]; message: string } =>
    isObject(i) && Array.isArray(i["path"]) && typeof i["message"] === "string";
  return Array.isArray(value) && value.length > 0 && value.every(isIssue) ? value : undefined;
}

/**
 * The SDK checks a request against its wire schema before the kit's handler runs. When the check
 * fails it throws a plain Error whose message is the zod issue list as indented JSON, which goes out
 * as -32603 (tools/list with a numeric cursor), or for tools/call a -32602 with that list after
 * "Invalid tools/call request: ". Either becomes -32602 with one line naming each field and what is
 * wrong with it; any other error is left alone (undefined).
 */
export function invalidParamsOf(err: unknown): ProtocolError | undefined {
  if (!(err instanceof Error)) return undefined;
  let dump = err.message;
  if (err instanceof ProtocolError) {
    if (err.code !== ProtocolErrorCode.InvalidParams || !dump.startsWith(TOOLS_CALL_PREFIX)) return undefined;
    dump = dump.slice(TOOLS_CALL_PREFIX.length);
  }
  const issues = zodIssues(dump);
  if (!issues) return undefined;
  const what = issues.map((i) => `${i.path.join(".")}: ${i.message.replace(/\s+/g, " ")}`);
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${what.join("; ")}`);
}

/** `s` without the white space and the characters of `chars` at its end. */
function trimEndOf(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && (chars.includes(s[end - 1] as string) || /\s/.test(s[end - 1] as string))) end--;
  return s.slice(0, end);
}
