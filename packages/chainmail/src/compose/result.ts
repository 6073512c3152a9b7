/** The one result shape of the compose operations; which fields are set depends on `status`. */
export const COMPOSE_STATUSES = ["sent", "draft", "held", "duplicate"] as const;
export type ComposeStatus = (typeof COMPOSE_STATUSES)[number];

export interface ComposeResult {
  status: ComposeStatus;
  /** sent, held: the message's Message-ID. */
  message_id?: string;
  /** sent: the Sent copy's ref ("" when there is none, as on Google or a failed copy). */
  sent_ref?: string;
  /** sent: why the Sent copy failed; the send itself succeeded. */
  sent_copy_error?: string;
  /**
   * sent: recipients the SMTP server refused while it accepted the others (`address (server
   * reply)`); the message went to every other recipient and a retry under the key sends nothing.
   */
  refused_recipients?: string[];
  /** sent, held, duplicate. */
  idempotency_key?: string;
  /** draft, held. */
  draft_ref?: string;
  /** held: the recipients the policy does not allow. */
  blocked?: string[];
  /** held: more recipients than the policy's max_recipients. */
  too_many_recipients?: boolean;
  /** held: what the account owner can do. */
  hint?: string;
  /** duplicate: the first call's status. */
  original_status?: "sent";
}

export interface DeleteDraftResult {
  ref: string;
  deleted: boolean;
}

/**
 * What a send would do now, judged without sending or saving anything (the compose operations'
 * `send.judge`): for an MCP client to ask the person before it sends with their approval. On an
 * account left to its owner (hold_approval "owner") there is nobody to ask, so the judgement says
 * only that, without building the message (no IMAP read, no upload used).
 */
export type SendJudgement = { hold_approval: "owner" } | ClientJudgement;

export interface ClientJudgement {
  hold_approval: "client";
  /** send: the policy allows it; hold: it would be held; duplicate: the key already sent it. */
  outcome: "send" | "hold" | "duplicate";
  idempotency_key: string;
  /** hold: the recipients (and unreadable addresses, a foreign From) outside the policy. */
  blocked: string[];
  too_many_recipients: boolean;
  too_large: boolean;
  /** The envelope's recipients, as SMTP would get them. */
  recipients: string[];
  /** The subject and the first lines of the text, for the question (text from outside: untrusted). */
  subject: string;
  /** The Reply-To header's text, when the message sets one (answers go there, not to the account). */
  reply_to?: string;
  /** The first lines of the text part, a run of blank lines shown as one. */
  excerpt: string;
  /** How many more lines (not blank) of the text part the excerpt leaves out. */
  more_lines: number;
  /** The first lines of what the HTML part reads as, when it says something else than the text part. */
  html_excerpt?: string;
  html_more_lines?: number;
  /**
   * The addresses the HTML part links to or loads (images, styles), which no text shows, at most
   * ten, and how many more; absent when it has none.
   */
  html_links?: string[];
  html_links_more?: number;
  /** The files the message carries (attachments, inline images): name, size and SHA-256 (hex). */
  files: Array<{ name: string; bytes: number; sha256: string }>;
  /**
   * What the message was built from (its input, and the account's From and signature): an approval
   * names it (`approved.judged`), and a send built from other input (a file changed since) or config
   * is refused instead of sent.
   */
  fingerprint: string;
  /** The held-send hint the send would answer with (hold). */
  hint: string;
}
