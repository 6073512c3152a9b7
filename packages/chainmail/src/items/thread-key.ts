/**
 * The one place thread links (and `item:` searches) get a message's thread key from: the canonical
 * key of src/thread-key.ts, which the cache stores in messages.thread_key.
 */
import { canonicalThreadKey } from "../thread-key.js";

/** Thread keys come from Message-IDs (at most 998 characters on a header line) or Gmail ids. */
export const MAX_THREAD_KEY = 1000;

export interface ThreadKeyInput {
  /** X-GM-THRID on Google, else absent. */
  gmThreadId?: string | null | undefined;
  references: string[];
  inReplyTo: string | null;
  messageId: string;
}

export function threadKeyOf(m: ThreadKeyInput): string {
  return canonicalThreadKey({
    gmThreadId: m.gmThreadId ?? null,
    references: m.references,
    inReplyTo: m.inReplyTo,
    messageId: m.messageId,
  });
}
