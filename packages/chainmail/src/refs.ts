/**
 * Refs name one message: account, folder, UIDVALIDITY and UID, as "m1." + base64url(JSON). Opaque to
 * callers; validated on the way in. A ref whose UIDVALIDITY no longer matches its folder is STALE_REF.
 */
import { MailError, quoteServerText } from "./errors.js";

export interface MessageRef {
  account: string;
  folder: string;
  uidValidity: number;
  uid: number;
}

const PREFIX = "m1.";

export function encodeRef(r: MessageRef): string {
  const json = JSON.stringify([r.account, r.folder, r.uidValidity, r.uid]);
  return PREFIX + Buffer.from(json, "utf8").toString("base64url");
}

function isPosInt(v: unknown, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= max;
}

export function decodeRef(ref: unknown): MessageRef {
  const bad = () =>
    new MailError(
      "INVALID_ARGUMENT",
      `not a message ref: ${JSON.stringify(String(ref).slice(0, 80))}`,
      "Pass refs exactly as search, get_message or get_thread returned them.",
    );
  if (typeof ref !== "string" || !ref.startsWith(PREFIX) || ref.length > 2048) throw bad();
  const body = ref.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw bad();
  const [account, folder, uidValidity, uid] = parsed as unknown[];
  if (
    typeof account !== "string" ||
    account.length === 0 ||
    typeof folder !== "string" ||
    folder.length === 0
  )
    throw bad();
  if (!isPosInt(uidValidity, 0xffffffff) || !isPosInt(uid, 0xffffffff)) throw bad();
  return { account, folder, uidValidity, uid };
}

export function staleRef(ref: MessageRef): MailError {
  return new MailError(
    "STALE_REF",
    `the ref names a message in ${quoteServerText(ref.folder)} before the folder was recreated on the server`,
  );
}
