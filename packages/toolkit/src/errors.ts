import type { UntrustedText } from "./untrusted.js";

/**
 * Error reasons: each server declares its list once; the kit adds the reasons it raises itself.
 * A reason carries its default hint and the exit code a CLI over the same domain uses.
 */

export interface ReasonSpec {
  /** What the agent (or person) can do about it, when the thrower gives no better hint. */
  hint: string;
  /** Exit code for a CLI that reports this reason. */
  exitCode: number;
}

/** The reasons the kit itself raises; every server has them. */
export const KIT_REASONS = {
  INVALID_ARGUMENT: { hint: "Fix the named argument and call again.", exitCode: 2 },
  INSUFFICIENT_SCOPE: {
    hint: "This connection was not granted the scope the tool needs; ask the user to grant it.",
    exitCode: 77,
  },
  INTERNAL: {
    hint: "An unexpected error; the server logged the details. Retrying may not help.",
    exitCode: 70,
  },
} as const satisfies Record<string, ReasonSpec>;

export type KitReason = keyof typeof KIT_REASONS;

export type Reasons<R extends string = string> = Readonly<Record<R | KitReason, ReasonSpec>>;

/** Declares a server's reasons; the kit's own are merged in (a server may override their hints). */
export function defineReasons<R extends string>(own: Record<R, ReasonSpec>): Reasons<R> {
  for (const name of Object.keys(own)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`Error reason "${name}" must be UPPER_SNAKE_CASE`);
  }
  return Object.freeze({ ...KIT_REASONS, ...own }) as Reasons<R>;
}

/**
 * The error a handler throws to give the caller a clear, expected failure. A domain module that
 * should not depend on the kit throws its own Error class with the same `reason` (and optional
 * `hint`) fields instead: see `isReasonedError`. Anything else thrown is reported as INTERNAL.
 */
export class ToolError<R extends string = string> extends Error {
  readonly reason: R;
  readonly hint: string | undefined;
  /**
   * Outside text that explains the failure (a server's reply, a file name from a message). It never
   * goes in `message`: the result carries it fenced, as the error's `detail: {"untrusted": ...}`, and
   * the message says in the server's own words that it is there.
   */
  readonly detail: string | undefined;
  constructor(reason: R, message: string, hint?: string, detail?: string) {
    super(message);
    this.name = "ToolError";
    this.reason = reason;
    this.hint = hint;
    this.detail = detail;
  }
}

/**
 * An expected failure as the kit reads it: any Error with a string `reason`, and maybe a `hint` and
 * a `detail` (outside text, fenced on the way out).
 */
export interface ReasonedError extends Error {
  reason: string;
  hint?: string | undefined;
  /** Outside text explaining the failure; the kit fences it into the error's `detail`. */
  detail?: string | undefined;
}

/**
 * True for any Error carrying a string `reason`: a ToolError, or a domain module's own error class.
 * Only reasons the server declared keep their message; any other becomes INTERNAL.
 */
export function isReasonedError(err: unknown): err is ReasonedError {
  return err instanceof Error && typeof (err as { reason?: unknown }).reason === "string";
}

/**
 * The structured shape of every failed call. `detail`, when present, is outside text that explains
 * the failure, fenced: `message` and `hint` are the server's own words only.
 */
export interface ErrorBody {
  error: { reason: string; message: string; hint: string; detail?: UntrustedText };
}
