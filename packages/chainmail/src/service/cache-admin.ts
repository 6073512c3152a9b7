/**
 * The operator's cache commands over the daemon's cache runner: `cache rebuild` (drop an account's
 * cache and sync it again; its searches go to the server meanwhile) and `cache evict` (drop stored
 * bodies, oldest first; headers and indexed words stay). Only the CLI client may run them.
 */
import type { RebuildReport } from "../daemon/operations/cache.js";
import { MailError } from "../errors.js";
import { accountOf, accountsOf, audit, type Call, cacheOf, type ServiceContext } from "./context.js";

function operatorOnly(call: Call, what: string): void {
  if (call.client !== "cli")
    throw new MailError(
      "POLICY_DENIED",
      `${what} is an operator command: only the chainmail CLI may run it`,
      `Ask the user to run \`chainmail ${what}\`.`,
    );
}

export async function rebuildCache(
  ctx: ServiceContext,
  call: Call,
  names: string[],
): Promise<{ accounts: RebuildReport[] }> {
  operatorOnly(call, "cache rebuild");
  const cache = cacheOf(ctx);
  // Every account's cache is dropped before the first sync is awaited.
  const runs = accountsOf(ctx, names).map((a) => ({ account: a.name, ...cache.rebuild(a) }));
  const out: RebuildReport[] = [];
  for (const r of runs) {
    // A drop that failed (cache.db's write lock held past the wait) is the pass's error: nothing was dropped
    const dropped = await r.dropped.catch(() => ({ folders: 0, messages: 0, bodies: 0 }));
    const sync = await r.synced;
    audit(
      ctx,
      call,
      r.account,
      sync.ok ? "allowed" : "error",
      `dropped ${dropped.messages} message(s), ${dropped.bodies} bodies; ${sync.ok ? `synced ${sync.folders} folder(s), ${sync.bodies} bodies` : `sync: ${sync.error?.reason}`}`,
    );
    out.push({ account: r.account, dropped, sync });
  }
  return { accounts: out };
}

export async function evictCache(
  ctx: ServiceContext,
  call: Call,
  p: { account?: string | undefined; before?: string | undefined; bytes?: number | undefined },
): Promise<{ account: string | null; bodies: number; bytes: number }> {
  operatorOnly(call, "cache evict");
  const cache = cacheOf(ctx);
  const account = p.account === undefined ? null : accountOf(ctx, p.account).name;
  const got = await cache.evict({
    ...(account ? { accounts: [account] } : {}),
    ...(p.before !== undefined ? { beforeMs: Date.parse(p.before) } : {}),
    ...(p.bytes !== undefined ? { bytes: p.bytes } : {}),
  });
  audit(
    ctx,
    call,
    account,
    "allowed",
    `evicted ${got.bodies} bodies, ${got.bytes} bytes${p.before ? ` before ${p.before}` : ""}${p.bytes ? ` (asked ${p.bytes} bytes)` : ""}`,
  );
  return { account, ...got };
}
