/**
 * `accounts probe`: finds the IMAP and SMTP settings of an address, and says where each came from.
 *
 * Order of trust: the built-in presets by the address's domain (no network: answers offline), then,
 * looked up together under one short deadline, the domain's MX records (a custom domain hosted by
 * Google or Microsoft gets that preset), its DNS SRV records (RFC 6186, preferring the implicit-TLS
 * services of RFC 8314), its own autoconfig documents (https only: a document over plain http could be
 * forged on the way and would send the password elsewhere), and Mozilla's ISPDB. Every look-up is
 * reported with its outcome, so an offline run says which ones failed.
 *
 * It runs in the CLI process, not the daemon: it needs no account, no secret and no state, and a user
 * probes before any daemon or config exists. The module knows nothing of the CLI.
 */
import { Resolver } from "node:dns/promises";
import { domainToASCII } from "node:url";
import { XMLParser } from "fast-xml-parser";
import { parseAddress } from "../compose/addresses.js";
import type { ServerConfig, TlsMode } from "../config.js";
import { MailError } from "../errors.js";
import { type Provider, type ProviderPreset, PRESETS, presetForDomain, presetForMx } from "./presets.js";

export type ProbeSource = "preset" | "mx" | "srv" | "autoconfig" | "well-known" | "ispdb";

export interface ProbedServer extends ServerConfig {
  /** Where this server's settings come from. */
  source: ProbeSource;
}

/** One look-up and its outcome: found settings, found nothing, or could not ask (offline, timeout). */
export interface ProbeStep {
  source: ProbeSource;
  /** What was asked: the domain, the DNS name or the URL. */
  query: string;
  status: "found" | "none" | "failed" | "skipped";
  /** Why it failed or found nothing usable (an error code, an HTTP status). */
  detail?: string;
  provider?: Provider;
  imap?: ServerConfig;
  smtp?: ServerConfig;
  username?: string;
}

export interface ProbeResult {
  address: string;
  domain: string;
  /** The `provider` for config.toml: a preset's name, or "imap" for settings found elsewhere. */
  provider: Provider;
  imap: ProbedServer | null;
  smtp: ProbedServer | null;
  /** The login name, when a source says it is not the address. */
  username: string;
  /** What a password login needs at a preset provider (an app password, OAuth2). */
  note?: string;
  steps: ProbeStep[];
}

