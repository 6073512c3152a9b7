/**
 * The send policy of an account: an allow-list of recipient addresses and @domains, a maximum
 * number of recipients and a maximum total attachment size. A send that breaks a rule is held (saved
 * to Drafts for the account owner), never sent: an injected message that talks an agent into
 * mailing a private key to a stranger ends in the owner's Drafts.
 */
import type { Policy } from "../config.js";
import { envelopeAddress } from "./addresses.js";

export interface PolicyVerdict {
  blocked: string[];
  tooManyRecipients: boolean;
  tooLarge: boolean;
}

/** An address or `@domain` in one spelling: lowercased, an internationalized domain as punycode. */
const spelled = (entry: string) => envelopeAddress(entry.startsWith("@") ? `x${entry}` : entry).toLowerCase();

export function allowedRecipient(address: string, allow: string[]): boolean {
  const a = spelled(address);
  const domain = a.slice(a.lastIndexOf("@"));
  return allow.some((rule) => {
    const r = rule.startsWith("@") ? spelled(rule).slice(1) : spelled(rule);
    return r.startsWith("@") ? domain === r : a === r;
  });
}

export function judgeSend(
  policy: Policy,
  recipients: string[],
  attachmentBytes: number,
): PolicyVerdict | undefined {
  const allow = policy.allowed_recipients;
  const blocked = allow ? recipients.filter((r) => !allowedRecipient(r, allow)) : [];
  const tooManyRecipients = policy.max_recipients !== undefined && recipients.length > policy.max_recipients;
  const tooLarge = policy.max_attachment_bytes !== undefined && attachmentBytes > policy.max_attachment_bytes;
  return blocked.length || tooManyRecipients || tooLarge
    ? { blocked, tooManyRecipients, tooLarge }
    : undefined;
}

export function holdHint(v: PolicyVerdict, account: string): string {
  const why = [
    v.blocked.length ? "recipients outside the account's allowed_recipients" : "",
    v.tooManyRecipients ? "more recipients than max_recipients" : "",
    v.tooLarge ? "attachments larger than max_attachment_bytes" : "",
  ].filter(Boolean);
  return `Held by the send policy of account ${account} (${why.join("; ")}): the message is in Drafts for the account owner to send, edit or delete. Do not retry it.`;
}
