/**
 * `chainmail accounts [list] | probe ADDRESS | add ADDRESS`: the list is a daemon call
 * (./commands.ts); probe and add run here in the CLI process, since they need no account, secret or
 * daemon (src/providers/probe.ts, src/providers/add.ts). This file only reads flags, asks at a
 * terminal and prints.
 */
import { runSecret } from "./secret-command.js";
import { REASONS } from "../errors.js";
import type { Home } from "../home.js";
import type { AddAnswers } from "../providers/add.js";
import type { ProbeResult, ProbeStep } from "../providers/probe.js";
import { usage } from "./command-kit.js";

export const ACCOUNTS_USAGE =
  "usage: chainmail accounts [list] | accounts probe ADDRESS [--dns SERVER]... [--offline] | accounts add ADDRESS [--name N] [--provider P] [--username U] [--imap-host H] [--imap-port N] [--imap-tls T] [--smtp-host H] [--smtp-port N] [--smtp-tls T] [--no-smtp] [--dns SERVER]... [--offline]";

export const accountsOptions = {
  dns: { type: "string", multiple: true },
  offline: { type: "boolean" },
  name: { type: "string" },
  provider: { type: "string" },
  username: { type: "string" },
  "imap-host": { type: "string" },
  "imap-port": { type: "string" },
  "imap-tls": { type: "string" },
  "smtp-host": { type: "string" },
  "smtp-port": { type: "string" },
  "smtp-tls": { type: "string" },
  "no-smtp": { type: "boolean" },
} as const;

type AccountsFlags = {
  [K in keyof typeof accountsOptions]?: (typeof accountsOptions)[K]["type"] extends "boolean"
    ? boolean
    : K extends "dns"
      ? string[]
      : string;
};

/** The flags only `accounts add` takes: `probe` refuses them. */
const ADD_ONLY = Object.keys(accountsOptions).filter((k) => k !== "dns" && k !== "offline");

/** The subcommands that run in the CLI process rather than as a daemon call. */
export const isLocalAccounts = (args: string[]) => args[0] === "probe" || args[0] === "add";

/**
 * Where the probe's https look-ups go instead of the internet (`BASE/HOST/PATH`): for tests and local
 * proxies; the DNS servers are the --dns flag.
 */
export const PROBE_HTTP_BASE_ENV = "CHAINMAIL_PROBE_HTTP_BASE";

export async function runAccountsLocal(
  home: Home,
  o: AccountsFlags,
  args: string[],
  json: boolean,
): Promise<number> {
  if (args.length !== 2 || (args[0] !== "probe" && args[0] !== "add")) usage(ACCOUNTS_USAGE);
  if (args[0] === "probe") {
    const extra = ADD_ONLY.find((k) => o[k as keyof AccountsFlags] !== undefined);
    if (extra) usage(`accounts probe does not take --${extra}`);
    const r = await probe(args[1]!, o, o.offline === true);
    const found = r.imap !== null;
    process.stdout.write(`${json ? JSON.stringify({ ...r, found }) : humanProbe(r)}\n`);
    // Nothing found is the probe's failure: the output still says what was asked and how it went.
    return found ? 0 : REASONS.NOT_FOUND.exitCode;
  }
  return add(home, args[1]!, o, json);
}

async function probe(address: string, o: AccountsFlags, offline: boolean): Promise<ProbeResult> {
  // Loaded only here: the other commands start without the DNS and XML code.
  const { probeAddress } = await import("../providers/probe.js");
  const base = process.env[PROBE_HTTP_BASE_ENV];
  return probeAddress(address, {
    ...(o.dns?.length ? { dnsServers: o.dns } : {}),
    ...(base ? { httpBase: base } : {}),
    network: !offline,
  });
}

function port(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535)
    usage(`--${flag} must be an integer from 1 to 65535`);
  return Number(v);
}

