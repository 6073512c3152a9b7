/** Validates parsed config.toml: the top level, the daemon table, each account and its servers. */
import path from "node:path";
import { parseMailbox } from "../compose/addresses.js";
import { isLoopbackHost } from "../auth/providers.js";
import { MailError } from "../errors.js";
import { isProvider, PROVIDERS, type Provider, presetOf, type ServerPreset } from "../providers/presets.js";
import { ACCOUNT_NAME_RE } from "../secrets.js";
import { readCaFile } from "../tls.js";
import { Checker, isTable } from "./checker.js";
import {
  cacheSection,
  commandSetting,
  eventsSection,
  filesSection,
  oauthSection,
  sendPolicy,
} from "./sections.js";
import {
  type AccountConfig,
  type Config,
  DEFAULT_BODY_LIMIT,
  type DaemonConfig,
  type Policy,
  type ServerConfig,
  type TlsMode,
} from "./types.js";

/**
 * One server table. A provider preset fills the keys the table leaves out (an explicit key wins); a
 * `tls` that differs from the preset's takes that mode's default port, not the preset's.
 */
function server(
  c: Checker,
  v: unknown,
  at: string,
  defaults: { tls: number; starttls: number },
  preset: ServerPreset | undefined,
): ServerConfig | undefined {
  if (!isTable(v)) {
    c.problems.push(`${at} must be a table with host, port and tls`);
    return undefined;
  }
  c.unknown(v, ["host", "port", "tls", "ca_file"], at);
  const host =
    c.str(v, "host", at, preset === undefined) ?? (v["host"] === undefined ? preset?.host : undefined);
  const tlsRaw = v["tls"] ?? preset?.tls ?? "tls";
  let tls: TlsMode = "tls";
  if (tlsRaw === "tls" || tlsRaw === "starttls" || tlsRaw === "none") tls = tlsRaw;
  else c.problems.push(`${at}.tls must be "tls", "starttls" or "none"`);
  let port = preset && tls === preset.tls ? preset.port : tls === "tls" ? defaults.tls : defaults.starttls;
  if (v["port"] !== undefined) {
    const p = v["port"];
    if (typeof p !== "number" || !Number.isInteger(p) || p < 1 || p > 65535) {
      c.problems.push(`${at}.port must be an integer from 1 to 65535`);
    } else port = p;
  }
  const caFile = c.str(v, "ca_file", at, false);
  let ca: { ca_file: string; ca: string } | undefined;
  if (caFile !== undefined && !path.isAbsolute(caFile))
    // The daemon's working directory is nobody's business: a relative path would mean different files.
    c.problems.push(`${at}.ca_file must be an absolute path (got ${caFile})`);
  else if (caFile !== undefined) {
    const read = readCaFile(caFile);
    if ("problem" in read) c.problems.push(`${at}.ca_file ${caFile} ${read.problem}`);
    else ca = { ca_file: caFile, ca: read.pem };
  }
  return host ? { host, port, tls, ...ca } : undefined;
}

