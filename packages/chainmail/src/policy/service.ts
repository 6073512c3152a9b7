/**
 * The confirmed policy. config.toml is re-read on every call, so anything that can write it (an
 * agent with a file tool) could widen a gate at once; instead the daemon runs on the meet of the
 * file's policy and the owner's confirmed one. A narrowing therefore applies at once (and becomes the
 * confirmed policy), a widening waits until the owner runs `chainmail policy confirm`. A change of
 * where an account's password goes (its endpoint: provider, username, IMAP and SMTP servers) waits the
 * same way, while the daemon keeps connecting where the owner last confirmed; an account with no
 * confirmed endpoint yet (a new one, or state.db was lost) connects nowhere until the owner confirms.
 * The account's own addresses (`address` and `aliases`, which a send's From must be one of) are
 * part of the policy: a new one waits like any widening, one removed is gone at once.
 * Every change is audited with its diff.
 */
import { createHash } from "node:crypto";
import { type AccountConfig, type Config, changedConnections } from "../config.js";
import { MailError } from "../errors.js";
import type { Call, ServiceContext } from "../service/context.js";
import { EndpointStore } from "../store/endpoints.js";
import { PolicyStore } from "../store/policy.js";
import type { StateDb } from "../store/state.js";
import {
  describeEndpoint,
  diffEndpoint,
  type Endpoint,
  endpointOf,
  recordClient,
  sameEndpoint,
  unconfirmed,
  withEndpoint,
} from "./endpoints.js";
import {
  CLOSED,
  diffGates,
  type Gates,
  gatesFrom,
  gatesOfAccount,
  meet,
  ownRecorded,
  policyOf,
  sameGates,
} from "./gates.js";

/** A row's confirmed gates; `recorded`: the own addresses of a row confirmed before they were. */
const parse = (json: string, recorded?: string[]) => gatesFrom(JSON.parse(json) as Partial<Gates>, recorded);
/** A row's confirmed endpoint; null while none is (the row records that its pending one was audited). */
const parseEndpoint = (json: string) => JSON.parse(json) as Endpoint | null;
const storeOf = (state: StateDb) => new PolicyStore(state.db);
const endpointsOf = (state: StateDb) => new EndpointStore(state.db);

/** A short fingerprint of what config.toml asks for, so the owner confirms the change they looked at. */
const digestOf = (g: Gates, e: Endpoint) =>
  createHash("sha256")
    .update(JSON.stringify([g, e]))
    .digest("hex")
    .slice(0, 12);

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
 * each account with the meet of its file policy and its confirmed one. An account state.db has no
 * confirmed policy for starts from CLOSED, whether the daemon has run before or not: a missing or
 * deleted state.db fails closed, so whatever config.toml asks beyond CLOSED waits for the owner's
 * `chainmail policy confirm`, the first account as any later one. (A first start that adopted the
 * file would let anything that can write config.toml and delete state.db widen the policy.)
 */
export function reconcilePolicies(state: StateDb, file: Config): Config {
  const store = storeOf(state);
  const rows: Array<[string, "allowed" | "held", string, string]> = [];
  const effective = store.transaction(() => {
    const accounts = file.accounts.map((fileAccount) => {
      const a = reconcileEndpoint(state, fileAccount, rows);
      const wanted = gatesOfAccount(a);
      const row = store.get(a.name);
      // A row confirmed before the own addresses were takes config.toml's, once, and says so: the
      // daemon sent From them until now, and holding every send of a confirmed account would be new.
      const unrecorded = row !== undefined && !ownRecorded(JSON.parse(row.confirmed) as Partial<Gates>);
      const confirmed = row ? parse(row.confirmed, wanted.own_addresses) : CLOSED;
      if (unrecorded)
        rows.push([
          "policy.recorded",
          "allowed",
          a.name,
          `own addresses recorded from config.toml (confirmed before chainmail confirmed them): [${confirmed.own_addresses.join(", ")}]`,
        ]);
      const now = meet(wanted, confirmed);
      const pending = sameGates(now, wanted) ? null : JSON.stringify(wanted);
      if (row && !sameGates(now, confirmed))
        rows.push(["policy.narrow", "allowed", a.name, `applied: ${diffGates(confirmed, now).join("; ")}`]);
      if (pending !== (row?.pending ?? null))
        rows.push(
          pending
            ? [
                "policy.pending",
                "held",
                a.name,
                `${row ? "widening" : "no confirmed policy yet (a new account, or state.db was missing): the policy"} awaits chainmail policy confirm (${digestOf(wanted, endpointOf(fileAccount))}): ${diffGates(now, wanted).join("; ")}`,
              ]
            : ["policy.pending", "allowed", a.name, "no widening pending any more"],
        );
      if (!row || unrecorded || !sameGates(now, confirmed) || pending !== row.pending)
        store.put(a.name, JSON.stringify(now), pending);
      return { ...a, policy: policyOf(now) };
    });
    return { ...file, accounts };
  });
  for (const [action, decision, account, summary] of rows) note(state, action, account, decision, summary);
  return effective;
}

