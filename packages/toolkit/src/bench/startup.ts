/**
 * Item 2: from spawning a bench bin to the first tools/list answer over stdio, in each era. The
 * 2026-07-28 client is pinned; the SDK's stdio client runs its server/discover probe on a sibling
 * process of the same command before it spawns the one it keeps, on both sides alike.
 */
import { performance } from "node:perf_hooks";
import { connectStdio, type Era } from "../testing/clients.js";
import { binOf, type Bins, type Side } from "./proc.js";
import { ms, pct } from "./stats.js";
import { ratioRow, type Row } from "./table.js";

export const STARTUP_TARGET = 1.2;

async function spawnToFirstList(bins: Bins, side: Side, era: Era): Promise<number> {
  const t0 = performance.now();
  const c = await connectStdio({ command: process.execPath, args: [binOf(bins, side)] }, { era });
  const { tools } = await c.client.listTools();
  const elapsed = performance.now() - t0;
  await c.close();
  if (tools.length !== 1) throw new Error(`${side} listed ${tools.length} tools, expected 1`);
  return elapsed;
}

export async function measureStartup(bins: Bins, spawns: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [era, label] of [
    ["legacy", "2025 (initialize)"],
    ["modern", "2026-07-28 (pinned)"],
  ] as const) {
    // One unmeasured spawn each, so the first measured one does not pay for a cold file cache.
    await spawnToFirstList(bins, "kit", era);
    await spawnToFirstList(bins, "sdk", era);
    const times: Record<Side, number[]> = { kit: [], sdk: [] };
    for (let i = 0; i < spawns; i++) {
      for (const side of (i % 2 === 0 ? ["kit", "sdk"] : ["sdk", "kit"]) as Side[]) {
        times[side].push(await spawnToFirstList(bins, side, era));
      }
    }
    rows.push(
      ratioRow(
        `spawn -> first tools/list p50 (${spawns}x), stdio, ${label}`,
        pct(times.kit, 50),
        pct(times.sdk, 50),
        ms,
        STARTUP_TARGET,
      ),
    );
  }
  return rows;
}
