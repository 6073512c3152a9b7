// Agreement tests between the cache and the server paths: one mailbox in a real Dovecot, synced,
// read once from the cache and once from the server (its bodies dropped by `cache evict`, so
// get_message and get_thread go there), each read checked to come from where it says.
import { expect } from "vitest";
import { type MailEnv, startMailEnv } from "../../src/testing/mailenv.js";

/** A mail env whose work account's INBOX holds `raws`, synced into the cache. */
export async function startSyncedEnv(raws: string[]): Promise<MailEnv> {
  const env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    raws.map((raw) => ({ raw })),
  );
  await env.client.cacheSync({ accounts: ["work"] });
  return env;
}

/**
 * `read` from the cache, then from the server: what each gave, without `source` (checked here to
 * be "cache", then "server", on every item), in the order `read` gives.
 */
export async function fromCacheThenServer<T extends { source: string }>(
  env: MailEnv,
  read: (source: "cache" | "server") => Promise<T[]>,
): Promise<{ fromCache: Omit<T, "source">[]; fromServer: Omit<T, "source">[] }> {
  const fromCache = await read("cache");
  expect(new Set(fromCache.map((m) => m.source))).toEqual(new Set(["cache"]));
  await env.client.call("cache.evict", { account: "work" });
  const fromServer = await read("server");
  expect(new Set(fromServer.map((m) => m.source))).toEqual(new Set(["server"]));
  const strip = (xs: T[]) => xs.map(({ source: _, ...rest }) => rest);
  return { fromCache: strip(fromCache), fromServer: strip(fromServer) };
}