export interface ProbeOptions {
  /** DNS servers (`IP` or `IP:PORT`); default: the system's. */
  dnsServers?: string[];
  /**
   * Where the https look-ups go instead of the internet: every URL `https://HOST/PATH` is asked as
   * `BASE/HOST/PATH` (tests and local proxies). Unset: the real URLs.
   */
  httpBase?: string;
  /** The whole probe's deadline in ms; each look-up gets what remains. Default 4000. */
  timeoutMs?: number;
  /** false: presets only, no look-up leaves the machine. */
  network?: boolean;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 4000;
/** An autoconfig document larger than this is not one. */
const MAX_XML_BYTES = 256 * 1024;
const HOSTNAME =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export async function probeAddress(raw: string, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const address = parseAddress(raw, "ADDRESS").address;
  const domain = asciiDomain(address.slice(address.lastIndexOf("@") + 1));
  const steps: ProbeStep[] = [];

  const known = presetForDomain(domain);
  steps.push(
    known
      ? { source: "preset", query: domain, status: "found", provider: known.provider, ...servers(known) }
      : { source: "preset", query: domain, status: "none" },
  );
  if (known) return fromPreset(address, domain, known, steps);
  if (opts.network === false) {
    for (const source of ["mx", "srv", "autoconfig", "well-known", "ispdb"] as const)
      steps.push({ source, query: domain, status: "skipped", detail: "network look-ups off" });
    return assemble(address, domain, steps);
  }

  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
  const resolver = new Resolver({
    timeout: Math.max(200, Math.floor((deadline - Date.now()) / 2)),
    tries: 1,
  });
  if (opts.dnsServers?.length) {
    try {
      resolver.setServers(opts.dnsServers);
    } catch {
      throw new MailError(
        "INVALID_ARGUMENT",
        "a DNS server is not an IP address with an optional port",
        "Give --dns as 192.0.2.53 or 192.0.2.53:5353.",
      );
    }
  }
  const http = (url: string) => (opts.httpBase ? rebase(url, opts.httpBase) : url);
  const local = address.slice(0, address.lastIndexOf("@"));

  const found = await Promise.all([
    mxStep(resolver, domain, deadline),
    srvStep(resolver, domain, deadline),
    autoconfigStep(
      "autoconfig",
      `https://autoconfig.${domain}/mail/config-v1.1.xml`,
      http,
      deadline,
      local,
      domain,
    ),
    autoconfigStep(
      "well-known",
      `https://${domain}/.well-known/autoconfig/mail/config-v1.1.xml`,
      http,
      deadline,
      local,
      domain,
    ),
    autoconfigStep(
      "ispdb",
      `https://autoconfig.thunderbird.net/v1.1/${domain}`,
      http,
      deadline,
      local,
      domain,
    ),
  ]);
  // A query still out at the deadline would keep the process alive until the resolver gives up.
  resolver.cancel();
  steps.push(...found);
  const mx = found[0];
  if (mx.status === "found" && mx.provider && mx.provider !== "imap")
    return fromPreset(address, domain, PRESETS[mx.provider], steps);
  return assemble(address, domain, steps);
}

function asciiDomain(domain: string): string {
  const ascii = domainToASCII(domain.toLowerCase().replace(/\.$/, ""));
  if (!ascii || !HOSTNAME.test(ascii))
    throw new MailError(
      "INVALID_ARGUMENT",
      "ADDRESS has no valid domain",
      "Give an address such as me@example.org.",
    );
  return ascii;
}

const servers = (p: ProviderPreset) => ({ imap: { ...p.imap }, smtp: { ...p.smtp } });

function fromPreset(address: string, domain: string, p: ProviderPreset, steps: ProbeStep[]): ProbeResult {
  const source: ProbeSource = steps.some((s) => s.source === "preset" && s.status === "found")
    ? "preset"
    : "mx";
  return {
    address,
    domain,
    provider: p.provider,
    imap: { ...p.imap, source },
    smtp: { ...p.smtp, source },
    username: address,
    note: p.password_note,
    steps,
  };
}

/** Each server from the first source, in the order of trust, that names one. */
function assemble(address: string, domain: string, steps: ProbeStep[]): ProbeResult {
  const first = (key: "imap" | "smtp"): ProbedServer | null => {
    const s = steps.find((x) => x.status === "found" && x[key]);
    return s?.[key] ? { ...s[key], source: s.source } : null;
  };
  const imap = first("imap");
  const smtp = first("smtp");
  // A source that names the provider's own servers (an autoconfig pointing at imap.gmail.com) is that provider.
  const preset = Object.values(PRESETS).find((p) => imap && p.imap.host === imap.host.toLowerCase());
  const username = steps.find((x) => x.status === "found" && x.imap && x.source === imap?.source)?.username;
  return {
    address,
    domain,
    provider: preset?.provider ?? "imap",
    imap,
    smtp,
    username: username ?? address,
    ...(preset ? { note: preset.password_note } : {}),
    steps,
  };
}

function remaining(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}

/** Races a look-up against the deadline (the resolver's own timeout is per try, not per probe). */
async function within<T>(deadline: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error("timed out"), { code: "ETIMEOUT" })),
      remaining(deadline),
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** DNS answers that mean "no such records" rather than "could not ask". */
const NO_RECORDS = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN"]);

function dnsFailure(source: ProbeSource, query: string, err: unknown): ProbeStep {
  const code = (err as { code?: string }).code ?? "ERROR";
  return NO_RECORDS.has(code)
    ? { source, query, status: "none", detail: code }
    : { source, query, status: "failed", detail: code };
}

