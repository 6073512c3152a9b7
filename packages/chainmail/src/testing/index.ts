/**
 * @mcpforge/chainmail/testing: the mail fixtures chainmail's tests and its MCP server's tests share.
 * A throwaway Dovecot on 127.0.0.1 (needs /usr/sbin/dovecot), a home with a running daemon over it,
 * a generated corpus, and a Gmail-like IMAP server (needs the hoodiecrow-imap package). Kept out of
 * the main entry, so the daemon never loads test code.
 */
export {
  type Attachment,
  buildMessage,
  type CorpusMessage,
  type CorpusOptions,
  encodeHeader,
  generateCorpus,
  INJECTION_TEXT,
  type MessageSpec,
  TINY_PNG,
} from "./corpus.js";
export {
  ACL_CONFIG,
  type AppendResult,
  capabilitiesWithout,
  type Dovecot,
  type DovecotUser,
  type StartOptions,
  startDovecot,
} from "./dovecot.js";
export { type ImapProxy, startImapProxy } from "./imap-proxy.js";
/** The cache's own opener, for tests that look at or lock cache.db beside a running daemon. */
export { openCache } from "../cache/index.js";
export { type GmailMessage, type GmailServer, gmailRawMatches, startGmail } from "./gmail.js";
export {
  MAILBOX_VOCAB,
  type MailboxMessage,
  mailboxMessage,
  mailboxSender,
} from "./mailbox.js";
export {
  oauthAccountConfig,
  type OAuthTestServer,
  type OAuthTestServerOptions,
  startOAuthServer,
  type TokenRequest,
} from "./oauth-server.js";
export { configToml, type MailEnv, type PolicyOpts, startMailEnv } from "./mailenv.js";
export { type SendEnv, startSendEnv } from "./sendenv.js";
export { waitForDaemon } from "./daemon-ready.js";
export {
  freePort,
  lmtpConfig,
  type Relayed,
  type SmtpRelay,
  smtpMailboxDomain,
  startSmtpRelay,
} from "./smtp.js";
export { type RefuseRule, type RefusingProxy, startRefusingProxy } from "./refusing-proxy.js";
