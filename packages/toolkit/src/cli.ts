import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";

/** The `options` of a node:util parseArgs call. */
export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;
import type { AnyTool, Caller } from "./define.js";
import type { AnyKit } from "./server.js";
import { serveStdio } from "./stdio.js";
import {
  FlagError,
  OUTPUT_SCHEMAS_ENV,
  outputSchemasOf,
  READ_ONLY_ENV,
  selectionFilter,
  selectionOf,
  splitGroups,
  TOOLS_ENV,
  toolGroupsText,
} from "./toolsets.js";
import {
  type HttpHandle,
  type HttpOptions,
  serveHttp,
  staticTokenVerifier,
  type TokenVerifier,
} from "./transports.js";

export interface HttpAddress {
  host: string;
  port: number;
}

/** Parses `--http` values: `8080`, `127.0.0.1:8080`, `[::1]:8080`. */
export function parseHttpAddress(value: string): HttpAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value) ?? /^()()(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--http takes [host:]port, such as 8080 or 127.0.0.1:8080; got "${value}"`);
  }
  return { host: m[1] || m[2] || "127.0.0.1", port };
}

export interface CommonFlags {
  http?: HttpAddress;
  /**
   * The bearer token for --http, read from --token-file (runServer falls back to MCP_HTTP_TOKEN,
   * then generates one). Never from argv: `--token` is refused.
   */
  token?: string;
  /** --tools: the groups to serve, as given, or `list` (print them and exit). */
  tools?: string[] | "list";
  /** --read-only: serve only the tools whose readOnlyHint is true. */
  readOnly?: boolean;
  /** --output-schemas: tools/list carries each tool's outputSchema (left out by default). */
  outputSchemas?: boolean;
  /** --session-idle-minutes: a 2025-era HTTP session unused this long is closed. */
  sessionIdleMinutes?: number;
  /** --max-sessions: at most this many live 2025-era HTTP sessions. */
  maxSessions?: number;
  /** --max-sessions-per-user: at most this many live 2025-era HTTP sessions of one user. */
  maxSessionsPerUser?: number;
  help: boolean;
  version: boolean;
  /** Everything the kit did not recognise, in order, for the server's own flags. */
  rest: string[];
}

/** The flags every kit server takes, in `node:util` parseArgs form, for a bin to extend with its own. */
export const COMMON_OPTIONS = {
  http: { type: "string" },
  "token-file": { type: "string" },
  tools: { type: "string" },
  "read-only": { type: "boolean" },
  "output-schemas": { type: "boolean" },
  "session-idle-minutes": { type: "string" },
  "max-sessions": { type: "string" },
  "max-sessions-per-user": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const satisfies ParseArgsOptionsConfig;

/** The values parseArgs reads for a bin's own `options`. */
export type OwnValues<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: boolean }>
>["values"];

export interface ServerArgs<O extends ParseArgsOptionsConfig> {
  flags: CommonFlags;
  values: OwnValues<O>;
  positionals: string[];
}

/**
 * Parses a server bin's argv with `node:util` parseArgs: the kit's common flags plus the bin's own
 * `options`. Strict: an unknown flag or a missing value throws with parseArgs' one-line message.
 * Returns the common flags read (as `runServer` takes them), the bin's own values and positionals.
 */
export function parseServerArgs<const O extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: O,
  config: { allowPositionals?: boolean } = {},
): ServerArgs<O> {
  // Before parseArgs, so `--token` with its value missing is refused for what it is, too.
  for (const arg of argv) {
    if (arg === "--") break;
    if (arg === "--token" || arg.startsWith("--token=")) throw new FlagError(TOKEN_IN_ARGV);
  }
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { ...COMMON_OPTIONS, ...options },
    strict: true,
    allowPositionals: config.allowPositionals ?? false,
  });
  const common = values as { [K in keyof typeof COMMON_OPTIONS]?: string | boolean };
  const flags: CommonFlags = { help: common.help === true, version: common.version === true, rest: [] };
  if (typeof common.http === "string") flags.http = parseHttpAddress(common.http);
  if (typeof common["token-file"] === "string") flags.token = readTokenFile(common["token-file"]);
  if (typeof common.tools === "string") flags.tools = splitGroups(common.tools);
  if (common["read-only"] === true) flags.readOnly = true;
  if (common["output-schemas"] === true) flags.outputSchemas = true;
  if (typeof common["session-idle-minutes"] === "string")
    flags.sessionIdleMinutes = positive("--session-idle-minutes", common["session-idle-minutes"]);
  if (typeof common["max-sessions"] === "string")
    flags.maxSessions = Math.floor(positive("--max-sessions", common["max-sessions"]));
  if (typeof common["max-sessions-per-user"] === "string")
    flags.maxSessionsPerUser = Math.floor(
      positive("--max-sessions-per-user", common["max-sessions-per-user"]),
    );
  return { flags, values: values as OwnValues<O>, positionals };
}

/**
 * Takes the flags every kit server shares out of argv and leaves the rest to the server.
 * @deprecated Bins parse with `parseServerArgs`, which knows every flag and refuses unknown ones.
 */
export function parseCommonFlags(argv: readonly string[]): CommonFlags {
  const flags: CommonFlags = { help: false, version: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] =
      arg.startsWith("--") && arg.includes("=") ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new Error(`${name} needs a value`);
      return next;
    };
    if (name === "--http") flags.http = parseHttpAddress(value());
    else if (name === "--token") throw new FlagError(TOKEN_IN_ARGV);
    else if (name === "--token-file") flags.token = readTokenFile(value());
    else if (name === "--tools") flags.tools = splitGroups(value());
    else if (name === "--read-only") flags.readOnly = true;
    else if (name === "--output-schemas") flags.outputSchemas = true;
    else if (name === "--session-idle-minutes") flags.sessionIdleMinutes = positive(name, value());
    else if (name === "--max-sessions") flags.maxSessions = Math.floor(positive(name, value()));
    else if (name === "--max-sessions-per-user")
      flags.maxSessionsPerUser = Math.floor(positive(name, value()));
    else if (name === "--help" || name === "-h") flags.help = true;
    else if (name === "--version" || name === "-v") flags.version = true;
    else flags.rest.push(arg);
  }
  return flags;
}

/** Why `--token` is refused, and what to use instead. */
export const TOKEN_IN_ARGV =
  "--token is refused: a token on the command line is visible to every local user (ps, /proc). " +
  "Pass it in the environment (MCP_HTTP_TOKEN) or in a file only you can read (--token-file PATH, chmod 600)";

/**
 * The bearer token in a `--token-file`: its first line, trailing whitespace trimmed. Refuses a file
 * other users can read or write (the token would be as public as in argv), a file that is not a
 * regular file, and an empty token.
 */
export function readTokenFile(path: string): string {
  let fd: number;
  try {
    // Non-blocking, so a FIFO planted at the path is refused below instead of hanging the start.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new FlagError(`--token-file ${path} cannot be read: ${(err as Error).message}`);
  }
  try {
    // Checked on the open file, so the file judged is the file read.
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new FlagError(`--token-file ${path} is not a regular file`);
    if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, "0");
      throw new FlagError(
        `--token-file ${path} is open to other users (mode ${mode}); make it yours alone: chmod 600 ${path}`,
      );
    }
    const token = (readFileSync(fd, "utf8").split("\n", 1)[0] ?? "").trimEnd();
    if (token === "")
      throw new FlagError(`--token-file ${path} is empty; its first line is the bearer token`);
    return token;
  } finally {
    closeSync(fd);
  }
}

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} takes a positive number; got "${text}"`);
  return n;
}