/**
 * The account connecting where the owner last confirmed. An account with no confirmed endpoint (state.db
 * has never seen it, or was deleted) connects nowhere: its settings wait for the owner like any change,
 * the first account as any later one, so editing config.toml and deleting state.db sends no password
 * to a new server.
 */
function reconcileEndpoint(
  state: StateDb,
  a: AccountConfig,
  rows: Array<[string, "allowed" | "held", string, string]>,
): AccountConfig {
  const store = endpointsOf(state);
  const wanted = endpointOf(a);
  const row = store.get(a.name);
  const stored = row ? parseEndpoint(row.confirmed) : null;
  // A row confirmed before the OAuth2 client id and scopes were takes config.toml's, once (see endpoints.ts).
  const recorded = stored && recordClient(stored, wanted);
  const confirmed = recorded ?? stored;
  if (recorded)
    rows.push([
      "endpoint.recorded",
      "allowed",
      a.name,
      `oauth client_id and scopes recorded from config.toml (confirmed before chainmail confirmed them): client_id ${recorded.oauth?.client_id ?? "(from the environment)"}, scopes ${recorded.oauth?.scopes ? recorded.oauth.scopes.join(" ") : "(the provider's)"}`,
    ]);
  const pending = confirmed && sameEndpoint(confirmed, wanted) ? null : JSON.stringify(wanted);
  if (recorded) store.put(a.name, JSON.stringify(recorded), row?.pending ?? null);
  if (!row || pending !== row.pending) {
    store.put(a.name, recorded ? JSON.stringify(recorded) : (row?.confirmed ?? "null"), pending);
    const digest = digestOf(gatesOfAccount(a), wanted);
    rows.push(
      !pending
        ? ["endpoint.pending", "allowed", a.name, "no server settings change pending any more"]
        : confirmed
          ? [
              "endpoint.pending",
              "held",
              a.name,
              `server settings change awaits chainmail policy confirm (${digest}): ${diffEndpoint(confirmed, wanted).join("; ")}`,
            ]
          : [
              "endpoint.pending",
              "held",
              a.name,
              `no confirmed server settings yet (a new account, or state.db was missing): ${describeEndpoint(wanted)} await chainmail policy confirm (${digest})`,
            ],
    );
  }
  if (!pending) return a;
  return confirmed ? withEndpoint(a, confirmed) : unconfirmed(a);
}

/**
 * The file's config with each account's policy met with what the daemon runs on now (CLOSED for an
 * account it does not know), each known account connecting where it does now: for when state.db
 * cannot record the change, so nothing widens and no password goes anywhere new.
 */
export function narrowedOnly(current: Config, file: Config, state: StateDb): Config {
  return {
    ...file,
    accounts: file.accounts.map((a) => {
      const now = current.accounts.find((x) => x.name === a.name);
      const narrowed = {
        ...a,
        policy: policyOf(meet(gatesOfAccount(a), now ? gatesOfAccount(now) : CLOSED)),
      };
      if (now) return withEndpoint(narrowed, endpointOf(now));
      const row = knownEndpoint(state, a.name);
      // A row from before the client id was confirmed reads as reconcileEndpoint would record it.
      return row ? withEndpoint(narrowed, recordClient(row, endpointOf(a)) ?? row) : unconfirmed(narrowed);
    }),
  };
}

/** An account's confirmed endpoint, if state.db can be read at all and has one. */
function knownEndpoint(state: StateDb, account: string): Endpoint | undefined {
  try {
    const row = endpointsOf(state).get(account);
    return (row && parseEndpoint(row.confirmed)) ?? undefined;
  } catch {
    return undefined;
  }
}

