/**
 * `[events] poll_ms`: while a read_events call waits, the INBOX watch also sends a NOOP every poll_ms
 * (Dovecot 2.3 holds IDLE notices back by 500 ms; a NOOP is answered at once), and sends none while
 * nobody waits. Over the real daemon and Dovecot, what the watch sent is read from Dovecot's logout
 * session-end lines (`in=` bytes per session); the scheduling itself is checked on a fake clock.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { pollWhileWanted } from "../src/cache/watch.js";
import { parseConfig } from "../src/config.js";
import { type MailEnv, startMailEnv } from "../src/testing/mailenv.js";

describe("pollWhileWanted", () => {
  it("sends a NOOP per interval only while polling is wanted and the watch is not busy", async () => {
    vi.useFakeTimers();
    try {
      const client = { usable: true, noop: vi.fn(async () => undefined) };
      let ms = 0;
      let busy = false;
      const stop = pollWhileWanted(
        client,
        () => ms,
        () => busy,
      );
      await vi.advanceTimersByTimeAsync(1000);
      expect(client.noop).toHaveBeenCalledTimes(0);
      ms = 200;
      await vi.advanceTimersByTimeAsync(1000);
      expect(client.noop).toHaveBeenCalledTimes(5);
      busy = true;
      await vi.advanceTimersByTimeAsync(1000);
      expect(client.noop).toHaveBeenCalledTimes(5);
      busy = false;
      ms = 0;
      await vi.advanceTimersByTimeAsync(1000);
      expect(client.noop).toHaveBeenCalledTimes(5);
      ms = 100;
      stop();
      await vi.advanceTimersByTimeAsync(1000);
      expect(client.noop).toHaveBeenCalledTimes(5);
    } finally {
      vi.useRealTimers();
    }
  });

  it("stops when the connection is no longer usable", async () => {
    vi.useFakeTimers();
    try {
      const client = { usable: true, noop: vi.fn(async () => undefined) };
      pollWhileWanted(
        client,
        () => 100,
        () => false,
      );
      await vi.advanceTimersByTimeAsync(350);
      const sent = client.noop.mock.calls.length;
      expect(sent).toBeGreaterThan(0);
      client.usable = false;
      await vi.advanceTimersByTimeAsync(1000);
      expect(client.noop).toHaveBeenCalledTimes(sent);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("events.poll_ms in config.toml", () => {
  const withPoll = (v: string) => parseConfig(`[events]\npoll_ms = ${v}\n`);
  it("is 200 unless set, 0 turns it off, and a busy loop is refused", () => {
    expect(parseConfig("").events.poll_ms).toBe(200);
    expect(withPoll("200").events.poll_ms).toBe(200);
    expect(withPoll("0").events.poll_ms).toBe(0);
    for (const bad of ["20", "-1", "1.5", '"fast"', "60001"])
      expect(() => withPoll(bad)).toThrow(
        "events.poll_ms must be 0 (IDLE only) or an integer from 50 to 60000",
      );
  });
});

let env: MailEnv;
beforeAll(async () => {
  env = await startMailEnv({
    cache: "background = true\nsync_interval_seconds = 3600\n[events]\npoll_ms = 50",
  });
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function watching(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const s = await env.client.cacheStatus({ accounts: ["work"] });
    if (s.accounts[0]?.folders.some((f) => f.name === "INBOX" && f.watching)) return;
    await sleep(50);
  }
  throw new Error("the INBOX watch did not start");
}

/**
 * Bytes sent to Dovecot by alice's sessions that logged in between log lines `from` and `to`, summed
 * over their end lines (logged out or disconnected), once Dovecot has logged every one of them.
 */
async function bytesIn(from: number, to: number): Promise<number> {
  const lines = () => env.dv.log().split("\n");
  const ids = lines()
    .slice(from, to)
    .flatMap((l) => /Login: user=<alice>.*session=<([^>]+)>/.exec(l)?.[1] ?? []);
  const ends = () =>
    lines().flatMap((l) => {
      const m = /imap\(alice\)<\d+><([^>]+)>.* in=(\d+)/.exec(l);
      return m && ids.includes(m[1]!) ? [Number(m[2])] : [];
    });
  for (let i = 0; i < 100 && ends().length < ids.length; i++) await sleep(50);
  expect(ends()).toHaveLength(ids.length);
  return ends().reduce((a, b) => a + b, 0);
}
const logLines = () => env.dv.log().split("\n").length;

describe("a watch with poll_ms", () => {
  it("asks the server for news only while a read waits, and each message is still one event", async () => {
    const idleFrom = 0;
    await watching();
    await sleep(2000); // nobody waits
    const idleTo = logLines();
    await env.restartDaemon();
    const idle = await bytesIn(idleFrom, idleTo);

    const waitFrom = logLines();
    await watching();
    const start = (await env.client.readEvents({ group: "poll", limit: 200 })).next_cursor;
    const empty = await env.client.readEvents({ group: "poll", kinds: ["new"], wait_seconds: 2 });
    expect(empty.events).toEqual([]);
    const waitTo = logLines();
    await env.restartDaemon();
    const waited = await bytesIn(waitFrom, waitTo);
    // A NOOP cycle (DONE, NOOP, IDLE) is about 25 bytes; 2 s at 50 ms would be 40 of them.
    expect(idle).toBeGreaterThan(0);
    expect(waited - idle).toBeGreaterThan(100);

    await watching();
    const other = await env.dv.connect("alice");
    try {
      const waiting = env.client.readEvents({ group: "poll", kinds: ["new"], wait_seconds: 30 });
      await sleep(200);
      await other.append("INBOX", "Subject: Polled in\r\nMessage-ID: <polled-in@example.com>\r\n\r\nhi\r\n");
      const got = await waiting;
      expect(got.events.map((e) => e.row?.subject)).toEqual(["Polled in"]);
      await sleep(500); // IDLE's own notice arrives too, and finds nothing new
      const all = await env.client.readEvents({ cursor: start, kinds: ["new"], limit: 200 });
      expect(all.events.filter((e) => e.row?.subject === "Polled in")).toHaveLength(1);
    } finally {
      await other.logout();
    }
  });
});
