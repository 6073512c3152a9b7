/**
 * `accounts add`: from a probe's result and the user's answers, one commented `[[accounts]]` entry,
 * appended to config.toml only once the whole file with it loads (nothing half written). No CLI code:
 * the command asks the questions (src/cli/accounts.ts), this module decides what is still missing,
 * writes the TOML and the file.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { stringify } from "smol-toml";
import { type AccountConfig, parseConfig, type ServerConfig, type TlsMode } from "../config.js";
import { MailError } from "../errors.js";
import { ACCOUNT_NAME_RE } from "../secrets.js";
import { isProvider, PRESETS, type Provider, presetOf } from "./presets.js";
import type { ProbeResult, ProbeSource } from "./probe.js";

/** A server as the user gave it (a flag, a reply): checked by draftAccount. */
export interface ServerAnswer {
  host?: string | undefined;
  port?: number | undefined;
  tls?: string | undefined;
}

/** What the user said, by flag or at the prompt; each overrides what the probe found. */
export interface AddAnswers {
  name?: string;
  provider?: string;
  username?: string;
  imap?: ServerAnswer;
  smtp?: ServerAnswer;
  /** No SMTP server: the account reads mail but cannot send. */
  noSmtp?: boolean;
}

export interface AccountDraft {
  name: string;
  provider: Provider;
  address: string;
  username: string;
  imap: ServerConfig & { source: ProbeSource | "answer" };
  smtp: (ServerConfig & { source: ProbeSource | "answer" }) | null;
}

/** What is still unknown after the probe and the answers: the questions to ask, or the flags to name. */
export type Missing = "name" | "imap.host" | "smtp.host";

const DEFAULT_PORT = { imap: { tls: 993, starttls: 143 }, smtp: { tls: 465, starttls: 587 } } as const;

export const isTlsMode = (v: unknown): v is TlsMode => v === "tls" || v === "starttls" || v === "none";

/** A name for the account from its address: the domain's first label, when free and valid. */
export function suggestName(address: string, taken: readonly string[]): string | undefined {
  const label = address.slice(address.lastIndexOf("@") + 1).split(".")[0] ?? "";
  return ACCOUNT_NAME_RE.test(label) && !taken.includes(label) ? label : undefined;
}

/**
 * The draft, or what is missing. The server a user names wins over the probe's; an answered
 * provider brings its preset's servers unless a host is answered too.
 */