async function mxStep(resolver: Resolver, domain: string, deadline: number): Promise<ProbeStep> {
  try {
    const mx = (await within(deadline, resolver.resolveMx(domain))).sort((a, b) => a.priority - b.priority);
    const hosted = mx.map((m) => presetForMx(m.exchange)).find((p) => p !== undefined);
    if (!hosted)
      return {
        source: "mx",
        query: domain,
        status: "none",
        // Only well-formed names are repeated: the detail is printed to a terminal.
        detail: mx.length
          ? `MX ${mx.map((m) => (HOSTNAME.test(m.exchange) ? m.exchange : "(malformed)")).join(", ")}: no known provider`
          : "no MX records",
      };
    return { source: "mx", query: domain, status: "found", provider: hosted.provider, ...servers(hosted) };
  } catch (err) {
    return dnsFailure("mx", domain, err);
  }
}

/**
 * RFC 6186 section 3: the SRV record of the lowest priority (then highest weight) names the server; a
 * target of "." says the service is not offered. RFC 8314 section 5.1: implicit TLS (_imaps,
 * _submissions) is preferred to STARTTLS (_imap, _submission).
 */
async function srvStep(resolver: Resolver, domain: string, deadline: number): Promise<ProbeStep> {
  const names = {
    imaps: `_imaps._tcp.${domain}`,
    imap: `_imap._tcp.${domain}`,
    submissions: `_submissions._tcp.${domain}`,
    submission: `_submission._tcp.${domain}`,
  };
  const ask = async (name: string): Promise<{ host: string; port: number } | null | Error> => {
    try {
      const recs = (await within(deadline, resolver.resolveSrv(name))).sort(
        (a, b) => a.priority - b.priority || b.weight - a.weight,
      );
      const best = recs[0];
      if (!best || best.name === "" || best.name === "." || best.port === 0) return null;
      const host = best.name.replace(/\.$/, "");
      return HOSTNAME.test(host) ? { host, port: best.port } : null;
    } catch (err) {
      const code = (err as { code?: string }).code ?? "ERROR";
      return NO_RECORDS.has(code) ? null : Object.assign(new Error(code), { code });
    }
  };
  const [imaps, imap, subs, sub] = await Promise.all([
    ask(names.imaps),
    ask(names.imap),
    ask(names.submissions),
    ask(names.submission),
  ]);
  const pick = (tls: typeof imaps, starttls: typeof imaps): ServerConfig | undefined => {
    if (tls && !(tls instanceof Error)) return { ...tls, tls: "tls" };
    if (starttls && !(starttls instanceof Error)) return { ...starttls, tls: "starttls" };
    return undefined;
  };
  const query = `_imaps/_imap/_submissions/_submission._tcp.${domain}`;
  const failed = [imaps, imap, subs, sub].find((x) => x instanceof Error) as
    | (Error & { code: string })
    | undefined;
  const i = pick(imaps, imap);
  const s = pick(subs, sub);
  if (!i && !s)
    return failed
      ? { source: "srv", query, status: "failed", detail: failed.code }
      : { source: "srv", query, status: "none", detail: "no SRV records" };
  return { source: "srv", query, status: "found", ...(i ? { imap: i } : {}), ...(s ? { smtp: s } : {}) };
}

function rebase(url: string, base: string): string {
  const u = new URL(url);
  return `${base.replace(/\/$/, "")}/${u.host}${u.pathname}${u.search}`;
}

