// The sending benchmark (issue 14): send_email through MCP to a local SMTP server relaying into a
// throwaway Dovecot over LMTP, p50/p95; a duplicate's answer p50 (target under 5 ms); 100
// concurrent sends with distinct keys (each delivered once), with the throughput. Uses the built
// packages: `npm run build -w @mcpforge/chainmail -w @mcpforge/chainmail-mcp` first.
// Run: `npm run bench` (BENCH_SENDS, default 50).
import os from "node:os";
import { DaemonClient } from "@mcpforge/chainmail";
import { startSendEnv } from "@mcpforge/chainmail/testing";
import { connectInMemory, session } from "@mcpforge/toolkit/testing";
import { createChainmailMcpServer } from "../dist/index.js";

const SENDS = Number(process.env.BENCH_SENDS ?? 50);
const load = () => os.loadavg()[0].toFixed(2);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (n) => `${n.toFixed(2)} ms`;

const env = await startSendEnv();
const daemonClient = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
const conn = await connectInMemory(createChainmailMcpServer({ client: daemonClient, log: () => {} }), {
  scopes: [],
});
const tools = session(conn.client);
try {
  const args = (i, tag) => ({
    account: "work",
    to: ["bob@example.com"],
    subject: `${tag} ${i}`,
    body: `message ${i}`,
  });
  const sendTimes = [];
  for (let i = 0; i < SENDS; i++) {
    const t = performance.now();
    const r = await tools.ok("send_email", args(i, "bench"));
    sendTimes.push(performance.now() - t);
    if (r.status !== "sent") throw new Error(`send ${i}: ${r.status}`);
  }
  console.log(
    `send_email x${SENDS}: p50 ${ms(pct(sendTimes, 50))}, p95 ${ms(pct(sendTimes, 95))} (load ${load()})`,
  );

  const dupTimes = [];
  for (let i = 0; i < SENDS; i++) {
    const t = performance.now();
    const r = await tools.ok("send_email", args(i, "bench"));
    dupTimes.push(performance.now() - t);
    if (r.status !== "duplicate") throw new Error(`replay ${i}: ${r.status}`);
  }
  const dupP50 = pct(dupTimes, 50);
  console.log(
    `duplicate answer: p50 ${ms(dupP50)} (target < 5 ms: ${dupP50 < 5 ? "OK" : "MISS"}) (load ${load()})`,
  );

  const before = env.relay.received.length;
  const t = performance.now();
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      tools.ok("send_email", { ...args(i, "concurrent"), idempotency_key: `bench-concurrent-${i}` }),
    ),
  );
  const secs = (performance.now() - t) / 1000;
  const got = env.relay.received
    .slice(before)
    .map((m) => m.raw.toString("latin1").match(/^Subject: (.*)$/m)?.[1]);
  const once = new Set(got).size === 100 && got.length === 100;
  console.log(
    `100 concurrent sends: ${results.filter((r) => r.status === "sent").length} sent, ${got.length} at the server, each once: ${once ? "OK" : "MISS"}, ${(100 / secs).toFixed(1)} sends/s (load ${load()})`,
  );
} finally {
  await conn.close();
  daemonClient.close();
  await env.stop();
}
