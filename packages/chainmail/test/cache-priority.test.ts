/**
 * Requests before background sync (src/cache/priority.ts): a background turn is one turn of the
 * event loop when no request is about, waits while requests keep arriving but never past its
 * bound, and the daemon's socket marks every request it receives and answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRACE_MS, MAX_WAIT_MS, backgroundTurn, lastRequestAt, requestSeen } from "../src/cache/priority.js";
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
    requestSeen(performance.now() - 1_000);
    expect(await settlesWithin(backgroundTurn(), 2)).toBe(true);
  });

  it("waits until no request has come in for GRACE_MS", async () => {
    requestSeen();
    const started = performance.now();
    const turn = backgroundTurn();
    expect(await settlesWithin(turn, 3)).toBe(false);
    await turn;
    expect(performance.now() - lastRequestAt()).toBeGreaterThanOrEqual(GRACE_MS - 0.5);
    expect(performance.now() - started).toBeGreaterThanOrEqual(GRACE_MS - 0.5);
  });

  it("ends after MAX_WAIT_MS however busy the requests keep it", async () => {
    // A request every millisecond: without the bound the turn would never end
    const busy = setInterval(() => requestSeen(), 1);
    try {
      requestSeen();
      const started = performance.now();
      await backgroundTurn();
      expect(performance.now() - started).toBeGreaterThanOrEqual(MAX_WAIT_MS - 0.5);
    } finally {
      clearInterval(busy);
    }
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
    requestSeen(performance.now() - 1_000);
    const before = performance.now();
    await env.client.ping();
    expect(lastRequestAt()).toBeGreaterThanOrEqual(before);
    const turn = backgroundTurn();
    expect(await settlesWithin(turn, 3)).toBe(false);
    await turn;
  });
});
