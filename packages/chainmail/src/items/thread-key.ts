/**
 * The one place thread links (and `item:` searches) get a message's thread key from. It is the key
 * the cache stores in messages.thread_key today (src/cache/store.ts): Gmail's thread id on Google,
 * else the root of References, In-Reply-To, or the Message-ID, lowercased. A canonical key that
 * replaces it changes this function only.
 */
import { threadKey } from "../cache/store.js";

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
  // A message with a Message-ID never reaches the folder/uid fallback, so those are placeholders.
  return threadKey({
    gmThreadId: m.gmThreadId ?? null,
    refs: m.references,
    inReplyTo: m.inReplyTo,
    messageId: m.messageId,
    folderId: 0,
    uid: 0,
  });
}
