/** Command-line parsing for `mcp-reference-gen`; kept apart from the bin so tests can call it. */

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

export function parseArgs(argv: readonly string[]): CliOptions {
  const opts: CliOptions = { headers: {}, check: false, timeoutMs: 30_000, help: false, version: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${name} needs a value`);
      return next;
    };
    switch (name) {
      case "--server":
        opts.server = value();
        break;
      case "--url":
        opts.url = value();
        break;
      case "--header": {
        const raw = value();
        const colon = raw.indexOf(":");
        if (colon <= 0) throw new UsageError(`--header takes "Name: value"; got "${raw}"`);
        opts.headers[raw.slice(0, colon).trim()] = raw.slice(colon + 1).trim();
        break;
      }
      case "--out":
        opts.out = value();
        break;
      case "--base-path":
        opts.basePath = value();
        break;
      case "--json-url":
        opts.jsonUrl = value();
        break;
      case "--check":
        opts.check = true;
        break;
      case "--timeout": {
        const raw = value();
        const ms = Number(raw);
        if (!Number.isInteger(ms) || ms <= 0)
          throw new UsageError(`--timeout takes milliseconds; got "${raw}"`);
        opts.timeoutMs = ms;
        break;
      }
      case "--help":
      case "-h":
        opts.help = true;
        break;
      case "--version":
      case "-v":
        opts.version = true;
        break;
      default:
        throw new UsageError(`unknown argument "${arg}"; see --help`);
    }
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
