/**
 * `chainmail accounts [list] | probe ADDRESS`: the list is a daemon call (./commands.ts); the probe runs
 * here in the CLI process, since it needs no account, secret or daemon (src/providers/probe.ts).
 */
import { REASONS } from "../errors.js";
import type { ProbeResult, ProbeStep } from "../providers/probe.js";
import { usage } from "./command-kit.js";

export const ACCOUNTS_USAGE =
  "usage: chainmail accounts [list] | accounts probe ADDRESS [--dns SERVER]... [--offline]";

export const accountsOptions = {
  dns: { type: "string", multiple: true },
  offline: { type: "boolean" },
} as const;

/** The subcommands that run in the CLI process rather than as a daemon call. */
export const isLocalAccounts = (args: string[]) => args[0] === "probe";

/**
 * Where the probe's https look-ups go instead of the internet (`BASE/HOST/PATH`): for tests and local
 * proxies; the DNS servers are the --dns flag.
 */
export const PROBE_HTTP_BASE_ENV = "CHAINMAIL_PROBE_HTTP_BASE";

export async function runAccountsLocal(
  o: { dns?: string[]; offline?: boolean },
  args: string[],
  json: boolean,
): Promise<number> {
  if (args[0] !== "probe" || args.length !== 2) usage(ACCOUNTS_USAGE);
  // Loaded only here: the other commands start without the DNS and XML code.
  const { probeAddress } = await import("../providers/probe.js");
  const base = process.env[PROBE_HTTP_BASE_ENV];
  const r = await probeAddress(args[1]!, {
    ...(o.dns?.length ? { dnsServers: o.dns } : {}),
    ...(base ? { httpBase: base } : {}),
    network: o.offline !== true,
  });
  const found = r.imap !== null;
  process.stdout.write(`${json ? JSON.stringify({ ...r, found }) : humanProbe(r)}\n`);
  // Nothing found is the probe's failure: the output still says what was asked and how it went.
  return found ? 0 : REASONS.NOT_FOUND.exitCode;
}

const SOURCE_NAME: Record<ProbeStep["source"], string> = {
  preset: "built-in preset",
  mx: "MX records",
  srv: "DNS SRV",
  autoconfig: "autoconfig",
  "well-known": "well-known autoconfig",
  ispdb: "Mozilla ISPDB",
};

function humanProbe(r: ProbeResult): string {
  const server = (s: ProbeResult["imap"]) =>
    s ? `${s.host}:${s.port} ${s.tls}\t(from ${SOURCE_NAME[s.source]})` : "not found";
  const lines = [
    `${r.address}: provider ${r.provider}`,
    `  imap\t${server(r.imap)}`,
    `  smtp\t${server(r.smtp)}`,
    `  username\t${r.username}`,
    ...(r.note ? [`  login\t${r.note}`] : []),
    "looked up:",
    ...r.steps.map(
      (s) => `  ${SOURCE_NAME[s.source]}\t${s.query}\t${s.status}${s.detail ? ` (${s.detail})` : ""}`,
    ),
  ];
  if (!r.imap)
    lines.push(
      `no IMAP server found for ${r.domain}: set [accounts.imap] host, port and tls in config.toml by hand`,
    );
  return lines.join("\n");
}
