/**
 * Requests before background sync (src/cache/priority.ts): a background turn is one turn of the
 * event loop when no request is about, waits while requests keep arriving but never past its
 * bound, and the daemon's socket marks every request it receives and answers. The waits use
 * long limits, so a loaded machine cannot end them early by being slow.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backgroundTurn, lastRequestAt, requestSeen } from "../src/cache/priority.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

/** Whether `p` settles within `turns` turns of the event loop. */
async function settlesWithin(p: Promise<unknown>, turns: number): Promise<boolean> {
  let settled = false;
  void p.then(() => {
    settled = true;
  });
  for (let i = 0; i < turns && !settled; i++) await new Promise((r) => setImmediate(r));
  return settled;
}

describe("backgroundTurn", () => {
  it("is one turn of the event loop when no request came in lately", async () => {
    requestSeen(performance.now() - 60_000);
    expect(await settlesWithin(backgroundTurn(), 2)).toBe(true);
  });

  it("waits until no request has come in for the grace time", async () => {
    requestSeen();
    const seen = lastRequestAt();
    const turn = backgroundTurn({ graceMs: 300, maxWaitMs: 60_000 });
    expect(await settlesWithin(turn, 3)).toBe(false);
    await turn;
    expect(performance.now() - seen).toBeGreaterThanOrEqual(299);
  });

  it("ends after its longest wait however recent the last request", async () => {
    requestSeen();
    const started = performance.now();
    await backgroundTurn({ graceMs: 60_000, maxWaitMs: 100 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(99);
  });
});

describe("the daemon's socket", () => {
  let env: MailEnv;
  beforeAll(async () => {
    env = await startMailEnv();
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("marks each request it answers, so the sync's next slice waits for it", async () => {
    requestSeen(performance.now() - 60_000);
    const before = performance.now();
    await env.client.ping();
    expect(lastRequestAt()).toBeGreaterThanOrEqual(before);
  });
});
