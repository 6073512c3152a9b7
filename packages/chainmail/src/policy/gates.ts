/**
 * The policy's gates as values that can be compared: the meet of two policies (what both allow),
 * whether one is wider than another, and a readable diff. A widening waits for the owner; these
 * functions decide what counts as one.
 */
import type { AccountConfig, HoldApproval, Policy } from "../config.js";
import { ownAddresses } from "../compose/policy.js";

/**
 * A policy in one spelling: recipients and own addresses lowercased, sorted, once each; null for
 * "no limit".
 */
export interface Gates {
  allow_expunge: boolean;
  allow_delete_folder: boolean;
  allowed_recipients: string[] | null;
  max_recipients: number | null;
  max_attachment_bytes: number | null;
  /** "client" is the wider: a held send can go with the chat person's OK. */
  hold_approval: HoldApproval;
  /**
   * The account's own addresses (`address` and `aliases`): a send From any other is held, so a new
   * alias is a widening (an agent that writes `aliases = ["ceo@bank.example"]` would send as anyone).
   */
  own_addresses: string[];
}

/**
 * What an account nobody has confirmed yet may do: nothing that a gate guards. An account added to
 * config.toml after the first start is a widening like any other.
 */
export const CLOSED: Gates = {
  allow_expunge: false,
  allow_delete_folder: false,
  allowed_recipients: [],
  max_recipients: 0,
  max_attachment_bytes: 0,
  hold_approval: "owner",
  own_addresses: [],
};

/**
 * Gates as state.db stored them, in this module's key order: a row written before a gate existed
 * reads that gate as its narrowest value (hold_approval "owner"), so a new gate never widens by itself.
 * Own addresses are the exception: a row confirmed before they were confirmed reads `recorded` (the
 * file's, what the daemon ran on until then; the caller records them, once, see `ownRecorded`), so
 * an account the owner confirmed does not start holding every send.
 */
export function gatesFrom(stored: Partial<Gates>, recorded: string[] = []): Gates {
  return {
    allow_expunge: stored.allow_expunge ?? false,
    allow_delete_folder: stored.allow_delete_folder ?? false,
    allowed_recipients: stored.allowed_recipients === undefined ? [] : stored.allowed_recipients,
    max_recipients: stored.max_recipients === undefined ? 0 : stored.max_recipients,
    max_attachment_bytes: stored.max_attachment_bytes === undefined ? 0 : stored.max_attachment_bytes,
    hold_approval: stored.hold_approval === "client" ? "client" : "owner",
    own_addresses: spelled(stored.own_addresses ?? recorded),
  };
}

/** Whether a stored row has the own addresses (rows confirmed before they were confirmed do not). */
export const ownRecorded = (stored: Partial<Gates>) => Array.isArray(stored.own_addresses);

const spelled = (list: readonly string[]) => [...new Set(list.map((a) => a.toLowerCase()))].sort();

/**
 * The gates of a policy; `own` is the account's own addresses (see `gatesOfAccount`), none when not
 * given; a policy the daemon met (own_addresses set) keeps its own.
 */
export function gatesOf(p: Policy, own: readonly string[] = []): Gates {
  return {
    allow_expunge: p.allow_expunge,
    allow_delete_folder: p.allow_delete_folder,
    allowed_recipients: p.allowed_recipients
      ? [...new Set(p.allowed_recipients.map((r) => r.toLowerCase()))].sort()
      : null,
    max_recipients: p.max_recipients ?? null,
    max_attachment_bytes: p.max_attachment_bytes ?? null,
    hold_approval: p.hold_approval ?? "owner",
    own_addresses: spelled(p.own_addresses ?? own),
  };
}

/** An account's gates: its policy's, with its own addresses (the met ones where the daemon set them). */
export const gatesOfAccount = (a: Pick<AccountConfig, "policy" | "address" | "aliases">) =>
  gatesOf(a.policy, ownAddresses(a));

