/**
 * The send policy of an account: an allow-list of recipient addresses and @domains, a maximum
 * number of recipients and a maximum total attachment size. A send that breaks a rule is held (saved
 * to Drafts for the account owner), never sent: an injected message that talks an agent into
 * mailing a private key to a stranger ends in the owner's Drafts.
 *
 * The policy judges the envelope exactly as it is handed to SMTP (addresses in the spelling of
 * compose/addresses.ts), and `max_recipients` counts that envelope. What could not be read as an
 * address (from an original or a draft) and a `From` that is not the account's own hold the send too.
 */
import type { AccountConfig, Policy } from "../config.js";
import { asciiDomain, domainOf, parseMailbox } from "./addresses.js";

export interface PolicyVerdict {
  blocked: string[];
  tooManyRecipients: boolean;
  tooLarge: boolean;
  /** Text from the message that is not one valid address (also in `blocked`). */
  unreadable: string[];
  /** The message's From when it is not one of the account's own addresses (also in `blocked`). */
  foreignFrom: string | undefined;
}

/** What else, besides the envelope, holds a send: unreadable addresses and a foreign From. */
export interface SendFacts {
  unreadable?: string[] | undefined;
  foreignFrom?: string | undefined;
}

/** A rule in the envelope's spelling: `@` + ASCII domain, or a whole address; undefined never matches. */
function ruleOf(rule: string): string | undefined {
  if (rule.startsWith("@")) {
    const d = asciiDomain(rule.slice(1));
    return d === undefined ? undefined : `@${d}`;
  }
  return parseMailbox(rule)?.address.toLowerCase();
}

/** Whether an envelope address (from compose/addresses.ts) is on the allow-list. */
export function allowedRecipient(address: string, allow: string[]): boolean {
  const a = address.toLowerCase();
  const domain = `@${domainOf(a)}`;
  return allow.some((rule) => {
    const r = ruleOf(rule);
    return r !== undefined && (r.startsWith("@") ? domain === r : a === r);
  });
}

/**
 * The account's own addresses (its address and aliases), lowercased, in the envelope's spelling: the
 * ones the owner confirmed, met with config.toml's, where the daemon set them (policy.own_addresses,
 * src/policy/service.ts), so a new alias written into config.toml is not own until confirmed.
 */
export function ownAddresses(
  account: Pick<AccountConfig, "address" | "aliases"> & { policy?: Pick<Policy, "own_addresses"> },
): string[] {
  const met = account.policy?.own_addresses;
  if (met) return [...met];
  return [account.address, ...(account.aliases ?? [])].map((a) =>
    (parseMailbox(a)?.address ?? a).toLowerCase(),
  );
}

/**
 * The envelope's From when it is not one of the account's own addresses (held like a foreign From
 * header), compared in the own addresses' spelling (an internationalized domain as ASCII).
 */
export function foreignEnvelopeFrom(
  account: Parameters<typeof ownAddresses>[0],
  from: string,
): string | undefined {
  const spelled = (parseMailbox(from)?.address ?? from).toLowerCase();
  return ownAddresses(account).includes(spelled) ? undefined : from;
}

export function judgeSend(
  policy: Policy,
  recipients: string[],
  attachmentBytes: number,
  facts: SendFacts = {},
): PolicyVerdict | undefined {
  const allow = policy.allowed_recipients;
  const unreadable = facts.unreadable ?? [];
  const blocked = [
    ...(facts.foreignFrom !== undefined ? [facts.foreignFrom] : []),
    ...unreadable,
    ...(allow ? recipients.filter((r) => !allowedRecipient(r, allow)) : []),
  ];
  const tooManyRecipients = policy.max_recipients !== undefined && recipients.length > policy.max_recipients;
  const tooLarge = policy.max_attachment_bytes !== undefined && attachmentBytes > policy.max_attachment_bytes;
  return blocked.length || tooManyRecipients || tooLarge
    ? { blocked, tooManyRecipients, tooLarge, unreadable, foreignFrom: facts.foreignFrom }
    : undefined;
}

export function holdHint(v: PolicyVerdict, account: string): string {
  const outside = v.blocked.length - v.unreadable.length - (v.foreignFrom !== undefined ? 1 : 0);
  const why = [
    v.foreignFrom !== undefined
      ? "its From is not one of the account's own addresses (address or aliases)"
      : "",
    v.unreadable.length ? "addresses in the message that are not one valid email address each" : "",
    outside > 0 ? "recipients outside the account's allowed_recipients" : "",
    v.tooManyRecipients ? "more recipients than max_recipients" : "",
    v.tooLarge ? "attachments larger than max_attachment_bytes" : "",
  ].filter(Boolean);
  return `Held by the send policy of account ${account} (${why.join("; ")}): the message is in Drafts for the account owner to send, edit or delete. Do not retry it.`;
}
