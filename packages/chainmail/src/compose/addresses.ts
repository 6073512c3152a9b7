/** Recipient strings as callers write them: `Name <a@b>` or `a@b`, one address each. */
import addressparser from "nodemailer/lib/addressparser";
import { MailError } from "../errors.js";

export interface MailAddress {
  name: string;
  address: string;
}

const ADDRESS = /^[^@\s<>(),;:"]+@[^@\s<>(),;:"]+$/u;

export function parseAddress(raw: string, what: string): MailAddress {
  const list = addressparser(raw, { flatten: true });
  const one = list.length === 1 ? list[0] : undefined;
  if (!one?.address || !ADDRESS.test(one.address))
    throw new MailError("INVALID_ARGUMENT", `${what} is not one email address written as Name <a@b> or a@b`);
  return { name: one.name ?? "", address: one.address };
}

export function parseAddresses(list: readonly string[], what: string): MailAddress[] {
  return list.map((raw, i) => parseAddress(raw, `${what}[${i}]`));
}

/** Drops repeats (by address, in any case) and the addresses in `without`, keeping the first order. */
export function uniqueAddresses(list: MailAddress[], without: string[] = []): MailAddress[] {
  const seen = new Set(without.map((a) => a.toLowerCase()));
  const out: MailAddress[] = [];
  for (const a of list) {
    const key = a.address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(a);
  }
  return out;
}
