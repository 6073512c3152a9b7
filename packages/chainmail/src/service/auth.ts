/** The daemon's side of a sign-in from the chat (see src/daemon/operations/auth.ts). */
import { credentialsFor } from "../auth/credentials.js";
import { flowsFor } from "../auth/flows.js";
import { MailError } from "../errors.js";
import { endpointPending } from "../policy/service.js";
import { accountOf, audit, type Call, type ServiceContext } from "./context.js";

function mcpOnly(call: Call): void {
  if (call.client !== "mcp")
    throw new MailError(
      "POLICY_DENIED",
      "a sign-in from the chat is for the MCP server; the CLI signs in with `chainmail auth login`",
      "Run `chainmail auth login ACCOUNT`.",
    );
}

/**
 * Starts (or finds) the browser sign-in of an OAuth2 account that needs one: nothing stored, or the
 * provider refused its refresh token. An account that is signed in is not signed in again from the
 * chat: a model cannot make the person replace a working grant.
 */
export async function beginSignIn(ctx: ServiceContext, call: Call, name: string) {
  mcpOnly(call);
  const account = accountOf(ctx, name);
  if (!account.oauth)
    throw new MailError(
      "INVALID_ARGUMENT",
      `account ${name} does not sign in with OAuth2`,
      `The user runs \`chainmail secret set ${name}\`.`,
    );
  // The page the person is sent to and the endpoint the code goes to must be the ones the owner
  // confirmed: config.toml may have been edited by anything with a file tool to name a phishing page.
  // While a change waits (or nothing is confirmed yet), no sign-in starts from the chat at all, as
  // `chainmail auth login` refuses one: the person would be signing in under settings in flux.
  if (account.endpoint_unconfirmed || endpointPending(ctx, name)) {
    audit(ctx, call, name, "denied", "browser sign-in refused: the server settings wait for the owner");
    throw new MailError(
      "POLICY_DENIED",
      `the server settings of account ${name} (its sign-in page and token endpoint among them) wait for the owner's confirmation: no sign-in starts from the chat until then`,
      "Ask the user to run `chainmail policy status` and `chainmail policy confirm` in their terminal.",
    );
  }
  if (!account.oauth.authorization_endpoint)
    throw new MailError(
      "UNSUPPORTED",
      `the OAuth2 provider of account ${name} has no authorization_endpoint for a browser sign-in`,
      `The user runs \`chainmail auth login ${name} --device\`.`,
    );
  const state = credentialsFor(ctx.home.secretsDir).state(account);
  if (state !== "missing" && state !== "expired")
    throw new MailError(
      "CONFLICT",
      `account ${name} does not need a sign-in (its auth state is ${state})`,
      `To sign in again anyway, the user runs \`chainmail auth login ${name}\`.`,
    );
  const { flow, started } = await flowsFor(ctx.home.secretsDir).begin(account);
  // One row per sign-in: a handler run again with the person's answer finds the same flow.
  if (started) audit(ctx, call, name, "allowed", `browser sign-in started (auth state ${state})`);
  return flow;
}

export async function waitSignIn(ctx: ServiceContext, call: Call, flowId: string, seconds: number) {
  mcpOnly(call);
  return flowsFor(ctx.home.secretsDir).wait(flowId, seconds * 1000);
}
