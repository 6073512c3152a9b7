import { type AuthMethod, type AuthState, credentialsFor } from "../auth/credentials.js";
import type { Provider } from "../config.js";
import { type CheckResult, testImap, testSmtp } from "../imap/test-account.js";
import { confirmationPending } from "../policy/service.js";
import { type Call, type ServiceContext, accountOf, audit, audited } from "./context.js";

export interface AccountSummary {
  name: string;
  provider: Provider;
  address: string;
  /**
   * The truth about the account's login: `ok` (the last login succeeded), `missing` (no password or
   * sign-in stored), `rejected` (the server refused the password or token), `expired` (the OAuth2
   * refresh token no longer works), `unknown` (stored, not tried yet by this daemon).
   */
  auth: AuthState;
  /** `password` (chainmail secret set) or `oauth2` (chainmail auth login). */
  auth_method: AuthMethod;
  allow_expunge: boolean;
  allow_delete_folder: boolean;
  /**
   * A wider policy or new server settings in config.toml wait for the owner's `chainmail policy
   * confirm` (also after a first start or a lost state.db); until then the narrower confirmed policy applies.
   */
  confirmation_pending: boolean;
}

export function listAccounts(ctx: ServiceContext, call: Call): { accounts: AccountSummary[] } {
  const creds = credentialsFor(ctx.home.secretsDir);
  const accounts = ctx.config.accounts.map((a) => ({
    name: a.name,
    provider: a.provider,
    address: a.address,
    auth: creds.state(a),
    auth_method: creds.method(a),
    allow_expunge: a.policy.allow_expunge,
    allow_delete_folder: a.policy.allow_delete_folder,
    confirmation_pending: confirmationPending(ctx, a.name),
  }));
  audit(ctx, call, null, "allowed", `${accounts.length} account(s)`);
  return { accounts };
}

export async function testAccount(
  ctx: ServiceContext,
  call: Call,
  name: string,
): Promise<{ account: string; imap: CheckResult; smtp: CheckResult }> {
  return audited(ctx, call, name, "test account", async () => {
    const account = accountOf(ctx, name);
    const [imap, smtp] = await Promise.all([
      testImap(account, ctx.home.secretsDir),
      testSmtp(account, ctx.home.secretsDir),
    ]);
    ctx.pool.retire(name);
    return { account: name, imap, smtp };
  });
}