async function autoconfigStep(
  source: ProbeSource,
  url: string,
  http: (url: string) => string,
  deadline: number,
  local: string,
  domain: string,
): Promise<ProbeStep> {
  let text: string;
  try {
    const asked = http(url);
    const res = await fetch(asked, {
      signal: AbortSignal.timeout(Math.max(1, remaining(deadline))),
      redirect: "follow",
    });
    // A redirect from https to plain http would let anyone on the way rewrite the servers.
    if (new URL(res.url || asked).protocol !== new URL(asked).protocol)
      return { source, query: url, status: "failed", detail: "redirected off https" };
    if (res.status === 404) return { source, query: url, status: "none", detail: "HTTP 404" };
    if (!res.ok) return { source, query: url, status: "failed", detail: `HTTP ${res.status}` };
    const body = await readCapped(res, MAX_XML_BYTES);
    if (body === null) return { source, query: url, status: "failed", detail: "document too large" };
    text = body.toString("utf8");
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    const detail =
      e.name === "TimeoutError" || e.name === "AbortError" ? "ETIMEOUT" : (e.cause?.code ?? "fetch failed");
    return { source, query: url, status: "failed", detail };
  }
  const found = readClientConfig(text, local, domain);
  if (!found)
    return { source, query: url, status: "none", detail: "no IMAP or SMTP server with TLS in the document" };
  return { source, query: url, status: "found", ...found };
}

/**
 * A response's body, or null once it passes `max` bytes: what comes after is not read (the
 * request is cancelled), so a server that sends without end costs `max` bytes of memory, not all
 * it can send before the deadline.
 */
async function readCapped(res: Response, max: number): Promise<Buffer | null> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel();
    return null;
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  // Values stay strings: a host name of digits is still a name, and ports are checked below.
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  isArray: (name) => ["emailProvider", "incomingServer", "outgoingServer"].includes(name),
});

type XmlServer = Record<string, unknown>;

/**
 * The IMAP and SMTP servers of a Thunderbird autoconfig document (clientConfig version 1.1, the format
 * of autoconfig.DOMAIN, .well-known/autoconfig and the ISPDB): the first with SSL, else STARTTLS; a
 * server without TLS is skipped (the password would cross the network in the clear).
 */
export function readClientConfig(
  xml: string,
  local: string,
  domain: string,
): Pick<ProbeStep, "imap" | "smtp" | "username"> | null {
  let doc: unknown;
  try {
    doc = parser.parse(xml);
  } catch {
    return null;
  }
  const provider = (doc as { clientConfig?: { emailProvider?: unknown[] } })?.clientConfig
    ?.emailProvider?.[0];
  if (!provider || typeof provider !== "object") return null;
  const p = provider as { incomingServer?: XmlServer[]; outgoingServer?: XmlServer[] };
  const fill = (v: string) =>
    v
      .replaceAll("%EMAILADDRESS%", `${local}@${domain}`)
      .replaceAll("%EMAILLOCALPART%", local)
      .replaceAll("%EMAILDOMAIN%", domain);
  const choose = (list: XmlServer[] | undefined, type: string) => {
    const ok = (list ?? [])
      .filter((s) => s["@_type"] === type)
      .map((s) => {
        const host = typeof s["hostname"] === "string" ? fill(s["hostname"].trim()).toLowerCase() : "";
        const port =
          typeof s["port"] === "string" && /^\d{1,5}$/.test(s["port"].trim()) ? Number(s["port"]) : 0;
        const socket = typeof s["socketType"] === "string" ? s["socketType"].trim().toUpperCase() : "";
        const tls: TlsMode | undefined =
          socket === "SSL" ? "tls" : socket === "STARTTLS" ? "starttls" : undefined;
        const user = typeof s["username"] === "string" ? fill(s["username"].trim()) : undefined;
        return HOSTNAME.test(host) && port >= 1 && port <= 65535 && tls
          ? { host, port, tls, user }
          : undefined;
      })
      .filter((s) => s !== undefined);
    return ok.find((s) => s.tls === "tls") ?? ok[0];
  };
  const imap = choose(p.incomingServer, "imap");
  const smtp = choose(p.outgoingServer, "smtp");
  if (!imap && !smtp) return null;
  return {
    ...(imap ? { imap: { host: imap.host, port: imap.port, tls: imap.tls } } : {}),
    ...(smtp ? { smtp: { host: smtp.host, port: smtp.port, tls: smtp.tls } } : {}),
    ...(imap?.user && !imap.user.includes("%") ? { username: imap.user } : {}),
  };
}