export interface PolicyStatus {
  account: string;
  /** What the daemon applies now. */
  confirmed: Gates;
  /** What config.toml asks for. */
  requested: Gates;
  /**
   * Where the daemon connects now (null: nowhere, none is confirmed yet), beside where config.toml
   * asks it to; pending while they differ.
   */
  endpoint: { confirmed: Endpoint | null; requested: Endpoint; pending: boolean };
  /** A wider policy or another endpoint waits for the owner. */
  pending: boolean;
  /** From confirmed to requested, one entry per setting: the policy's, then the endpoint's. */
  changes: string[];
  /** Pass it to `policy.confirm` to confirm exactly this change. */
  digest: string;
}

export function policyStatus(ctx: ServiceContext): { accounts: PolicyStatus[] } {
  const store = storeOf(ctx.state);
  const endpoints = endpointsOf(ctx.state);
  const file = ctx.fileConfig ?? ctx.config;
  return {
    accounts: file.accounts.map((a) => {
      const requested = gatesOfAccount(a);
      const row = store.get(a.name);
      const confirmed = row ? parse(row.confirmed, requested.own_addresses) : CLOSED;
      const policyPending = row?.pending != null;
      const wantedEndpoint = endpointOf(a);
      const endpointRow = endpoints.get(a.name);
      const confirmedEndpoint = endpointRow ? parseEndpoint(endpointRow.confirmed) : null;
      const endpointPending = !confirmedEndpoint || !sameEndpoint(confirmedEndpoint, wantedEndpoint);
      return {
        account: a.name,
        confirmed,
        requested,
        endpoint: { confirmed: confirmedEndpoint, requested: wantedEndpoint, pending: endpointPending },
        pending: policyPending || endpointPending,
        changes: [
          ...(policyPending ? diffGates(confirmed, requested) : []),
          ...(!endpointPending
            ? []
            : confirmedEndpoint
              ? diffEndpoint(confirmedEndpoint, wantedEndpoint)
              : [`server settings (none confirmed yet): ${describeEndpoint(wantedEndpoint)}`]),
        ],
        digest: digestOf(requested, wantedEndpoint),
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
      "only the account owner confirms a wider policy or new server settings, with the chainmail CLI",
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
  const endpoints = endpointsOf(ctx.state);
  store.transaction(() => {
    for (const s of todo) {
      store.put(s.account, JSON.stringify(s.requested), null);
      endpoints.put(s.account, JSON.stringify(s.endpoint.requested), null);
    }
  });
  for (const s of todo)
    ctx.state.audit({
      client: call.client,
      action: call.action,
      account: s.account,
      decision: "allowed",
      summary: `confirmed (${s.digest}): ${s.changes.join("; ")}`,
    });
  if (ctx.fileConfig) {
    const prev = ctx.config;
    ctx.config = reconcilePolicies(ctx.state, ctx.fileConfig);
    // A confirmed endpoint is a new server: the pooled connection to the old one goes after its calls.
    const changed = changedConnections(prev, ctx.config);
    for (const name of changed) ctx.pool.retire(name);
    ctx.cache?.reconcile(changed);
  }
  return { confirmed: todo.map((s) => ({ account: s.account, changes: s.changes })) };
}

/** Whether a wider policy or new server settings of the account wait for the owner's confirmation. */
export function confirmationPending(ctx: ServiceContext, account: string): boolean {
  const a = (ctx.fileConfig ?? ctx.config).accounts.find((x) => x.name === account);
  if (!a) return false;
  if (storeOf(ctx.state).get(account)?.pending != null) return true;
  return endpointPending(ctx, account);
}

/**
 * Whether config.toml's server settings of the account (servers, token endpoints, sign-in pages) are
 * not the ones the owner confirmed: none confirmed yet, or a change waits.
 */
export function endpointPending(ctx: ServiceContext, account: string): boolean {
  const a = (ctx.fileConfig ?? ctx.config).accounts.find((x) => x.name === account);
  if (!a) return false;
  const row = endpointsOf(ctx.state).get(account);
  const confirmed = row ? parseEndpoint(row.confirmed) : null;
  return !confirmed || !sameEndpoint(confirmed, endpointOf(a));
}

/** Said in the hint of a call the confirmed policy refused while a widening waits. */
export function pendingHint(ctx: ServiceContext, account: string): string {
  const row = storeOf(ctx.state).get(account);
  return row?.pending
    ? ` A wider policy for ${account} in config.toml awaits the owner's confirmation (\`chainmail policy status\`, then \`chainmail policy confirm\`); until then the confirmed policy applies.`
    : "";
}
