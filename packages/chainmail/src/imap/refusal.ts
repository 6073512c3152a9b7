/**
 * What a mail server's NO (or BAD) to a command means for the caller. A refusal is an answer, not an
 * outage: retrying the same call gets the same NO, so it is never SERVER_UNAVAILABLE's "try again
 * later" unless the server itself says the refusal is temporary. The reason follows the response code
 * (RFC 5530) where the server gives one, else what the command was asked to do.
 */
import type { Reason } from "../errors.js";

export interface Refusal {
  reason: Reason;
  hint: string;
}

const CODES: Record<string, Refusal> = {
  // "Invalid mailbox name: Contains '..' part" (Dovecot), names the server's rules forbid.
  CANNOT: {
    reason: "INVALID_ARGUMENT",
    hint: "The mail server does not allow this (its reply is in detail); change the argument it names, such as the folder name.",
  },
  NONEXISTENT: {
    reason: "NOT_FOUND",
    hint: "The folder does not exist on the server (any more). list_folders gives the folder names.",
  },
  TRYCREATE: {
    reason: "NOT_FOUND",
    hint: "The destination folder does not exist or cannot hold messages. list_folders gives the folders that can; create_folder makes one.",
  },
  ALREADYEXISTS: {
    reason: "CONFLICT",
    hint: "Something of that name already exists on the server; pick another name.",
  },
  NOPERM: {
    reason: "UNSUPPORTED",
    hint: "The server does not give this account the rights for this on that folder; only its administrator can change that.",
  },
  READ_ONLY: {
    reason: "UNSUPPORTED",
    hint: "The folder is read-only for this account; only the server's administrator can change that.",
  },
  OVERQUOTA: {
    reason: "UNSUPPORTED",
    hint: "The account is over its storage quota on the server; the user frees space (empties Trash, deletes mail) first.",
  },
  LIMIT: {
    reason: "UNSUPPORTED",
    hint: "The request is over a limit of the server; split it into smaller calls.",
  },
  // The server says these are temporary: trying later is the right advice.
  INUSE: {
    reason: "SERVER_UNAVAILABLE",
    hint: "The server says the folder is in use; try again in a moment.",
  },
  UNAVAILABLE: {
    reason: "SERVER_UNAVAILABLE",
    hint: "The server says it cannot do this just now; try again later.",
  },
  SERVERBUG: {
    reason: "SERVER_UNAVAILABLE",
    hint: "The server reported an internal error; try again later, or run test_account.",
  },
};

/** A NO without a response code: the server refused this request; repeating it will not help. */
const REFUSED: Refusal = {
  reason: "UNSUPPORTED",
  hint: "The mail server refused the command (its reply is in detail); the same call will be refused again.",
};

/**
 * The reason and hint for a refusal with this response code (upper case, as imapflow's
 * serverResponseCode gives it); `fallback` for a refusal without a known code.
 */
export function refusalOf(code: string | undefined, fallback: Refusal = REFUSED): Refusal {
  return (code && CODES[code.toUpperCase()]) || fallback;
}

/** Whether an imapflow error is the server's answer to a command (NO or BAD), not a lost connection. */
export function isServerRefusal(
  err: unknown,
): err is { responseStatus: string; serverResponseCode?: string } {
  const s = (err as { responseStatus?: unknown } | null)?.responseStatus;
  return s === "NO" || s === "BAD";
}

/** The hint for a ref whose message is not in its folder any more. */
export const MESSAGE_GONE_HINT =
  "A ref names a message in one folder: if you moved it, use the new_ref the move returned; otherwise it was deleted or moved by another client, so search again for its current ref.";
