/**
 * The one address model of the send path. Every address that can reach SMTP (a tool's to/cc/bcc,
 * the original's From/Reply-To/To/Cc of a reply, a draft's To/Cc/Bcc and From) is parsed here, once,
 * into a mailbox whose `address` is the exact text the SMTP envelope carries: the local part as
 * written (quoted again when it is not a dot-atom) and the domain in IDNA ASCII form. The policy
 * judges that text and the SMTP client is handed that text, so nothing between them can read an
 * address another way (issue 30: `<evil@y.com,x@example.com>` and `evil@example.com/ü`).
 *
 * Parser: `email-addresses` (a PEG parser generated from the RFC 5322 grammar, with RFC 6532 UTF-8,
 * groups, comments, quoted strings and the obsolete syntax). Compared with nodemailer's
 * `addressparser` (a lenient tokenizer that splits `<a@x,b@y>` into two addresses and accepts any
 * text around an `@`) and `smtp-address-parser` (RFC 5321 paths only, no display names, groups or
 * header lists), it is the one that reads a header the way the RFC does and says when it cannot.
 * Domains: `tr46` (UTS-46 ToASCII with STD3 rules, the mapping WHATWG URL and browsers use; its
 * engines allow Node >= 20) rather than node's url.domainToASCII, which runs the same mapping
 * without STD3 rules, so `example.com/ü` comes back as `example.xn--com/-3ra` instead of failing.
 * The result must then be LDH labels (a hostname), so `/`, `?`, `#`, `\`, `_` and domain literals
 * are refused.
 */
import emailAddresses from "email-addresses";
import libmime from "libmime";
import { toASCII } from "tr46";
import { MailError } from "../errors.js";

export interface MailAddress {
  /** The display name, decoded (RFC 2047 words too); "" when there is none. */
  name: string;
  /** The envelope spelling: local part as sent, `@`, the domain in lowercase IDNA ASCII. */
  address: string;
}

/** Longest text read as one address (RFC 5322's line limit) or as one header's address list. */
const MAX_ONE = 998;
const MAX_LIST = 64 * 1024;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** RFC 5322 atext plus RFC 6532's UTF-8, in dot-atom form. */
const DOT_ATOM =
  /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u{80}-\u{10FFFF}]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u{80}-\u{10FFFF}]+)*$/u;
/** What no local part may hold, quoted or not: controls, format and unassigned code points, line separators. */
const NEVER_IN_LOCAL = /[\p{C}\u2028\u2029"\\<>]/u;

/** A domain in lowercase IDNA ASCII form when it is a hostname of LDH labels, else undefined. */
export function asciiDomain(domain: string): string | undefined {
  if (domain.length === 0 || domain.length > 255) return undefined;
  const ascii = toASCII(domain, {
    checkHyphens: true,
    checkBidi: true,
    checkJoiners: true,
    useSTD3ASCIIRules: true,
    verifyDNSLength: true,
    transitionalProcessing: false,
  });
  if (!ascii) return undefined;
  return ascii.split(".").every((l) => LABEL.test(l)) ? ascii : undefined;
}

/** The local part as RFC 5321 writes it: a dot-atom as it is, anything else quoted (never with `"` or `\`). */
function envelopeLocal(local: string): string | undefined {
  if (local.length === 0 || Buffer.byteLength(local) > 64 || NEVER_IN_LOCAL.test(local)) return undefined;
  return DOT_ATOM.test(local) ? local : `"${local}"`;
}

const cleanName = (name: string | null): string => {
  if (!name) return "";
  let decoded = name;
  try {
    decoded = libmime.decodeWords(name);
  } catch {
    // An encoded word in a charset libmime cannot read stays as it was written.
  }
  return decoded.replace(/[\p{Cc}\u2028\u2029]+/gu, " ").trim();
};

function mailboxOf(m: emailAddresses.ParsedMailbox): MailAddress | undefined {
  const domain = asciiDomain(m.domain);
  const local = envelopeLocal(m.local);
  if (domain === undefined || local === undefined) return undefined;
  return { name: cleanName(m.name), address: `${local}@${domain}` };
}

/** Exactly one mailbox, or undefined: a list, a group, a domain literal or an invalid domain is not one. */
export function parseMailbox(raw: string): MailAddress | undefined {
  if (raw.length > MAX_ONE || /[\r\n\0]/.test(raw)) return undefined;
  const one = emailAddresses.parseOneAddress({ input: raw, rfc6532: true });
  return one?.type === "mailbox" ? mailboxOf(one) : undefined;
}

/** The domain of an address this module returned (its domain has no `@`, so it follows the last one). */
export const domainOf = (address: string): string => address.slice(address.lastIndexOf("@") + 1);

/** Tool input: one mailbox, or INVALID_ARGUMENT naming the field. */
export function parseAddress(raw: string, what: string): MailAddress {
  const one = parseMailbox(raw);
  if (!one)
    throw new MailError("INVALID_ARGUMENT", `${what} is not one email address written as Name <a@b> or a@b`);
  return one;
}

export function parseAddresses(list: readonly string[], what: string): MailAddress[] {
  return list.map((raw, i) => parseAddress(raw, `${what}[${i}]`));
}

/** The addresses of one header taken from mail, and the text of each that is not one valid mailbox. */
export interface HeaderAddresses {
  addresses: MailAddress[];
  bad: string[];
}

/**
 * An address header's value as a message carries it (unfolded, encoded words not yet decoded, so an
 * encoded word cannot smuggle in a comma): each mailbox, groups flattened. A value the grammar does
 * not accept is bad as a whole; so is each mailbox whose local part or domain is refused.
 */
export function parseHeaderAddresses(value: string): HeaderAddresses {
  const text = value.replace(/\r?\n(?=[ \t])/g, "").trim();
  if (text === "") return { addresses: [], bad: [] };
  const list =
    text.length > MAX_LIST ? null : emailAddresses.parseAddressList({ input: text, rfc6532: true });
  if (!list) return { addresses: [], bad: [text] };
  const out: HeaderAddresses = { addresses: [], bad: [] };
  for (const item of list) {
    for (const m of item.type === "group" ? item.addresses : [item]) {
      const one = mailboxOf(m);
      if (one) out.addresses.push(one);
      else out.bad.push(m.address);
    }
  }
  return out;
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