/** Validates parsed TOML; throws CONFIG_INVALID listing every problem. */
export function validateConfig(doc: unknown, source = "config.toml"): Config {
  const c = new Checker();
  if (!isTable(doc)) throw new MailError("CONFIG_INVALID", `${source}: not a table`);
  c.unknown(doc, ["accounts", "daemon", "cache", "events", "files"], "config");
  const files = filesSection(c, doc["files"]);
  const cache = cacheSection(c, doc["cache"]);
  const events = eventsSection(c, doc["events"]);
  const daemon: DaemonConfig = { body_limit: DEFAULT_BODY_LIMIT };
  if (doc["daemon"] !== undefined) {
    const d = doc["daemon"];
    if (!isTable(d)) c.problems.push("daemon must be a table");
    else {
      c.unknown(d, ["body_limit", "socket_group"], "daemon");
      const g = d["socket_group"];
      if (g !== undefined) {
        if (typeof g !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/.test(g))
          c.problems.push("daemon.socket_group must be the name or number of a group");
        else daemon.socket_group = g;
      }
      const bl = d["body_limit"];
      if (bl !== undefined) {
        if (typeof bl !== "number" || !Number.isInteger(bl) || bl < 100 || bl > 10_000_000) {
          c.problems.push("daemon.body_limit must be an integer from 100 to 10000000");
        } else daemon.body_limit = bl;
      }
    }
  }
  const list = doc["accounts"] ?? [];
  const accounts: AccountConfig[] = [];
  if (!Array.isArray(list)) c.problems.push("accounts must be an array of tables ([[accounts]])");
  else {
    const seen = new Set<string>();
    list.forEach((a: unknown, i) => {
      const at = `accounts[${i}]`;
      if (!isTable(a)) {
        c.problems.push(`${at} must be a table`);
        return;
      }
      c.unknown(
        a,
        [
          "name",
          "provider",
          "address",
          "display_name",
          "aliases",
          "username",
          "imap",
          "smtp",
          "archive_folder",
          "drafts_folder",
          "sent_folder",
          "trash_folder",
          "signature",
          "oauth",
          "password_command",
          "policy",
        ],
        at,
      );
      const name = c.str(a, "name", at, true);
      if (name && !ACCOUNT_NAME_RE.test(name)) {
        c.problems.push(`${at}.name must be 1-64 of A-Z a-z 0-9 . _ - and start with a letter or digit`);
      }
      if (name && seen.has(name)) c.problems.push(`${at}.name "${name}" is used by another account`);
      if (name) seen.add(name);
      const providerRaw = a["provider"] ?? "imap";
      let provider: Provider = "imap";
      if (isProvider(providerRaw)) provider = providerRaw;
      else c.problems.push(`${at}.provider must be one of ${PROVIDERS.map((p) => `"${p}"`).join(", ")}`);
      // A provider's preset fills the servers; only provider "imap" must name them.
      const preset = presetOf(provider);
      const address = c.str(a, "address", at, true);
      if (address && !/^[^@\s]+@[^@\s]+$/.test(address))
        c.problems.push(`${at}.address must be an email address`);
      // The name every From carries; one line, since it goes into a header.
      const displayName = c.str(a, "display_name", at, false);
      if (
        displayName !== undefined &&
        (/[\p{Cc}\u2028\u2029]/u.test(displayName) || displayName.length > 200)
      )
        c.problems.push(`${at}.display_name must be one line of at most 200 characters`);
      const aliases = a["aliases"];
      if (
        aliases !== undefined &&
        (!Array.isArray(aliases) || !aliases.every((x) => typeof x === "string" && parseMailbox(x)))
      )
        c.problems.push(`${at}.aliases must be an array of email addresses`);
      const username = c.str(a, "username", at, false) ?? address;
      // It goes into a login command and into the XOAUTH2 string, whose fields \x01 separates.
      if (username !== undefined && /[\p{Cc}\u2028\u2029]/u.test(username))
        c.problems.push(`${at}.username must be one line without control characters`);
      const imapPorts = { tls: 993, starttls: 143 };
      const smtpPorts = { tls: 465, starttls: 587 };
      const imap =
        a["imap"] === undefined && preset
          ? { ...preset.imap }
          : server(c, a["imap"], `${at}.imap`, imapPorts, preset?.imap);
      const smtp =
        a["smtp"] === undefined
          ? preset && { ...preset.smtp }
          : server(c, a["smtp"], `${at}.smtp`, smtpPorts, preset?.smtp);
      const archive = c.str(a, "archive_folder", at, false) ?? preset?.folders?.archive;
      const drafts = c.str(a, "drafts_folder", at, false) ?? preset?.folders?.drafts;
      const sent = c.str(a, "sent_folder", at, false) ?? preset?.folders?.sent;
      const trash = c.str(a, "trash_folder", at, false) ?? preset?.folders?.trash;
      const signature = a["signature"];
      if (signature !== undefined && typeof signature !== "string")
        c.problems.push(`${at}.signature must be a string`);
      const oauth =
        a["oauth"] === undefined ? undefined : oauthSection(c, a["oauth"], `${at}.oauth`, provider);
      if (oauth) {
        // A bearer token is as good as a password for as long as it lives: never in clear text on a network.
        for (const [kind, s] of [
          ["imap", imap],
          ["smtp", smtp],
        ] as const)
          if (s && s.tls === "none" && !isLoopbackHost(s.host))
            c.problems.push(
              `${at}.${kind}.tls = "none" sends the OAuth2 token without TLS: allowed only to a loopback host`,
            );
      }
      const passwordCommand = commandSetting(c, a["password_command"], `${at}.password_command`);
      if (passwordCommand && a["oauth"] !== undefined)
        c.problems.push(
          `${at}.password_command cannot be used with [accounts.oauth] (its refresh token is kept in the secrets dir)`,
        );
      const policy: Policy = { allow_expunge: false, allow_delete_folder: false, hold_approval: "owner" };
      if (a["policy"] !== undefined) {
        const p = a["policy"];
        if (!isTable(p)) c.problems.push(`${at}.policy must be a table`);
        else {
          c.unknown(
            p,
            [
              "allow_expunge",
              "allow_delete_folder",
              "allowed_recipients",
              "max_recipients",
              "max_attachment_bytes",
              "hold_approval",
            ],
            `${at}.policy`,
          );
          policy.allow_expunge = c.bool(p, "allow_expunge", `${at}.policy`);
          policy.allow_delete_folder = c.bool(p, "allow_delete_folder", `${at}.policy`);
          sendPolicy(c, p, `${at}.policy`, policy);
        }
      }
      if (name && address && username && imap) {
        accounts.push({
          name,
          provider,
          address,
          ...(displayName ? { display_name: displayName } : {}),
          ...(Array.isArray(aliases) ? { aliases: aliases as string[] } : {}),
          username,
          imap,
          smtp,
          archive_folder: archive,
          drafts_folder: drafts,
          sent_folder: sent,
          trash_folder: trash,
          signature: typeof signature === "string" ? signature : undefined,
          ...(oauth ? { oauth } : {}),
          ...(passwordCommand ? { password_command: passwordCommand } : {}),
          policy,
        });
      }
    });
  }
  if (c.problems.length > 0) {
    throw new MailError("CONFIG_INVALID", `${source}: ${c.problems.join("; ")}`);
  }
  return { accounts, daemon, cache, events, files };
}
