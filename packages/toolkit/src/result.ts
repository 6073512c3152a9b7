import type { CallToolResult } from "@modelcontextprotocol/server";
import { type ErrorBody, isReasonedError, KIT_REASONS, type Reasons } from "./errors.js";
import { untrusted } from "./untrusted.js";

/** How the text block of a successful result reads. */
export type TextMode =
  /** A one-line summary, a blank line, then the result as JSON. */
  | "summary+json"
  /** The result as JSON text only: the same data as the structured content. */
  | "json";

export function successResult(
  structured: Record<string, unknown>,
  summary: string,
  mode: TextMode,
): CallToolResult {
  const json = JSON.stringify(structured);
  const text = mode === "json" ? json : `${summary}\n\n${json}`;
  const content: CallToolResult["content"] = [{ type: "text", text }];
  serialized.set(content, { structured, json });
  return { content, structuredContent: structured };
}

/**
 * The JSON of each result's structured content, made once for its text block, so the stdio
 * transport need not serialize it a second time (`structuredJsonOf`). Keyed by the result's content
 * array, which is new for each result; the entry holds the structured object it was made from, so a
 * result whose structured content was replaced is serialized afresh.
 */
const serialized = new WeakMap<object, { structured: object; json: string }>();

/** The JSON `successResult` made of `result.structuredContent`, or undefined. */
export function structuredJsonOf(result: {
  content?: unknown;
  structuredContent?: unknown;
}): string | undefined {
  const entry =
    typeof result.content === "object" && result.content ? serialized.get(result.content) : undefined;
  return entry && entry.structured === result.structuredContent ? entry.json : undefined;
}

/**
 * The error shape; `detail` is outside text explaining the failure, fenced here (an empty detail is
 * left out: it would tell the agent nothing).
 */
export function errorBody(reason: string, message: string, hint: string, detail?: string): ErrorBody {
  return { error: { reason, message, hint, ...(detail ? { detail: untrusted(detail) } : {}) } };
}

/** The text block is the message and hint, then the JSON: a detail appears only inside the JSON, fenced. */
export function errorResult(body: ErrorBody): CallToolResult {
  const { message, hint } = body.error;
  const text = `${message}${hint ? `\nHint: ${hint}` : ""}\n\n${JSON.stringify(body)}`;
  // In the order of the SDK's CallToolResultSchema, as its checked copy had them on the wire: the
  // kit sends this object as it is (see KitProtocolServer)
  return {
    content: [{ type: "text", text }],
    structuredContent: body as unknown as Record<string, unknown>,
    isError: true,
  };
}

/**
 * Turns anything thrown into the error shape. A ToolError (or any reasoned error) keeps its reason,
 * message and hint, and its `detail` string is fenced into the body's `detail`; a reason the
 * server never declared, or any other exception, becomes INTERNAL and its details go to the log only.
 */
export function toErrorBody(
  err: unknown,
  reasons: Reasons,
  log: (line: string) => void,
  tool: string,
): ErrorBody {
  if (isReasonedError(err) && Object.hasOwn(reasons, err.reason)) {
    const spec = (reasons as Record<string, { hint: string } | undefined>)[err.reason];
    const detail = typeof err.detail === "string" ? err.detail : undefined;
    return errorBody(err.reason, err.message, err.hint ?? spec?.hint ?? "", detail);
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  log(`tool ${tool} failed: ${detail}`);
  return errorBody("INTERNAL", "Internal error", reasons.INTERNAL?.hint ?? KIT_REASONS.INTERNAL.hint);
}