async function add(home: Home, address: string, o: AccountsFlags, json: boolean): Promise<number> {
  const {
    appendEntry,
    askMissing,
    draftAccount,
    existingAccounts,
    MISSING_FLAGS,
    renderEntry,
    signsInWithOAuth,
  } = await import("../providers/add.js");
  const taken = existingAccounts(home.configFile).map((a) => a.name);
  let answers: AddAnswers = {
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.provider !== undefined ? { provider: o.provider } : {}),
    ...(o.username !== undefined ? { username: o.username } : {}),
    imap: { host: o["imap-host"], port: port(o["imap-port"], "imap-port"), tls: o["imap-tls"] },
    smtp: { host: o["smtp-host"], port: port(o["smtp-port"], "smtp-port"), tls: o["smtp-tls"] },
    ...(o["no-smtp"] ? { noSmtp: true } : {}),
  };
  // Servers named in full need no look-up.
  const named = o["imap-host"] !== undefined && (o["smtp-host"] !== undefined || o["no-smtp"] === true);
  const found = await probe(address, o, o.offline === true || named);
  let planned = draftAccount(found, answers, taken);
  const interactive = !json && process.stdin.isTTY === true && process.stderr.isTTY === true;
  if (planned.draft === null && interactive) {
    if (found.imap === null) process.stderr.write(`${humanProbe(found)}\n`);
    answers = await withPrompt((ask) => askMissing(planned.missing, answers, ask));
    planned = draftAccount(found, answers, taken);
  }
  if (planned.draft === null)
    usage(
      `accounts add could not find or was not given: ${planned.missing.map((m) => MISSING_FLAGS[m]).join("; ")}` +
        (found.imap === null
          ? ` (run chainmail accounts probe ${found.address} to see what was looked up)`
          : ""),
    );
  const d = planned.draft;
  const entry = renderEntry(d);
  const { created } = appendEntry(home.configFile, entry);
  // At a terminal the owner finishes the account in one go: the password is asked for at once
  // (secret set's own prompt, without echo); then, when the daemon is running, the new account's
  // server settings are confirmed by the code shown here (policy confirm's own flow: a first start
  // holds them, and no credential goes to them before), an OAuth2 account signs in (auth login's own
  // flow), and the account is tested. Whatever could not be done is printed as the next steps.
  const oauth = signsInWithOAuth(d.provider);
  const stored = interactive && !oauth ? (await runSecret(home, ["set", d.name], false)) === 0 : false;
  if (!json) process.stdout.write(`${created ? "created" : "added to"} ${home.configFile}:\n\n${entry}\n`);
  const done = interactive ? await finishAtTerminal(home, d.name, oauth) : undefined;
  const steps: Array<[string, string]> = [];
  if (!oauth && !stored)
    steps.push([
      `chainmail secret set ${d.name}`,
      d.provider === "google" ? "an app password, on stdin" : "the password, on stdin",
    ]);
  if (!done) {
    steps.push(["chainmail daemon &", "start the daemon, if it is not running"]);
    steps.push(["chainmail policy confirm", "confirm the new account's server settings, in your terminal"]);
  }
  if (oauth && !done?.signedIn) steps.push([`chainmail auth login ${d.name}`, "sign in with OAuth2"]);
  if (!done?.tested) steps.push([`chainmail test ${d.name}`, "log in to IMAP and SMTP"]);
  const next = steps.map(([cmd]) => cmd);
  const w = Math.max(0, ...next.map((n) => n.length));
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ account: d.name, config_file: home.configFile, created, provider: d.provider, address: d.address, username: d.username, imap: d.imap, smtp: d.smtp, password_stored: stored, next })}\n`,
    );
  } else if (steps.length > 0) {
    process.stdout.write(
      ["next:", ...steps.map(([cmd, why]) => `  ${cmd.padEnd(w)}  # ${why}`), ""].join("\n"),
    );
  }
  if (done?.tested === false) return done.exitCode;
  return 0;
}

/**
 * The rest of a new account at the owner's terminal, when the daemon runs: confirm its server
 * settings (the code typed back), sign in (OAuth2), test. Undefined when the daemon is not running.
 */
async function finishAtTerminal(
  home: Home,
  name: string,
  oauth: boolean,
): Promise<{ signedIn: boolean; tested: boolean; exitCode: number } | undefined> {
  const { DaemonClient } = await import("../client/index.js");
  const { confirmRequest } = await import("./confirm.js");
  const client = new DaemonClient({
    socketPath: home.socketPath,
    socketNamed: home.socketNamed,
    client: "cli",
  });
  try {
    if (
      !(await client.ping().then(
        () => true,
        () => false,
      ))
    )
      return undefined;
    await confirmRequest(name, undefined, { input: process.stdin, output: process.stdout }).send(client);
    let signedIn = false;
    if (oauth) {
      const { runAuth } = await import("./auth-commands.js");
      signedIn = (await runAuth(home, {}, ["login", name], false)) === 0;
      if (!signedIn) return { signedIn, tested: false, exitCode: REASONS.AUTH_REQUIRED.exitCode };
    }
    const r = await client.testAccount({ account: name });
    const { human } = await import("./human/index.js");
    const { outcomeCode } = await import("./main.js");
    process.stdout.write(`${human("test", r)}\n`);
    // `chainmail test`'s own rule: both logins must work, a server not configured is skipped.
    const exitCode = outcomeCode("test", [name], r);
    return { signedIn, tested: exitCode === 0, exitCode };
  } finally {
    client.close();
  }
}

/** Questions at the terminal: asked on stderr, so stdout keeps only the result. */
async function withPrompt<T>(run: (ask: (q: string) => Promise<string>) => Promise<T>): Promise<T> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await run((q) => rl.question(q));
  } finally {
    rl.close();
  }
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
