/**
 * Event latency benchmark (`npm run bench` here): from an APPEND by another IMAP client to the event
 * reaching a `read_events` call that was already waiting (group, wait_seconds 60) through MCP, with
 * the daemon's background cache and its IDLE watch on INBOX as in normal use. Prints p50/p95 against
 * the target (p50 under 250 ms) and the load average (the machine may be shared), twice: with IDLE
 * alone (`[events] poll_ms = 0`; Dovecot 2.3 holds each IDLE notice 500 ms) and with a NOOP every
 * poll_ms while a read waits (BENCH_EVENT_POLL_MS, default 200, the daemon's default).
 * BENCH_EVENT_RUNS sets the number of messages (default 40).
 */
import os from "node:os";
import { DaemonClient } from "@mcpforge/chainmail";
import { startMailEnv } from "@mcpforge/chainmail/testing";
import { connectInMemory, session } from "@mcpforge/toolkit/testing";
import { createChainmailMcpServer } from "../index.js";

const RUNS = Number(process.env["BENCH_EVENT_RUNS"] ?? 40);
const POLL_MS = Number(process.env["BENCH_EVENT_POLL_MS"] ?? 200);
const TARGET_P50_MS = 250;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

const raw = (i: number) =>
  [
    "From: Bench <bench@example.com>",
    "To: alice@example.com",
    `Subject: Event bench ${i}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <event-bench-${i}-${Date.now()}@example.com>`,
    "",
    "hello",
    "",
  ].join("\r\n");

type Events = { events: Array<{ kind: string; row?: { subject: { untrusted: string } } }> };

async function measure(pollMs: number): Promise<void> {
  const env = await startMailEnv({
    cache: `background = true\nsync_interval_seconds = 3600\n[events]\npoll_ms = ${pollMs}`,
  });
  const daemonClient = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
  const kit = createChainmailMcpServer({ client: daemonClient, log: () => undefined });
  const conn = await connectInMemory(kit, { scopes: [] });
  const tools = session(conn.client);
  const other = await env.dv.connect("alice");
  try {
    // The first pass and the watch start with the daemon; wait until the INBOX is watched.
    for (let i = 0; i < 200; i++) {
      const s = await daemonClient.cacheStatus({ accounts: ["work"] });
      if (s.accounts[0]?.folders.some((f) => f.name === "INBOX" && f.watching)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await tools.ok("read_events", { group: "bench", limit: 200 });
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const waiting = tools.ok<Events>("read_events", { group: "bench", kinds: ["new"], wait_seconds: 60 });
      // Let the read reach the daemon and start waiting before the mail goes in.
      await new Promise((r) => setTimeout(r, 100));
      const t0 = performance.now();
      await other.append("INBOX", raw(i));
      const r = await waiting;
      const ms = performance.now() - t0;
      if (!r.events.some((e) => e.row?.subject.untrusted === `Event bench ${i}`))
        throw new Error(`run ${i}: the event did not carry the appended message`);
      times.push(ms);
    }
    const p50 = pct(times, 50);
    const p95 = pct(times, 95);
    console.log(
      `APPEND -> read_events (MCP, waiting group, ${pollMs ? `poll_ms ${pollMs}` : "IDLE only"}), ${RUNS} runs: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms; target p50 < ${TARGET_P50_MS} ms: ${p50 < TARGET_P50_MS ? "OK" : "MISS"} [load ${load()}]`,
    );
  } finally {
    await other.logout().catch(() => undefined);
    await conn.close();
    daemonClient.close();
    await env.stop();
  }
}

async function main(): Promise<void> {
  await measure(0);
  await measure(POLL_MS);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
