/**
 * Refs name one message: account, folder, UIDVALIDITY and UID. Opaque to callers; validated on the
 * way in. A ref whose UIDVALIDITY no longer matches its folder is STALE_REF.
 *
 * Two forms, at most MAX_REF_LENGTH characters each:
 * - "m1." + base64url(JSON [account, folder, uidValidity, uid]), whenever it fits;
 * - "m2." + base64url of a packed form for refs m1 cannot fit: folder names of non-ASCII text
 *   cost up to 3 bytes a character in UTF-8 (6 when JSON escapes them), so the packed form stores
 *   the folder as UTF-16 (2 bytes per code unit) when that is shorter. Every folder name of up to
 *   MAX_REF_FOLDER_UNITS code units (the daemon accepts 500, plus a namespace prefix) fits.
 * encodeRef picks the form by the ref alone, so one message always gets the same ref.
 */
import { MailError } from "./errors.js";

export interface MessageRef {
  account: string;
  folder: string;
  uidValidity: number;
  uid: number;
}

/** The longest ref decodeRef accepts, and the tools advertise. */
export const MAX_REF_LENGTH = 2048;
/** Folder names up to this many UTF-16 code units always fit in a ref (with a 64-character account). */
export const MAX_REF_FOLDER_UNITS = 720;

const M1 = "m1.";
const M2 = "m2.";
const UTF8 = 0;
const UTF16 = 1;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function packed(r: MessageRef): string {
  const account = Buffer.from(r.account, "utf8");
  if (account.length > 255) throw tooLong(r);
  // UTF-8 cannot carry a lone surrogate (a server may send one in a mailbox name); UTF-16 can.
  const utf8 = LONE_SURROGATE.test(r.folder) ? undefined : Buffer.from(r.folder, "utf8");
  const utf16 = Buffer.from(r.folder, "utf16le");
  const useUtf8 = utf8 !== undefined && utf8.length <= utf16.length;
  const head = Buffer.alloc(10);
  head.writeUInt8(useUtf8 ? UTF8 : UTF16, 0);
  head.writeUInt32BE(r.uidValidity, 1);
  head.writeUInt32BE(r.uid, 5);
  head.writeUInt8(account.length, 9);
  return M2 + Buffer.concat([head, account, useUtf8 ? utf8 : utf16]).toString("base64url");
}

function tooLong(r: MessageRef): MailError {
  return new MailError(
    "UNSUPPORTED",
    `the folder name in account ${r.account} is too long to name in a ref (${r.folder.length} characters; up to ${MAX_REF_FOLDER_UNITS} always fit)`,
    "Rename the folder to a shorter name in a mail client.",
  );
}

/** The message's ref; UNSUPPORTED when its folder name is too long for any ref form. */
export function encodeRef(r: MessageRef): string {
  const json = JSON.stringify([r.account, r.folder, r.uidValidity, r.uid]);
  const m1 = M1 + Buffer.from(json, "utf8").toString("base64url");
  if (m1.length <= MAX_REF_LENGTH) return m1;
  const m2 = packed(r);
  if (m2.length > MAX_REF_LENGTH) throw tooLong(r);
  return m2;
}

function isPosInt(v: unknown, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= max;
}

function fromM1(bytes: Buffer): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(bytes.toString("utf8"));
    return Array.isArray(parsed) && parsed.length === 4 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function fromM2(bytes: Buffer): unknown[] | undefined {
  if (bytes.length < 10) return undefined;
  const form = bytes.readUInt8(0);
  const accountLength = bytes.readUInt8(9);
  const account = bytes.subarray(10, 10 + accountLength);
  const folder = bytes.subarray(10 + accountLength);
  if (account.length !== accountLength) return undefined;
  const text = new TextDecoder("utf-8", { fatal: true });
  try {
    if (form === UTF8)
      return [text.decode(account), text.decode(folder), bytes.readUInt32BE(1), bytes.readUInt32BE(5)];
    if (form === UTF16 && folder.length % 2 === 0)
      return [text.decode(account), folder.toString("utf16le"), bytes.readUInt32BE(1), bytes.readUInt32BE(5)];
  } catch {
    // not UTF-8: not a ref
  }
  return undefined;
}

export function decodeRef(ref: unknown): MessageRef {
  const bad = () =>
    new MailError(
      "INVALID_ARGUMENT",
      `not a message ref: ${JSON.stringify(String(ref).slice(0, 80))}`,
      "Pass refs exactly as search, get_message or get_thread returned them.",
    );
  if (typeof ref !== "string" || ref.length > MAX_REF_LENGTH) throw bad();
  const m1 = ref.startsWith(M1);
  if (!m1 && !ref.startsWith(M2)) throw bad();
  const body = ref.slice(M1.length);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw bad();
  const bytes = Buffer.from(body, "base64url");
  const parsed = m1 ? fromM1(bytes) : fromM2(bytes);
  if (!parsed) throw bad();
  const [account, folder, uidValidity, uid] = parsed;
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
    "the ref names a message in a folder from before the folder was recreated on the server; the folder is in detail",
    undefined,
    `folder: ${ref.folder}`,
  );
}