export const COMMON_FLAGS_HELP = `  --http [HOST:]PORT  serve Streamable HTTP on HOST (default 127.0.0.1) instead of stdio; both protocol
                      eras on one endpoint (2026-07-28 statelessly, 2025 clients in sessions)
  --token-file PATH   read the bearer token HTTP clients must send from PATH's first line (a file only
                      you can read: chmod 600); default $MCP_HTTP_TOKEN, else generated and printed
                      (--token is refused: argv is visible to every local user)
  --tools GROUP,...   serve only these tool groups (default $${TOOLS_ENV}, else all); --tools list
                      prints the groups with their tools and exits
  --read-only         serve only the read-only tools (also ${READ_ONLY_ENV}=1)
  --output-schemas    list each tool's output schema in tools/list (also ${OUTPUT_SCHEMAS_ENV}=1); left
                      out by default: clients only validate results with them (every result still
                      carries structuredContent; the reference pages document its shape)
  --session-idle-minutes N  close a 2025-era HTTP session unused for N minutes (default 30)
  --max-sessions N    refuse new 2025-era HTTP sessions (503) past N live ones (default 1000)
  --max-sessions-per-user N  keep at most N live 2025-era HTTP sessions of one token user: a new
                      one closes that user's least recently used idle one (429 if none is idle)
                      (default 32)
  --help, --version`;

