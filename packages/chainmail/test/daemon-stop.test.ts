// Stopping the daemon (SIGTERM in the CLI) during a first sync: the sync ends at its next batch
// instead of the daemon waiting for it (and its body backfill) to run to the end, the `cache.sync`
// call in flight answers that it did not finish, and the next daemon goes on from what was committed.
// Real Dovecot, the daemon in this process; the header writer's transactions are held so that the
// sync is still running when the daemon is told to stop.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdWriterTransactions } from "../src/cache/writer.js";
import { mailboxMessage } from "../src/testing/mailbox.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

const N = 2_100;
const NOW = new Date(Date.UTC(2026, 0, 15));
let env: MailEnv;

beforeAll(async () => {
  env = await startMailEnv();
  await env.dv.appendMessages(
    "alice",
    "INBOX",
    Array.from({ length: N }, (_, i) => ({ raw: mailboxMessage(i, N, { now: NOW }).raw })),
  );
}, 120_000);
afterAll(async () => {
  holdWriterTransactions(0);
  await env?.stop();
});

const inbox = async () => {
  const status = await env.client.cacheStatus({ accounts: ["work"] });
  return status.accounts[0]?.folders.find((f) => f.role === "inbox");
};

describe("the daemon stopping during a first sync", () => {
  it("ends the sync at its next batch, answers the call in flight, and the next daemon resumes", async () => {
    // Each of the three FETCH batches (1,000, 1,000, 100) holds its transaction for 1.5 s: the second
    // is being written when the daemon is told to stop (the first is seen committed), the third not
    holdWriterTransactions(1_500);
    const call = env.client.cacheSync({ accounts: ["work"] });
    call.catch(() => undefined);
    // The first batch is committed: the sync is under way, batches and the bodies to go
    for (let i = 0; i < 600; i++) {
      if (((await inbox())?.headers_cached ?? 0) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await inbox())?.headers_cached).toBeGreaterThan(0);

    await env.daemon.stop();
    const report = await call;
    const work = report.accounts.find((a) => a.account === "work");
    // Cut short: not reported as done, and not every message's headers (nor any body) fetched
    expect(work?.ok).toBe(false);
    expect(work?.added).toBe(0);
    expect(work?.bodies).toBe(0);

    holdWriterTransactions(0);
    await env.restartDaemon();
    const cut = await inbox();
    expect(cut?.headers_cached).toBeGreaterThan(0);
    expect(cut?.headers_cached).toBeLessThan(N);
    expect(cut?.complete).toBe(false);
    const again = await env.client.cacheSync({ accounts: ["work"] });
    expect(again.accounts[0]?.ok).toBe(true);
    const done = await inbox();
    expect(done?.headers_cached).toBe(N);
    expect(done?.complete).toBe(true);
    const all = await env.client.search({ query: "", accounts: ["work"], source: "cache", count_only: true });
    expect(all.count).toBe(N);
  }, 120_000);
});
