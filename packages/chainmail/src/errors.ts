/**
 * The one list of failure reasons chainmail reports, shared by the daemon, the CLI (exit codes) and
 * the MCP server (which passes it to the kit's `defineReasons`, so every MCP error carries the same
 * reason). Shaped like `defineReasons` input: `{ hint, exitCode }`. INVALID_ARGUMENT and INTERNAL keep
 * the kit's exit codes (2, 70).
 */
export interface MailReasonSpec {
  hint: string;
  exitCode: number;
}

export const REASONS = {
  INVALID_ARGUMENT: { hint: "Fix the named argument and call again.", exitCode: 2 },
  NOT_FOUND: {
    hint: "Check the name or ref: list_accounts, list_folders and search give valid ones.",
    exitCode: 3,
  },
  POLICY_DENIED: {
    hint: "The account's policy does not allow this. Only the user can change the policy in config.toml.",
    exitCode: 4,
  },
  AUTH_REQUIRED: {
    hint: "No password is stored for the account. The user runs `chainmail secret set ACCOUNT`.",
    exitCode: 5,
  },
  AUTH_REJECTED: {
    hint: "The mail server refused the stored credentials. The user checks them and runs `chainmail secret set ACCOUNT` again.",
    exitCode: 6,
  },
  SERVER_UNAVAILABLE: {
    hint: "The mail server could not be reached or dropped the connection. Try again later, or run test_account.",
    exitCode: 7,
  },
  STALE_REF: {
    hint: "The folder was recreated on the server (its UIDVALIDITY changed), so the ref no longer names a message. Search again for fresh refs.",
    exitCode: 8,
  },
  CONFLICT: {
    hint: "Something already exists or is in the way; pick another name or resolve it first.",
    exitCode: 9,
  },
  UNSUPPORTED: { hint: "The account or its server does not support this operation.", exitCode: 10 },
  DAEMON_UNAVAILABLE: {
    hint: "The chainmail daemon is not running or not reachable. Start it with `chainmail daemon`.",
    exitCode: 11,
  },
  CONFIG_INVALID: {
    hint: "Fix config.toml as the message says; a running daemon reloads the fixed file by itself, with no restart.",
    exitCode: 12,
  },
  SEND_UNCONFIRMED: {
    hint: "An earlier send with this idempotency key was interrupted after it began, and the daemon cannot tell whether the mail server accepted it, so it is not sent again on its own. Do not retry: the account owner checks the recipients or Sent, then runs `chainmail outbox confirm KEY` (it went out) or `chainmail outbox release KEY` (a retry may send it).",
    exitCode: 13,
  },
  INTERNAL: {
    hint: "An unexpected error; the daemon logged the details. Retrying may not help.",
    exitCode: 70,
  },
} as const satisfies Record<string, MailReasonSpec>;

export type Reason = keyof typeof REASONS;

export function isReason(value: unknown): value is Reason {
  return typeof value === "string" && Object.hasOwn(REASONS, value);
}

/**
 * The error every chainmail module throws for an expected failure. The kit reports any Error with a
 * declared `reason` (and `hint`) as that reason, so an MCP handler can let it through unchanged.
 */
export class MailError extends Error {
  readonly reason: Reason;
  readonly hint: string;
  /**
   * Outside text that explains the failure (a server's reply, a file or folder name from a message),
   * kept out of `message` so that no byte a stranger wrote reaches an agent unfenced: the MCP layer
   * hands it on as the error's untrusted `detail`, and `message` says that it is there.
   */
  readonly detail: string | undefined;
  constructor(reason: Reason, message: string, hint?: string, detail?: string) {
    super(message);
    this.name = "MailError";
    this.reason = reason;
    this.hint = hint ?? REASONS[reason].hint;
    this.detail = detail;
  }
}

export function isMailError(err: unknown): err is MailError {
  return (
    err instanceof MailError ||
    (err instanceof Error && err.name === "MailError" && isReason((err as MailError).reason))
  );
}

/**
 * Joins pieces of outside text into one `detail`, one line each ("folder: …", "server: …"), leaving
 * out the empty ones; undefined when nothing is left. The message of the error says in chainmail's
 * own words what the detail holds: the outside text itself never goes in a message.
 */
export function detailOf(...lines: (string | false | undefined | null)[]): string | undefined {
  const kept = lines.filter((l): l is string => typeof l === "string" && l !== "");
  return kept.length ? kept.join("\n") : undefined;
}

/**
 * An error as one text, its detail after its message: for fields that are untrusted as a whole (a
 * folder's last sync error, a failed Sent copy), where the outside text may stand beside our words.
 */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const detail = (err as { detail?: unknown }).detail;
  return typeof detail === "string" && detail !== "" ? `${err.message}: ${detail}` : err.message;
}

/**
 * A failure as the daemon's protocol carries it: a response's `error`, and each per-item error of a
 * batch or a partial result. Named apart from the kit's error result shape, which wraps one of these.
 */
export interface WireError {
  reason: Reason;
  message: string;
  hint: string;
  /** Outside text, never fenced on the wire (the daemon's clients fence it): see MailError.detail. */
  detail?: string;
}

export function toWireError(err: unknown): WireError {
  if (isMailError(err))
    return {
      reason: err.reason,
      message: err.message,
      hint: err.hint,
      ...(err.detail === undefined ? {} : { detail: err.detail }),
    };
  return { reason: "INTERNAL", message: "Internal error", hint: REASONS.INTERNAL.hint };
}

/**
 * `toWireError` for an error answered as part of a result (one ref's, folder's or account's, in
 * `errors` or `partial`): a fault of ours, INTERNAL, writes its stack to `log` (the daemon's), as a
 * call that fails whole does; its hint says the daemon logged the details, and it had not.
 */
export function partOfResult(
  err: unknown,
  log: ((line: string) => void) | undefined,
  what: string,
): WireError {
  const wire = toWireError(err);
  if (wire.reason === "INTERNAL") log?.(`${what} failed: ${(err as Error)?.stack ?? String(err)}`);
  return wire;
}

export function exitCodeOf(reason: string): number {
  return isReason(reason) ? REASONS[reason].exitCode : REASONS.INTERNAL.exitCode;
}