export function draftAccount(
  probe: ProbeResult,
  answers: AddAnswers,
  taken: readonly string[],
): { draft: AccountDraft; missing: [] } | { draft: null; missing: Missing[] } {
  if (answers.provider !== undefined && !isProvider(answers.provider))
    throw new MailError(
      "INVALID_ARGUMENT",
      `--provider must be one of ${Object.keys(PRESETS).concat("imap").join(", ")}`,
    );
  const provider: Provider = (answers.provider as Provider | undefined) ?? probe.provider;
  const preset = presetOf(provider);
  const name = answers.name ?? suggestName(probe.address, taken);
  if (name !== undefined) {
    if (!ACCOUNT_NAME_RE.test(name))
      throw new MailError(
        "INVALID_ARGUMENT",
        "the account name must be 1-64 of A-Z a-z 0-9 . _ - and start with a letter or digit",
      );
    if (taken.includes(name))
      throw new MailError(
        "CONFLICT",
        `config.toml already has an account named ${name}`,
        "Give another --name.",
      );
  }
  const server = (
    kind: "imap" | "smtp",
  ): (ServerConfig & { source: ProbeSource | "answer" }) | null | undefined => {
    const given = answers[kind];
    for (const [k, v] of Object.entries(given ?? {})) {
      if (v === undefined) continue;
      if (k === "tls" && !isTlsMode(v))
        throw new MailError("INVALID_ARGUMENT", `--${kind}-tls must be tls, starttls or none`);
      if (k === "port" && !(Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535))
        throw new MailError("INVALID_ARGUMENT", `--${kind}-port must be an integer from 1 to 65535`);
    }
    const base = given?.host
      ? undefined
      : preset && answers.provider !== undefined
        ? { ...preset[kind], source: "answer" as const }
        : (probe[kind] ?? (preset ? { ...preset[kind], source: "preset" as const } : undefined));
    const host = given?.host ?? base?.host;
    if (!host) return undefined;
    const tls = (given?.tls ?? base?.tls ?? "tls") as TlsMode;
    const port =
      given?.port ??
      (base && base.tls === tls ? base.port : DEFAULT_PORT[kind][tls === "tls" ? "tls" : "starttls"]);
    return {
      host,
      port,
      tls,
      source: given?.host || given?.port || given?.tls ? "answer" : (base?.source ?? "answer"),
    };
  };
  if (answers.noSmtp && Object.values(answers.smtp ?? {}).some((v) => v !== undefined))
    throw new MailError("INVALID_ARGUMENT", "--no-smtp and an --smtp-* flag contradict each other");
  const imap = server("imap");
  const smtp = answers.noSmtp ? null : server("smtp");
  const missing: Missing[] = [];
  if (name === undefined) missing.push("name");
  if (!imap) missing.push("imap.host");
  if (smtp === undefined) missing.push("smtp.host");
  if (missing.length > 0 || !imap || name === undefined) return { draft: null, missing };
  return {
    draft: {
      name,
      provider,
      address: probe.address,
      username: answers.username ?? probe.username,
      imap,
      smtp: smtp ?? null,
    },
    missing: [],
  };
}

const SOURCE_WORDS: Record<ProbeSource | "answer", string> = {
  preset: "the built-in preset",
  mx: "the domain's MX records",
  srv: "DNS SRV",
  autoconfig: "the domain's autoconfig",
  "well-known": "the domain's well-known autoconfig",
  ispdb: "Mozilla's ISPDB",
  answer: "your answer",
};

/** One TOML value, written by the TOML library (quoting and escapes are its business). */
const value = (v: string | number) => stringify({ v }).replace(/^v = /, "").trim();

const same = (a: ServerConfig, b: ServerConfig) => a.host === b.host && a.port === b.port && a.tls === b.tls;

/** The `[[accounts]]` entry, with comments that say where each setting came from and what is next. */
export function renderEntry(d: AccountDraft, today = new Date()): string {
  const preset = presetOf(d.provider);
  const lines = [
    `# Added by \`chainmail accounts add\` on ${today.toISOString().slice(0, 10)}.`,
    "[[accounts]]",
    `name = ${value(d.name)}`,
    `provider = ${value(d.provider)}`,
    `address = ${value(d.address)}`,
  ];
  if (d.username !== d.address) lines.push(`username = ${value(d.username)}`);
  const serverLines = (kind: "imap" | "smtp", s: ServerConfig & { source: ProbeSource | "answer" }) => {
    if (preset && same(s, preset[kind])) {
      lines.push(`# ${kind}: ${s.host}:${s.port} ${s.tls}, from the "${d.provider}" preset`);
      return;
    }
    lines.push(
      `[accounts.${kind}]  # from ${SOURCE_WORDS[s.source]}`,
      `host = ${value(s.host)}`,
      `port = ${value(s.port)}`,
      `tls = ${value(s.tls)}`,
    );
  };
  // Keys of [[accounts]] itself come before its sub-tables, so the comments go first.
  if (!d.smtp) lines.push("# no SMTP server: this account reads mail but cannot send");
  if (preset) lines.push(`# login: ${preset.password_note}`);
  serverLines("imap", d.imap);
  if (d.smtp) serverLines("smtp", d.smtp);
  // A provider whose servers take only OAuth2 signs in with it (the preset gives the endpoints and
  // scopes; the client id comes from the environment or a client_id here); Google may, commented.
  if (signsInWithOAuth(d.provider))
    lines.push(
      "[accounts.oauth]  # sign in with OAuth2: chainmail auth login (client_id, or the environment variable the docs name)",
    );
  else if (preset?.oauth)
    lines.push("# [accounts.oauth]  # uncomment to sign in with OAuth2 instead of an app password");
  return `${lines.join("\n")}\n`;
}

