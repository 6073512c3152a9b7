import { type ParseArgsOptionsConfig, parseServerArgs, type ServerArgs } from "@mcpforge/toolkit";
import { checkRestriction } from "./domain/access.js";
import { DexiError } from "./domain/errors.js";
import { NOTES_SCOPES } from "./domain/limits.js";
import { canonicalTimeZone } from "./domain/time.js";
import { defaultDbPath } from "./store/db.js";

/** The identity and grant a stdio (or static-token HTTP) connection runs with. */
export interface Identity {
  user: string;
  scopes: string[];
  folder?: string;
  tag?: string;
}

export interface McpConfig extends Identity {
  db: string;
  demo: boolean;
  /** The zone for `period` of users who set none (`dexi settings --time-zone`); default this machine's. */
  timeZone?: string;
  /** The origin clients reach an OAuth `--http` server at (behind a TLS proxy): its issuer. */
  publicUrl?: string;
  trustProxy?: boolean;
}

export const DEFAULT_USER = "local";

/** dexi-mcp's own flags, beside the kit's COMMON_OPTIONS. */
export const MCP_OPTIONS = {
  db: { type: "string" },
  user: { type: "string" },
  scopes: { type: "string" },
  folder: { type: "string" },
  tag: { type: "string" },
  "time-zone": { type: "string" },
  demo: { type: "boolean" },
  "public-url": { type: "string" },
  "trust-proxy": { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

/**
 * The kit's `parseServerArgs`, with parseArgs' two commonest complaints in Dexi's words (`unknown flag
 * --x; see --help`, `--x needs a value`), which both bins have always printed.
 */
export function dexiArgs<const O extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: O,
  config: { allowPositionals?: boolean } = {},
): ServerArgs<O> {
  try {
    return parseServerArgs(argv, options, config);
  } catch (err) {
    const { code, message } = err as { code?: string; message: string };
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const flag = /'([^']+)'/.exec(message)?.[1] ?? message;
      throw new Error(`unknown flag ${flag}; see --help`);
    }
    const missing = /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(message);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && missing)
      throw new Error(`${missing[1]} needs a value`);
    throw err;
  }
}

/** A comma-separated scope list; an empty one grants nothing (it never falls back to the default). */
const scopeList = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

type McpValues = ServerArgs<typeof MCP_OPTIONS>["values"];

/**
 * dexi-mcp's configuration from its flags, each over its env var: DEXI_DB, DEXI_USER, DEXI_SCOPES,
 * DEXI_FOLDER, DEXI_TAG, DEXI_TIME_ZONE. The restriction and the zone are checked here, before any
 * database is opened.
 */
export function mcpConfig(values: McpValues, env: NodeJS.ProcessEnv = process.env): McpConfig {
  const given = (name: keyof McpValues, envName: string): string | undefined => {
    const v = values[name];
    if (typeof v === "string") {
      if (v === "") throw new Error(`--${name} needs a value`);
      return v;
    }
    return env[envName] || undefined;
  };
  // An explicit empty list (`--scopes ""`, `--scopes=`, DEXI_SCOPES="") is a grant of nothing.
  const scopes = scopeList(values.scopes ?? env["DEXI_SCOPES"] ?? NOTES_SCOPES.join(","));
  for (const s of scopes) {
    if (!(NOTES_SCOPES as readonly string[]).includes(s))
      throw new Error(`unknown scope "${s}": use ${NOTES_SCOPES.join(" and/or ")}`);
  }
  const demo = values.demo === true;
  const cfg: McpConfig = {
    db: given("db", "DEXI_DB") ?? (demo ? defaultDbPath().replace(/dexi\.db$/, "demo.db") : defaultDbPath()),
    demo,
    user: given("user", "DEXI_USER") ?? DEFAULT_USER,
    scopes,
  };
  const timeZone = given("time-zone", "DEXI_TIME_ZONE");
  if (timeZone !== undefined) {
    const zone = canonicalTimeZone(timeZone);
    if (!zone) throw new Error(`unknown time zone "${timeZone}" (use an IANA name such as Europe/Berlin)`);
    cfg.timeZone = zone;
  }
  const publicUrl = given("public-url", "DEXI_PUBLIC_URL");
  if (publicUrl !== undefined) cfg.publicUrl = checkPublicUrl(publicUrl);
  if (values["trust-proxy"] === true) cfg.trustProxy = true;
  const folder = given("folder", "DEXI_FOLDER");
  const tag = given("tag", "DEXI_TAG");
  Object.assign(
    cfg,
    checkRestriction({
      ...(folder !== undefined ? { folder } : {}),
      ...(tag !== undefined ? { tag } : {}),
    }),
  );
  return cfg;
}

/** dexi-mcp's configuration from argv and env (the kit's common flags are read and set aside). */
export function parseMcpFlags(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): McpConfig {
  return mcpConfig(dexiArgs(argv, MCP_OPTIONS).values, env);
}

/**
 * An issuer origin: https, or http only on a loopback host (OAuth 2.1 allows nothing else), with no
 * path, query or fragment (the well-known metadata paths hang off the origin).
 */
export function checkPublicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--public-url takes a URL such as https://notes.example.org; got "${text}"`);
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback))
    throw new Error(`--public-url must be https (or http on 127.0.0.1/localhost); got "${text}"`);
  if (url.pathname !== "/" || url.search || url.hash || url.username)
    throw new Error(`--public-url is an origin only (no path, query or fragment); got "${text}"`);
  return url.origin;
}

/**
 * DEXI_HNSW_THRESHOLD: on PostgreSQL with pgvector, a model holding at least this many vectors gets
 * an HNSW index and is searched through it (approximate); unset, every search is exact. A count of
 * vectors, a whole number from 0.
 */
export function hnswThreshold(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return wholeNumberEnv(env, "DEXI_HNSW_THRESHOLD", 12, "a number of vectors");
}

/**
 * DEXI_HNSW_BUILD_MEMORY: on PostgreSQL with pgvector, the most maintenance_work_mem (in MB) an HNSW
 * index build is given; each build asks for what its graph needs, never less than the server's own
 * setting. 0 leaves the server's setting alone; unset, 1024.
 */
export function hnswBuildMemoryMb(env: NodeJS.ProcessEnv = process.env): number | undefined {
  return wholeNumberEnv(env, "DEXI_HNSW_BUILD_MEMORY", 7, "a size in MB");
}

/** A whole number from 0 (at most `digits` digits) in env var `name`, or undefined when unset or blank. */
function wholeNumberEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  digits: number,
  what: string,
): number | undefined {
  const text = env[name]?.trim();
  if (!text) return undefined;
  // redos-ok: anchored digits of a fixed count
  if (!new RegExp(`^\\d{1,${digits}}$`).test(text))
    throw new DexiError("INVALID_ARGUMENT", `${name} takes ${what} (a whole number from 0); got "${text}"`);
  return Number(text);
}
