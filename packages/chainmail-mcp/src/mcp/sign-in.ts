/**
 * Sign in from the chat. A tool call that fails with AUTH_REQUIRED because an OAuth2 account is not
 * signed in (nothing stored) or its sign-in expired asks the person, through URL-mode elicitation, to
 * open the provider's sign-in page; the daemon runs the browser flow and its loopback redirect
 * (`auth.begin`, `auth.wait`), so the sign-in finishes however long the page stays open. Once it has,
 * the call runs once more. A client without URL mode, a declined or cancelled question, or a sign-in
 * that does not finish in time: the AUTH_REQUIRED error as before. The URL goes to the person through
 * the client, never to the model, and is only ever the sign-in page the owner confirmed: while the
 * account's server settings wait for `chainmail policy confirm`, `auth.begin` is POLICY_DENIED and that
 * is the call's error (nothing is asked).
 *
 * Asking is safe before anything irreversible: starting a sign-in changes no mail, and the daemon keys
 * the flow by account, so when the kit runs the handler again with the answer, `auth.begin` hands back
 * the same flow and URL (the same question) instead of starting a second one.
 */
import { isMailError, MailError } from "@mcpforge/chainmail";
import type { AnyTool, CallInfo } from "@mcpforge/toolkit";
import type { ChainmailContext, GateState } from "./context.js";

/** How long a call waits for the person to finish the sign-in after agreeing to open the page. */
export const SIGN_IN_WAIT_SECONDS = 180;

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The OAuth2 account an AUTH_REQUIRED error is about, when it is one the person can sign in from the
 * chat: its auth state is missing or expired. The daemon's AUTH_REQUIRED messages name the account
 * as `account NAME` (src/auth/credentials.ts in chainmail).
 */
async function accountToSignIn(ctx: ChainmailContext, err: MailError): Promise<string | undefined> {
  const { accounts } = await ctx.client.listAccounts();
  return accounts.find(
    (a) =>
      a.auth_method === "oauth2" &&
      (a.auth === "missing" || a.auth === "expired") &&
      // redos-ok: an account name, escaped: a literal
      new RegExp(`\\baccount ${escaped(a.name)}(?![\\w.@-])`).test(err.message),
  )?.name;
}

/** Asks the person to sign in; true once the sign-in finished (then the call may run again). */
async function signInFromChat(call: CallInfo<ChainmailContext>, err: MailError): Promise<boolean> {
  const { ctx } = call;
  const name = await accountToSignIn(ctx, err);
  if (!name) return false;
  const flow = await ctx.client.call("auth.begin", { account: name });
  const answer = await call.askUrl({
    url: flow.url,
    message: `The mail account "${name}" needs you to sign in at its provider. Open the page, sign in, and the call goes on.`,
  });
  if (answer.action !== "accept") return false;
  const done = await ctx.client.call("auth.wait", {
    flow_id: flow.flow_id,
    timeout_seconds: SIGN_IN_WAIT_SECONDS,
  });
  if (done.state === "failed" && done.error)
    throw new MailError(done.error.reason, done.error.message, done.error.hint, done.error.detail);
  if (done.state !== "done") return false;
  await answer.complete();
  return true;
}

/** The tool with its handler run once more after a sign-in from the chat (see above). */
export function withSignIn<T extends AnyTool<ChainmailContext, GateState>>(tool: T): T {
  const handler: T["handler"] = async (input, call) => {
    try {
      return await tool.handler(input, call);
    } catch (err) {
      if (!isMailError(err) || err.reason !== "AUTH_REQUIRED") throw err;
      if (!(await signInFromChat(call, err))) throw err;
    }
    return tool.handler(input, call);
  };
  return { ...tool, handler };
}
