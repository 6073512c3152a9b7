import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import type { ErrorBody } from "../errors.js";

type Args = Record<string, unknown>;

export interface Session {
  /** The result exactly as the client received it. */
  raw(name: string, args?: Args): Promise<CallToolResult>;
  /** A successful call's structured content; throws with the error body when the call failed. */
  ok<T = Record<string, unknown>>(name: string, args?: Args): Promise<T>;
  /** A failed call's error (reason, message, hint), checked for the kit's shape; throws when it succeeded. */
  fails(name: string, args?: Args): Promise<ErrorBody["error"]>;
}

/** Calls tools through a real SDK client, which validates each result against the tool's output schema. */
export function session(client: Client): Session {
  const raw = async (name: string, args: Args = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    raw,
    ok: async <T>(name: string, args: Args = {}) => {
      const res = await raw(name, args);
      if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.structuredContent)}`);
      return res.structuredContent as T;
    },
    fails: async (name, args = {}) => {
      const res = await raw(name, args);
      if (!res.isError)
        throw new Error(`${name} should fail, but returned ${JSON.stringify(res.structuredContent)}`);
      const error = (res.structuredContent as Partial<ErrorBody> | undefined)?.error;
      if (
        !error ||
        typeof error.reason !== "string" ||
        typeof error.message !== "string" ||
        typeof error.hint !== "string"
      ) {
        throw new Error(
          `${name} failed without the kit's error shape: ${JSON.stringify(res.structuredContent)}`,
        );
      }
      return error;
    },
  };
}

export interface ManualClock {
  /** Milliseconds since the epoch, as `Date.now` gives them. */
  now(): number;
  /** The same instant as a Date. */
  date(): Date;
  set(at: number | string): void;
  advance(ms: number): void;
}

/** A clock a test moves by hand, for code that takes `now: () => number` (or a Date clock). */
export function manualClock(start: number | string = "2026-03-10T12:00:00Z"): ManualClock {
  const toMs = (at: number | string) => (typeof at === "number" ? at : Date.parse(at));
  let t = toMs(start);
  if (Number.isNaN(t)) throw new Error(`manualClock: not a time: ${String(start)}`);
  return {
    now: () => t,
    date: () => new Date(t),
    set: (at) => {
      t = toMs(at);
    },
    advance: (ms) => {
      t += ms;
    },
  };
}