export function policyOf(g: Gates): Policy {
  return {
    allow_expunge: g.allow_expunge,
    allow_delete_folder: g.allow_delete_folder,
    ...(g.allowed_recipients ? { allowed_recipients: [...g.allowed_recipients] } : {}),
    ...(g.max_recipients !== null ? { max_recipients: g.max_recipients } : {}),
    ...(g.max_attachment_bytes !== null ? { max_attachment_bytes: g.max_attachment_bytes } : {}),
    hold_approval: g.hold_approval,
    own_addresses: [...g.own_addresses],
  };
}

/** Whether `list` lets `entry` through: an address by itself or by its @domain, a domain by itself. */
function covers(list: string[], entry: string): boolean {
  if (list.includes(entry)) return true;
  return !entry.startsWith("@") && list.includes(entry.slice(entry.lastIndexOf("@")));
}

const minOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** What both policies allow. */
export function meet(a: Gates, b: Gates): Gates {
  let allowed: string[] | null;
  const ra = a.allowed_recipients;
  const rb = b.allowed_recipients;
  if (ra === null) allowed = rb;
  else if (rb === null) allowed = ra;
  else
    allowed = [...new Set([...ra.filter((e) => covers(rb, e)), ...rb.filter((e) => covers(ra, e))])].sort();
  return {
    allow_expunge: a.allow_expunge && b.allow_expunge,
    allow_delete_folder: a.allow_delete_folder && b.allow_delete_folder,
    allowed_recipients: allowed ? [...allowed] : null,
    max_recipients: minOf(a.max_recipients, b.max_recipients),
    max_attachment_bytes: minOf(a.max_attachment_bytes, b.max_attachment_bytes),
    hold_approval: a.hold_approval === "client" && b.hold_approval === "client" ? "client" : "owner",
    own_addresses: a.own_addresses.filter((x) => b.own_addresses.includes(x)),
  };
}

export const sameGates = (a: Gates, b: Gates) => JSON.stringify(a) === JSON.stringify(b);

/** True when `next` allows something `base` does not. */
export const widens = (base: Gates, next: Gates) => !sameGates(meet(base, next), next);

const shown = (v: number | null) => (v === null ? "none" : String(v));

/** What changed from `from` to `to`, one entry per setting ("max_recipients 20 → 50"). */
export function diffGates(from: Gates, to: Gates): string[] {
  const out: string[] = [];
  for (const k of ["allow_expunge", "allow_delete_folder"] as const)
    if (from[k] !== to[k]) out.push(`${k} ${from[k]} → ${to[k]}`);
  const fa = from.allowed_recipients;
  const ta = to.allowed_recipients;
  if (fa === null && ta !== null) out.push(`allowed_recipients any → [${ta.join(", ")}]`);
  else if (fa !== null && ta === null) out.push("allowed_recipients removed (any recipient)");
  else if (fa !== null && ta !== null) {
    const added = ta.filter((e) => !fa.includes(e)).map((e) => `+${e}`);
    const removed = fa.filter((e) => !ta.includes(e)).map((e) => `-${e}`);
    if (added.length || removed.length) out.push(`allowed_recipients ${[...added, ...removed].join(" ")}`);
  }
  for (const k of ["max_recipients", "max_attachment_bytes"] as const)
    if (from[k] !== to[k]) out.push(`${k} ${shown(from[k])} → ${shown(to[k])}`);
  if (from.hold_approval !== to.hold_approval)
    out.push(`hold_approval ${from.hold_approval} → ${to.hold_approval}`);
  const addedOwn = to.own_addresses.filter((e) => !from.own_addresses.includes(e)).map((e) => `+${e}`);
  const removedOwn = from.own_addresses.filter((e) => !to.own_addresses.includes(e)).map((e) => `-${e}`);
  if (addedOwn.length || removedOwn.length)
    out.push(`own addresses (address, aliases) ${[...addedOwn, ...removedOwn].join(" ")}`);
  return out;
}
