/**
 * The confirmed policy. config.toml is re-read on every call, so anything that can write it (an
 * agent with a file tool) could widen a gate at once; instead the daemon runs on the meet of the
 * file's policy and the owner's confirmed one. A narrowing therefore applies at once (and becomes the
 * confirmed policy), a widening waits until the owner runs `chainmail policy confirm`. Every change
 * is audited with its diff.
 */
import type { Config } from "../config.js";
import { MailError } from "../errors.js";
import type { Call, ServiceContext } from "../service/context.js";
import { PolicyStore } from "../store/policy.js";
import type { StateDb } from "../store/state.js";
import { CLOSED, diffGates, digestOf, type Gates, gatesOf, meet, policyOf, sameGates } from "./gates.js";

const parse = (json: string) => JSON.parse(json) as Gates;
const storeOf = (state: StateDb) => new PolicyStore(state.db);

function note(
  state: StateDb,
  action: string,
  account: string,
  decision: "allowed" | "held",
  summary: string,
) {
  state.audit({ client: "config", action, account, decision, summary });
}

/**
 * Brings state.db's policies in line with config.toml and returns the config the daemon runs on:
 * each account with the meet of its file policy and its confirmed one. The first start adopts the
 * file as confirmed; an account added later starts from CLOSED.
 */
export function reconcilePolicies(state: StateDb, file: Config): Config {
  const store = storeOf(state);
  const rows: Array<[string, "allowed" | "held", string, string]> = [];
  const effective = store.transaction(() => {
    const adopting = !store.adopted();
    const accounts = file.accounts.map((a) => {
      const wanted = gatesOf(a.policy);
      const row = store.get(a.name);
      if (adopting && !row) {
        store.put(a.name, JSON.stringify(wanted), null);
        rows.push(["policy.adopt", "allowed", a.name, `first start: ${describe(wanted)}`]);
        return a;
      }
      const confirmed = row ? parse(row.confirmed) : CLOSED;
      const now = meet(wanted, confirmed);
      const pending = sameGates(now, wanted) ? null : JSON.stringify(wanted);
      if (!sameGates(now, confirmed))
        rows.push(["policy.narrow", "allowed", a.name, `applied: ${diffGates(confirmed, now).join("; ")}`]);
      if (pending !== (row?.pending ?? null))
        rows.push(
          pending
            ? [
                "policy.pending",
                "held",
                a.name,
                `widening awaits chainmail policy confirm (${digestOf(wanted)}): ${diffGates(now, wanted).join("; ")}`,
              ]
            : ["policy.pending", "allowed", a.name, "no widening pending any more"],
        );
      if (!row || !sameGates(now, confirmed) || pending !== row.pending)
        store.put(a.name, JSON.stringify(now), pending);
      return { ...a, policy: policyOf(now) };
    });
    store.markAdopted();
    return { ...file, accounts };
  });
  for (const [action, decision, account, summary] of rows) note(state, action, account, decision, summary);
  return effective;
}

function describe(g: Gates): string {
  const r = g.allowed_recipients;
  return [
    `allow_expunge ${g.allow_expunge}`,
    `allow_delete_folder ${g.allow_delete_folder}`,
    `allowed_recipients ${r ? `[${r.join(", ")}]` : "any"}`,
    `max_recipients ${g.max_recipients ?? "none"}`,
    `max_attachment_bytes ${g.max_attachment_bytes ?? "none"}`,
  ].join("; ");
}

/**
 * The file's config with each account's policy met with what the daemon runs on now (CLOSED for an
 * account it does not know): for when state.db cannot record the change, so nothing widens.
 */
export function narrowedOnly(current: Config, file: Config): Config {
  return {
    ...file,
    accounts: file.accounts.map((a) => {
      const now = current.accounts.find((x) => x.name === a.name);
      return { ...a, policy: policyOf(meet(gatesOf(a.policy), now ? gatesOf(now.policy) : CLOSED)) };
    }),
  };
}

export interface PolicyStatus {
  account: string;
  /** What the daemon applies now. */
  confirmed: Gates;
  /** What config.toml asks for. */
  requested: Gates;
  pending: boolean;
  /** From confirmed to requested, one entry per setting. */
  changes: string[];
  /** Pass it to `policy.confirm` to confirm exactly this widening. */
  digest: string;
}

export function policyStatus(ctx: ServiceContext): { accounts: PolicyStatus[] } {
  const store = storeOf(ctx.state);
  const file = ctx.fileConfig ?? ctx.config;
  return {
    accounts: file.accounts.map((a) => {
      const requested = gatesOf(a.policy);
      const row = store.get(a.name);
      const confirmed = row ? parse(row.confirmed) : CLOSED;
      const pending = row?.pending != null;
      return {
        account: a.name,
        confirmed,
        requested,
        pending,
        changes: pending ? diffGates(confirmed, requested) : [],
        digest: digestOf(requested),
      };
    }),
  };
}

/** The owner confirms the pending widening of one account (or of every account), with the CLI only. */
export function confirmPolicy(
  ctx: ServiceContext,
  call: Call,
  account: string | undefined,
  digest: string | undefined,
): { confirmed: Array<{ account: string; changes: string[] }> } {
  if (call.client !== "cli") {
    ctx.state.audit({
      client: call.client,
      action: call.action,
      account: account ?? null,
      decision: "denied",
      summary: "only the CLI may confirm a policy",
    });
    throw new MailError(
      "POLICY_DENIED",
      "only the account owner confirms a wider policy, with the chainmail CLI",
      "Ask the user to run `chainmail policy status` and `chainmail policy confirm`.",
    );
  }
  const status = policyStatus(ctx).accounts.filter((s) => account === undefined || s.account === account);
  if (account !== undefined && status.length === 0)
    throw new MailError("NOT_FOUND", `no account named ${JSON.stringify(account)}`);
  const todo = status.filter((s) => s.pending);
  if (digest !== undefined && (todo.length !== 1 || todo[0]?.digest !== digest))
    throw new MailError(
      "CONFLICT",
      "config.toml's policy is not the one with that digest (it changed since it was shown)",
      "Run `chainmail policy status` again and confirm what it shows.",
    );
  const store = storeOf(ctx.state);
  store.transaction(() => {
    for (const s of todo) store.put(s.account, JSON.stringify(s.requested), null);
  });
  for (const s of todo)
    ctx.state.audit({
      client: call.client,
      action: call.action,
      account: s.account,
      decision: "allowed",
      summary: `confirmed (${s.digest}): ${s.changes.join("; ")}`,
    });
  if (ctx.fileConfig) ctx.config = reconcilePolicies(ctx.state, ctx.fileConfig);
  return { confirmed: todo.map((s) => ({ account: s.account, changes: s.changes })) };
}

/** Said in the hint of a call the confirmed policy refused while a widening waits. */
export function pendingHint(ctx: ServiceContext, account: string): string {
  const row = storeOf(ctx.state).get(account);
  return row?.pending
    ? ` A wider policy for ${account} in config.toml awaits the owner's confirmation (\`chainmail policy status\`, then \`chainmail policy confirm\`); until then the confirmed policy applies.`
    : "";
}
