/**
 * Sign-ins the daemon runs for the chat (`auth.begin` / `auth.wait`): the browser flow of
 * src/auth/login.ts (PKCE S256, `state` checked, a loopback port the system picks), whose loopback
 * listener lives in the daemon because it must outlive the MCP call that asked for it. One flow per
 * account at a time: a second `begin` while one is under way gets the same URL and id, so a tool
 * handler that runs again with the person's answer finds the flow it asked about instead of starting
 * another. A finished flow writes the grant to the secrets dir like `chainmail auth login` does; the
 * credentials see the new file at the account's next login.
 */
import { randomUUID } from "node:crypto";
import type { AccountConfig } from "../config.js";
import { MailError, type WireError, toWireError } from "../errors.js";
import { saved, startBrowserFlow } from "./login.js";
import { oauthClient } from "./oauth.js";

export type FlowState = "pending" | "done" | "failed";

interface Flow {
  id: string;
  account: string;
  url: string;
  state: FlowState;
  error: WireError | undefined;
  /** Settles when the flow does (never rejects). */
  settled: Promise<void>;
  cancel(): void;
}

/** How long a sign-in from the chat waits for the provider's redirect. */
export const CHAT_FLOW_MS = 10 * 60_000;

export class SignInFlows {
  private readonly byAccount = new Map<string, Flow>();
  private readonly byId = new Map<string, Flow>();

  constructor(
    private readonly secretsDir: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The account's flow under way, or a new one (`started`: this call started it). */
  async begin(
    account: AccountConfig,
  ): Promise<{ flow: { flow_id: string; url: string; account: string }; started: boolean }> {
    const running = this.byAccount.get(account.name);
    if (running?.state === "pending")
      return { flow: { flow_id: running.id, url: running.url, account: account.name }, started: false };
    const started = await startBrowserFlow(account, oauthClient(account, this.env), {
      timeoutMs: CHAT_FLOW_MS,
      unref: true,
      done: "the chat",
    });
    const flow: Flow = {
      id: randomUUID(),
      account: account.name,
      url: started.url.toString(),
      state: "pending",
      error: undefined,
      settled: Promise.resolve(),
      cancel: started.cancel,
    };
    flow.settled = started.done.then(
      async (tokens) => {
        try {
          await saved(account, "browser", tokens, this.secretsDir);
          flow.state = "done";
        } catch (err) {
          flow.state = "failed";
          flow.error = toWireError(err);
        }
      },
      (err: unknown) => {
        flow.state = "failed";
        flow.error = toWireError(err);
      },
    );
    if (running) this.byId.delete(running.id);
    this.byAccount.set(account.name, flow);
    this.byId.set(flow.id, flow);
    return { flow: { flow_id: flow.id, url: flow.url, account: account.name }, started: true };
  }

  /** Waits up to `timeoutMs` for the flow to finish; its state then (pending: not yet). */
  async wait(
    flowId: string,
    timeoutMs: number,
  ): Promise<{ flow_id: string; account: string; state: FlowState; error?: WireError }> {
    const flow = this.byId.get(flowId);
    if (!flow)
      throw new MailError(
        "NOT_FOUND",
        "no sign-in with that flow_id is known to the daemon",
        "Start a new one with auth.begin.",
      );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      flow.settled,
      new Promise<void>((r) => {
        timer = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return {
      flow_id: flow.id,
      account: flow.account,
      state: flow.state,
      ...(flow.error ? { error: flow.error } : {}),
    };
  }

  /** Stops every listener (the daemon stops). */
  close(): void {
    for (const f of this.byAccount.values()) if (f.state === "pending") f.cancel();
    this.byAccount.clear();
    this.byId.clear();
  }
}

const registry = new Map<string, SignInFlows>();

/** The process's sign-in flows for a secrets dir (one per account at a time). */
export function flowsFor(secretsDir: string): SignInFlows {
  let f = registry.get(secretsDir);
  if (!f) {
    f = new SignInFlows(secretsDir);
    registry.set(secretsDir, f);
  }
  return f;
}

/** Ends a secrets dir's sign-ins (a daemon that stops: its loopback listeners go with it). */
export function releaseFlows(secretsDir: string): void {
  registry.get(secretsDir)?.close();
  registry.delete(secretsDir);
}