export interface RunOptions {
  flags: CommonFlags;
  /** Who a stdio client is, and the scopes a static HTTP token grants. */
  caller: Caller;
  /** Replaces the static-token verifier, e.g. with OAuth. */
  verifier?: TokenVerifier;
  /** More for the HTTP endpoint: extra routes (e.g. an OAuth server's), step-up, metadata, hosts. */
  http?: Pick<HttpOptions, "routes" | "scopeChallenge" | "resourceMetadataUrl" | "allowedHosts">;
  /** Runs when the stdio client hangs up, before the process exits (close databases, sockets). */
  onClose?: () => void | Promise<void>;
  log?: (line: string) => void;
}

/** Serves the kit server on stdio, or on HTTP when --http was given. Logs only to stderr. */
export async function runServer(kit: AnyKit, options: RunOptions): Promise<HttpHandle | undefined> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { flags } = options;
  const selection = selectionOf(flags, process.env);
  const outputSchemas = outputSchemasOf(flags, process.env);
  if (flags.tools === "list") {
    await printToolGroups(kit);
    await kit.close().catch(() => undefined);
    await options.onClose?.();
    process.exit(0);
  }
  if (selection.groups || selection.readOnly)
    kit.restrictTools(selectionFilter(kit.declarations(), selection));
  kit.listOutputSchemas(outputSchemas);
  if (!flags.http) {
    await serveStdio(kit, options.caller);
    // A stdio server lives as long as its client: when stdin ends, close and exit, even if a
    // database handle or a socket would keep the event loop alive.
    const hangUp = async () => {
      await kit.close().catch(() => undefined);
      await options.onClose?.();
      process.exit(0);
    };
    process.stdin.once("end", () => void hangUp());
    return undefined;
  }
  let verifier = options.verifier;
  if (!verifier) {
    // An empty MCP_HTTP_TOKEN is no token (it would let an empty bearer in).
    const given = flags.token || process.env["MCP_HTTP_TOKEN"] || undefined;
    const token = given ?? randomBytes(24).toString("base64url");
    if (!given) log(`Bearer token for this run: ${token}`);
    verifier = staticTokenVerifier(token, options.caller.scopes, options.caller.clientId);
  }
  const handle = await serveHttp(kit, {
    host: flags.http.host,
    port: flags.http.port,
    verifier,
    log,
    ...options.http,
    legacySessions: {
      ...(flags.sessionIdleMinutes ? { idleMs: flags.sessionIdleMinutes * 60_000 } : {}),
      ...(flags.maxSessions ? { maxSessions: flags.maxSessions } : {}),
      ...(flags.maxSessionsPerUser ? { maxSessionsPerUser: flags.maxSessionsPerUser } : {}),
    },
  });
  log(`${kit.name} ${kit.version} listening on ${handle.url}`);
  const stop = () => void handle.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return handle;
}

/**
 * Writes what `--tools list` prints for a server's tools (a kit, or its declarations, for a bin that
 * answers before it opens anything) to stdout; resolves once it is written.
 */
export function printToolGroups(tools: AnyKit | readonly AnyTool[]): Promise<void> {
  const text = toolGroupsText("declarations" in tools ? tools.declarations() : tools);
  return new Promise((resolve, reject) =>
    process.stdout.write(text, (err) => (err ? reject(err) : resolve())),
  );
}
