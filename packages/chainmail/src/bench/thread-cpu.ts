/**
 * Where a phase's CPU goes, thread by thread (Linux /proc): the daemon's main thread, each of its
 * other threads (the header writer, the checkpoint copier, V8's and libuv's helpers: the kernel
 * names them all "node", so they are told apart by their share), Dovecot's processes and any other
 * process named. On two cores a rate is bounded by the busiest thread and by the CPU of all of
 * them together; this says which bound a phase meets. Threads and processes that end during a
 * phase count with their CPU when last sampled (every 100 ms).
 */
import fs from "node:fs";
import os from "node:os";
import { cpuMsOfStat } from "./harness.js";

/** The pids of Dovecot's processes (their titles start with "dovecot"). */
function dovecotPids(): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, "latin1").startsWith("dovecot")) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export interface ThreadCpuReport {
  /** ms of CPU of the daemon's main thread. */
  main: number;
  /** ms of CPU of each other thread of the daemon, largest first. */
  others: number[];
  /** ms of CPU of Dovecot's processes together. */
  dovecot: number;
  /** ms of CPU of each named process. */
  named: Record<string, number>;
}

/**
 * Samples the daemon's threads, Dovecot's processes and the named pids every 100 ms; `phase()`
 * starts a new phase and returns the CPU of the one it ends.
 */
export function threadCpuSampler(daemonPid: number, named: Record<string, number>) {
  // the CPU ms last seen, by key ("t<tid>" for the daemon's threads, "d<pid>" for Dovecot's)
  const seen = new Map<string, number>();
  // Dovecot's pids looked up once a second, not at each sample: a scan reads every process's
  // cmdline, which would add this process's own CPU to what it measures
  let dovecot: number[] = [];
  let samples = 0;
  const sample = () => {
    if (samples++ % 10 === 0) dovecot = dovecotPids();
    try {
      for (const tid of fs.readdirSync(`/proc/${daemonPid}/task`)) {
        const t = cpuMsOfStat(`/proc/${daemonPid}/task/${tid}/stat`);
        if (!Number.isNaN(t)) seen.set(`t${tid}`, t);
      }
    } catch {
      // the daemon ended
    }
    for (const pid of dovecot) {
      const t = cpuMsOfStat(`/proc/${pid}/stat`);
      if (!Number.isNaN(t)) seen.set(`d${pid}`, t);
    }
    for (const [name, pid] of Object.entries(named)) {
      const t = cpuMsOfStat(`/proc/${pid}/stat`);
      if (!Number.isNaN(t)) seen.set(`n${name}`, t);
    }
  };
  sample();
  let start = new Map(seen);
  const timer = setInterval(sample, 100);
  timer.unref();
  return {
    /** Ends the current phase (its report) and starts the next. */
    phase(): ThreadCpuReport {
      sample();
      const delta = (key: string) => (seen.get(key) ?? 0) - (start.get(key) ?? 0);
      const report: ThreadCpuReport = { main: delta(`t${daemonPid}`), others: [], dovecot: 0, named: {} };
      for (const key of seen.keys()) {
        if (key.startsWith("t") && key !== `t${daemonPid}`) report.others.push(delta(key));
        else if (key.startsWith("d")) report.dovecot += delta(key);
      }
      report.others = report.others.filter((ms) => ms > 0).sort((a, b) => b - a);
      for (const name of Object.keys(named)) report.named[name] = delta(`n${name}`);
      start = new Map(seen);
      return report;
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/**
 * One line: each part's CPU in µs per item (a header, a body) and its share of the phase's wall
 * time (100% is one core busy all along).
 */
export function threadCpuLine(r: ThreadCpuReport, items: number, wallMs: number): string {
  const per = (ms: number) => `${Math.round((ms * 1000) / items)} µs (${Math.round((ms / wallMs) * 100)}%)`;
  const othersMs = r.others.reduce((a, b) => a + b, 0);
  const namedMs = Object.values(r.named).reduce((a, b) => a + b, 0);
  const all = r.main + othersMs + r.dovecot + namedMs;
  return [
    `daemon main thread ${per(r.main)}`,
    `its other threads ${per(othersMs)} (largest ${r.others
      .slice(0, 3)
      .map((ms) => per(ms))
      .join(", ")})`,
    `Dovecot ${per(r.dovecot)}`,
    ...Object.entries(r.named).map(([name, ms]) => `${name} ${per(ms)}`),
    `all ${per(all)} (${os.cpus().length} cores: ${os.cpus().length * 100}%)`,
  ].join("; ");
}
