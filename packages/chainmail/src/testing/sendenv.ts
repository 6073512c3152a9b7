/**
 * startMailEnv plus a real SMTP server relaying into its Dovecot over LMTP: what the daemon sends to
 * alice@example.com or bob@example.com lands in that user's INBOX, and `relay.received` counts what
 * the SMTP server accepted.
 */
import { type MailEnv, type PolicyOpts, startMailEnv } from "./mailenv.js";
import { freePort, lmtpConfig, type SmtpRelay, startSmtpRelay } from "./smtp.js";

export interface SendEnv extends MailEnv {
  relay: SmtpRelay;
}

export async function startSendEnv(
  policy: PolicyOpts = {},
  /** Recipients the SMTP server refuses at RCPT TO. */
  refuse?: (address: string) => boolean,
): Promise<SendEnv> {
  const lmtpPort = await freePort();
  const relay = await startSmtpRelay({
    lmtpPort,
    users: [
      { name: "alice", password: "alice-secret-pw" },
      { name: "bob", password: "bob-secret-pw" },
    ],
    ...(refuse ? { refuse } : {}),
  });
  const env = await startMailEnv({ ...policy, smtpPort: relay.port }, lmtpConfig(lmtpPort));
  const stop = env.stop;
  return Object.assign(env, {
    relay,
    stop: async () => {
      await stop();
      await relay.stop();
    },
  });
}
