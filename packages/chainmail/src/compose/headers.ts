/**
 * The extra headers a caller may add: Reply-To and X- headers only. Any other name could forge what
 * the message claims about itself (From, Date, Message-ID, MIME structure), a line break in a value
 * would smuggle in another header, and two names differing only in case are the same header.
 */
import { MailError } from "../errors.js";
import { MAX_HEADER_VALUE, MAX_HEADERS } from "../limits.js";

const NAME = /^(?:Reply-To|X-[!-9;-~]+)$/i;

export function checkHeaders(headers: Record<string, string> | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const seen = new Map<string, string>();
  const entries = Object.entries(headers ?? {});
  if (entries.length > MAX_HEADERS)
    throw new MailError("INVALID_ARGUMENT", `headers must hold at most ${MAX_HEADERS} headers`);
  for (const [name, value] of entries) {
    if (!NAME.test(name))
      throw new MailError(
        "INVALID_ARGUMENT",
        `headers may only add Reply-To and X- headers, not ${JSON.stringify(name.slice(0, 80))}`,
      );
    if (typeof value !== "string")
      throw new MailError("INVALID_ARGUMENT", `headers.${name} must be a string`);
    if (/[\r\n]/.test(value))
      throw new MailError("INVALID_ARGUMENT", `headers.${name} must not contain a line break`);
    if (value.length > MAX_HEADER_VALUE)
      throw new MailError(
        "INVALID_ARGUMENT",
        `headers.${name} must be at most ${MAX_HEADER_VALUE} characters`,
      );
    const lower = name.toLowerCase();
    const before = seen.get(lower);
    if (before !== undefined)
      throw new MailError(
        "INVALID_ARGUMENT",
        `headers names ${JSON.stringify(before)} and ${JSON.stringify(name)}, the same header twice`,
      );
    seen.set(lower, name);
    out.push([name, value]);
  }
  return out;
}