/** Providers that accept no password for IMAP and SMTP: `accounts add` writes their [accounts.oauth]. */
export function signsInWithOAuth(provider: string): boolean {
  return provider === "microsoft";
}

/** The accounts config.toml has now (none when it does not exist); a broken file is CONFIG_INVALID. */
export function existingAccounts(file: string): AccountConfig[] {
  if (!fs.existsSync(file)) return [];
  return parseConfig(fs.readFileSync(file, "utf8"), file).accounts;
}

/**
 * Appends the entry to config.toml, creating the file (and its directory) when needed. The whole new
 * text is parsed first, and written to a temporary file renamed over the old one, so the daemon
 * (which re-reads config.toml when it changes) never sees half of it.
 */
export function appendEntry(file: string, entry: string): { created: boolean } {
  const exists = fs.existsSync(file);
  const before = exists ? fs.readFileSync(file, "utf8") : "";
  const sep = before === "" ? "" : before.endsWith("\n\n") ? "" : before.endsWith("\n") ? "\n" : "\n\n";
  const text = `${before}${sep}${entry}`;
  parseConfig(text, file);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const mode = exists ? fs.statSync(file).mode & 0o777 : 0o600;
  const tmp = `${file}.${crypto.randomBytes(6).toString("hex")}.tmp`;
  try {
    fs.writeFileSync(tmp, text, { mode, flag: "wx" });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { created: !exists };
}

/** The flag that answers each missing item without a terminal. */
export const MISSING_FLAGS: Record<Missing, string> = {
  name: "--name NAME",
  "imap.host": "--imap-host HOST (and --imap-port, --imap-tls)",
  "smtp.host": "--smtp-host HOST (and --smtp-port, --smtp-tls), or --no-smtp",
};

/**
 * Asks for what is missing, one question at a time, and folds the replies into the answers. `ask`
 * puts one question to the user (a terminal prompt in the CLI) and returns the reply.
 */
export async function askMissing(
  missing: readonly Missing[],
  answers: AddAnswers,
  ask: (question: string) => Promise<string>,
): Promise<AddAnswers> {
  const out: AddAnswers = { ...answers, imap: { ...answers.imap }, smtp: { ...answers.smtp } };
  const server = async (kind: "imap" | "smtp", label: string) => {
    const tls = (await ask(`${label} TLS: tls, starttls or none [tls]: `)).trim() || "tls";
    if (!isTlsMode(tls))
      throw new MailError("INVALID_ARGUMENT", `--${kind}-tls must be tls, starttls or none`);
    const deflt = DEFAULT_PORT[kind][tls === "tls" ? "tls" : "starttls"];
    const port = (await ask(`${label} port [${deflt}]: `)).trim();
    if (port !== "" && !/^\d{1,5}$/.test(port))
      throw new MailError("INVALID_ARGUMENT", `--${kind}-port must be an integer from 1 to 65535`);
    out[kind] = { ...out[kind], tls, port: port === "" ? deflt : Number(port) };
  };
  for (const m of missing) {
    if (m === "name") {
      const name = (await ask("Account name (1-64 of A-Z a-z 0-9 . _ -): ")).trim();
      if (name) out.name = name;
    } else if (m === "imap.host") {
      const host = (await ask("IMAP server host name: ")).trim();
      if (host) {
        out.imap = { ...out.imap, host };
        await server("imap", "IMAP");
      }
    } else {
      const host = (await ask("SMTP server host name (empty: no SMTP, the account only reads): ")).trim();
      if (host) {
        out.smtp = { ...out.smtp, host };
        await server("smtp", "SMTP");
      } else out.noSmtp = true;
    }
  }
  return out;
}
