/** Recipient strings as callers write them: `Name <a@b>` or `a@b`, one address each. */
import { domainToASCII } from "node:url";
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

/**
 * An address in the spelling the SMTP envelope and the headers use (nodemailer writes them so): an
 * internationalized domain under an ASCII local part as its punycode (A-label) form; a non-ASCII
 * local part needs SMTPUTF8 anyway and is left as it is. The send policy compares in this spelling,
 * so `@bücher.example` and `@xn--bcher-kva.example` are one rule.
 */
export function envelopeAddress(address: string): string {
  const at = address.lastIndexOf("@");
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (at < 0 || /[\u0080-\uffff]/.test(local) || !/[\u0080-\uffff]/.test(domain)) return address;
  const ascii = domainToASCII(domain);
  return ascii ? `${local}@${ascii}` : address;
}
