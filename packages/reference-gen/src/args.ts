/** Command-line parsing for `mcp-reference-gen`; kept apart from the bin so tests can call it. */
import { parseArgs as nodeParseArgs } from "node:util";

export interface CliOptions {
  server?: string;
  url?: string;
  headers: Record<string, string>;
  out?: string;
  basePath?: string;
  jsonUrl?: string;
  check: boolean;
  timeoutMs: number;
  help: boolean;
  version: boolean;
}

export class UsageError extends Error {}

export const HELP = `mcp-reference-gen: writes reference pages for an MCP server's tools, read from its tools/list

Usage:
  mcp-reference-gen --server "<command line>" --out DIR [options]
  mcp-reference-gen --url http://127.0.0.1:PORT/mcp [--header "Name: value"]... --out DIR [options]

  --server CMD        start this command and talk to it over stdio (quotes and \\ escapes as in a shell;
                      no shell runs it: no pipes, variables or globs)
  --url URL           connect to a Streamable HTTP server instead
  --header "N: V"     an HTTP header for --url, such as "Authorization: Bearer TOKEN" (repeatable)
  --out DIR           where the pages go (created if missing)
  --base-path PATH    the docs URL the pages are served under, such as /docs/notes/reference
  --json-url URL      where pages link mcp-tools.json (default <base-path>/mcp-tools.json)
  --check             write nothing; exit 1 naming every stale, missing or extra file
  --timeout MS        give up on the server after this long (default 30000)
  --help, --version

Writes <tool>.mdx per tool, index.mdx, meta.json and mcp-tools.json. Exit codes: 0 done (or fresh),
1 --check found differences, 2 the server could not be read or the arguments are wrong.
`;

const OPTIONS = {
  server: { type: "string" },
  url: { type: "string" },
  header: { type: "string", multiple: true },
  out: { type: "string" },
  "base-path": { type: "string" },
  "json-url": { type: "string" },
  check: { type: "boolean" },
  timeout: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** node:util's parseArgs, with its errors turned into this tool's usage messages. */
function read(argv: readonly string[]) {
  try {
    return nodeParseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    const e = err as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'|Unexpected argument '([^']+)'/.exec(e.message);
    if (unknown) throw new UsageError(`unknown argument "${unknown[1] ?? unknown[2]}"; see --help`);
    const missing = /Option '(?:-\w, )?(--[\w-]+)/.exec(e.message);
    if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && missing)
      throw new UsageError(`${missing[1]} needs a value`);
    throw new UsageError(e.message);
  }
}

export function parseArgs(argv: readonly string[]): CliOptions {
  const v = read(argv);
  const opts: CliOptions = {
    headers: {},
    check: v.check === true,
    timeoutMs: 30_000,
    help: v.help === true,
    version: v.version === true,
    ...(v.server !== undefined ? { server: v.server } : {}),
    ...(v.url !== undefined ? { url: v.url } : {}),
    ...(v.out !== undefined ? { out: v.out } : {}),
    ...(v["base-path"] !== undefined ? { basePath: v["base-path"] } : {}),
    ...(v["json-url"] !== undefined ? { jsonUrl: v["json-url"] } : {}),
  };
  for (const raw of v.header ?? []) {
    const colon = raw.indexOf(":");
    if (colon <= 0) throw new UsageError(`--header takes "Name: value"; got "${raw}"`);
    opts.headers[raw.slice(0, colon).trim()] = raw.slice(colon + 1).trim();
  }
  if (v.timeout !== undefined) {
    const ms = Number(v.timeout);
    if (!Number.isInteger(ms) || ms <= 0)
      throw new UsageError(`--timeout takes milliseconds; got "${v.timeout}"`);
    opts.timeoutMs = ms;
  }
  if (opts.help || opts.version) return opts;
  if ((opts.server === undefined) === (opts.url === undefined)) {
    throw new UsageError("give exactly one of --server and --url");
  }
  if (opts.url !== undefined && !/^https?:\/\//.test(opts.url)) {
    throw new UsageError(`--url must be an http:// or https:// URL; got "${opts.url}"`);
  }
  if (opts.server !== undefined && Object.keys(opts.headers).length > 0) {
    throw new UsageError("--header only applies to --url");
  }
  if (opts.out === undefined || opts.out === "") throw new UsageError("--out DIR is required");
  return opts;
}

/**
 * Splits a command line into words the way a POSIX shell would for the simple cases: whitespace
 * separates words, '...' is literal, "..." allows \\ \" \$ \` escapes, a backslash outside quotes
 * escapes the next character. Nothing is expanded.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < line.length && '\\"$`\n'.includes(line[i + 1]!)) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\") {
      if (i + 1 < line.length) word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new UsageError(`--server has an unclosed ${quote} quote`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new UsageError("--server needs a command");
  return words;
}
