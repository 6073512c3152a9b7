#!/usr/bin/env node
/**
 * chainmail: the daemon and its command line. Every command but `daemon` and `secret set` is one call
 * to the daemon over its socket; `--json` prints the daemon's result as JSON. Exit codes come from the
 * reasons table (src/errors.ts).
 */
import type { CacheStatus } from "./cache/index.js";
import { parseArgs } from "node:util";
import { DaemonClient } from "./client/index.js";
import { exitCodeOf, MailError, REASONS, toWireError } from "./errors.js";
import { resolveHome } from "./home.js";
import { setSecret } from "./secrets.js";

const USAGE = `usage: chainmail [--home DIR] [--json] COMMAND ...
  daemon                                 run the daemon (stops cleanly on SIGTERM)
  mcp [--http [HOST:]PORT]               run the MCP server on stdio (needs @mcpforge/chainmail-mcp)
  secret set ACCOUNT                     read the account's password from stdin
  accounts                               list accounts
  test ACCOUNT                           log in to IMAP and SMTP
  folders [--account A]...               list folders
  folders create ACCOUNT NAME            create a folder (and its parents)
  folders rename ACCOUNT FROM TO         rename a folder
  folders delete ACCOUNT NAME [--force]  delete a folder (policy: allow_delete_folder)
  search [QUERY] [--account A]... [--limit N] [--cursor C] [--count] [--snippets] [--threads] [--source auto|cache|server]
  get REF... [--full]                    read messages (never marks them read)
  thread REF [--full]                    read a thread
  attachment REF PART [--dir DIR]        save an attachment
  raw REF [--dir DIR]                    save the raw message
  move FOLDER REF...  |  copy FOLDER REF...
  archive REF...  |  trash REF...  |  expunge REF... (policy: allow_expunge)
  flags REF... [--add F]... [--remove F]...
  labels REF... [--add L]... [--remove L]...  (Google accounts)
  cache status [--account A]...          the local cache per account and folder
  cache sync [--account A]...            sync the cache now (headers, bodies, eviction) and wait
  audit [--action A] [--since TIME] [--limit N]`;

const options = {
  home: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  account: { type: "string", multiple: true },
  limit: { type: "string" },
  cursor: { type: "string" },
  count: { type: "boolean" },
  snippets: { type: "boolean" },
  threads: { type: "boolean" },
  source: { type: "string" },
  full: { type: "boolean" },
  force: { type: "boolean" },
  dir: { type: "string" },
  add: { type: "string", multiple: true },
  remove: { type: "string", multiple: true },
  action: { type: "string" },
  since: { type: "string" },
} as const;

function usage(message: string): never {
  throw new MailError("INVALID_ARGUMENT", message, `Run chainmail --help.`);
}

function intOpt(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) usage(`--${name} must be a whole number`);
  return Number(v);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function human(command: string, result: unknown): string {
  const r = result as Record<string, unknown>;
  switch (command) {
    case "accounts":
      return (r["accounts"] as Array<Record<string, unknown>>)
        .map(
          (a) =>
            `${a["name"]}\t${a["provider"]}\t${a["address"]}\tauth:${a["auth"]}\texpunge:${a["allow_expunge"]}\tdelete_folder:${a["allow_delete_folder"]}`,
        )
        .join("\n");
    case "search":
      return [
        ...(r["rows"] as Array<Record<string, unknown>>).map(
          (x) =>
            `${x["date"] ?? ""}\t${x["account"]}\t${x["folder"]}\t${(x["from"] as { address?: string } | null)?.address ?? ""}\t${x["subject"]}\t${x["ref"]}`,
        ),
        `${r["count"]} match(es)${r["next_cursor"] ? `; next: --cursor ${r["next_cursor"]}` : ""}`,
      ].join("\n");
    case "audit":
      return (r["rows"] as Array<Record<string, unknown>>)
        .map(
          (x) =>
            `${x["time"]}\t${x["client"]}\t${x["action"]}\t${x["account"] ?? "-"}\t${x["decision"]}\t${x["summary"]}`,
        )
        .join("\n");
    case "cache":
      if (typeof r["size_bytes"] === "number") {
        const status = result as CacheStatus;
        return [
          ...status.accounts.flatMap((a) => [
            `${a.account}\t${a.state}\tlast sync ${a.last_sync ?? "never"}\tdownloaded today ${a.download_today.bytes} of ${a.download_today.budget_bytes} bytes`,
            ...a.folders.map(
              (f) =>
                `  ${f.name}\theaders ${f.headers_cached}/${f.messages}\tbodies ${Math.round(f.body_coverage * 100)}%\t${f.complete ? "complete" : "incomplete"}\t${f.watching ? "watching, " : ""}${f.fresh ? "fresh" : "stale"}${f.error ? `\terror: ${f.error}` : ""}${f.watch_error ? `\twatch error: ${f.watch_error}` : ""}`,
            ),
          ]),
          `cache ${status.size_bytes} of ${status.max_size_bytes} bytes`,
        ].join("\n");
      }
      return JSON.stringify(result, null, 2);
    default:
      return JSON.stringify(result, null, 2);
  }
}

/** The argv after `mcp` (with any --home before it), when the command is `chainmail [--home DIR] mcp`. */
function mcpArgs(argv: string[]): string[] | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--home") i++;
    else if (a.startsWith("--home=")) continue;
    else if (a === "mcp") return [...argv.slice(0, i), ...argv.slice(i + 1)];
    else return undefined;
  }
  return undefined;
}

/**
 * `chainmail mcp` runs the MCP server from @mcpforge/chainmail-mcp, loaded only here. That package
 * depends on this one, so it cannot be a static import; the specifier is a variable so the bundler
 * leaves it alone.
 */
async function runMcp(args: string[]): Promise<number> {
  const specifier = "@mcpforge/chainmail-mcp";
  let mod: { main(argv: readonly string[]): Promise<void> };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ERR_MODULE_NOT_FOUND" && String((err as Error).message).includes(specifier)) {
      throw new MailError(
        "UNSUPPORTED",
        "chainmail mcp needs the package @mcpforge/chainmail-mcp, which is not installed",
        "Install it next to chainmail: npm install -g @mcpforge/chainmail-mcp (or run its chainmail-mcp bin).",
      );
    }
    throw err;
  }
  await mod.main(args);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const forMcp = mcpArgs(argv);
  if (forMcp) return runMcp(forMcp);
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    options,
    allowPositionals: true,
    strict: true,
  });
  if (o.help || pos.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return o.help ? 0 : REASONS.INVALID_ARGUMENT.exitCode;
  }
  const home = resolveHome(o.home);
  const [cmd, ...rest] = pos;

  if (cmd === "daemon") {
    // Loaded only here, so the other commands start without IMAP, MIME and SQLite code.
    const { startDaemon } = await import("./daemon/server.js");
    const daemon = await startDaemon({ home });
    process.stderr.write(`chainmail daemon listening on ${daemon.socketPath}\n`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        daemon.stop().then(resolve, resolve);
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
    return 0;
  }
  if (cmd === "secret") {
    if (rest[0] !== "set" || rest.length !== 2)
      usage("usage: chainmail secret set ACCOUNT (the password on stdin)");
    setSecret(home.secretsDir, rest[1]!, await readStdin());
    if (!o.json) process.stderr.write(`stored the password of ${rest[1]}\n`);
    else process.stdout.write(`${JSON.stringify({ account: rest[1], stored: true })}\n`);
    return 0;
  }

  const client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  try {
    const flags = { add: o.add ?? [], remove: o.remove ?? [] };
    const need = (n: number, what: string) => {
      if (rest.length < n) usage(`${cmd} needs ${what}`);
    };
    let result: unknown;
    switch (cmd) {
      case "accounts":
        result = await client.listAccounts();
        break;
      case "test":
        need(1, "ACCOUNT");
        result = await client.testAccount({ account: rest[0]! });
        break;
      case "folders": {
        const sub = rest[0] ?? "list";
        if (sub === "list") result = await client.listFolders({ accounts: o.account ?? [] });
        else if (sub === "create" && rest.length === 3)
          result = await client.createFolder({ account: rest[1]!, name: rest[2]! });
        else if (sub === "rename" && rest.length === 4)
          result = await client.renameFolder({ account: rest[1]!, from: rest[2]!, to: rest[3]! });
        else if (sub === "delete" && rest.length === 3)
          result = await client.deleteFolder({ account: rest[1]!, name: rest[2]!, force: o.force ?? false });
        else
          usage(
            "usage: chainmail folders [list|create ACCOUNT NAME|rename ACCOUNT FROM TO|delete ACCOUNT NAME]",
          );
        break;
      }
      case "search": {
        const source = o.source ?? "auto";
        if (source !== "auto" && source !== "cache" && source !== "server")
          usage("--source must be auto, cache or server");
        const limit = intOpt(o.limit, "limit");
        result = await client.search({
          query: rest.join(" "),
          accounts: o.account ?? [],
          ...(limit !== undefined ? { limit } : {}),
          ...(o.cursor ? { cursor: o.cursor } : {}),
          count_only: o.count ?? false,
          snippets: o.snippets ?? false,
          threads: o.threads ?? false,
          source,
        });
        break;
      }
      case "get":
        need(1, "REF...");
        result = await client.getMessages({ refs: rest, full: o.full ?? false });
        break;
      case "thread":
        need(1, "REF");
        result = await client.getThread({ ref: rest[0]!, full: o.full ?? false });
        break;
      case "attachment":
        need(2, "REF PART");
        result = await client.downloadAttachment({
          ref: rest[0]!,
          part: rest[1]!,
          ...(o.dir ? { dir: o.dir } : {}),
        });
        break;
      case "raw":
        need(1, "REF");
        result = await client.saveRaw({ ref: rest[0]!, ...(o.dir ? { dir: o.dir } : {}) });
        break;
      case "move":
      case "copy":
        need(2, "FOLDER REF...");
        result = await client[cmd]({ folder: rest[0]!, refs: rest.slice(1) });
        break;
      case "archive":
      case "trash":
      case "expunge":
        need(1, "REF...");
        result = await client[cmd]({ refs: rest });
        break;
      case "flags":
        need(1, "REF...");
        result = await client.setFlags({ refs: rest, ...flags });
        break;
      case "labels":
        need(1, "REF...");
        result = await client.setLabels({ refs: rest, ...flags });
        break;
      case "cache":
        if (rest[0] === "status") result = await client.cacheStatus({ accounts: o.account ?? [] });
        else if (rest[0] === "sync") result = await client.cacheSync({ accounts: o.account ?? [] });
        else usage("usage: chainmail cache status|sync [--account A]...");
        break;
      case "audit": {
        const limit = intOpt(o.limit, "limit");
        result = await client.readAudit({
          ...(o.action ? { action: o.action } : {}),
          ...(o.since ? { since: o.since } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
        break;
      }
      default:
        usage(`unknown command ${JSON.stringify(cmd)}`);
    }
    process.stdout.write(`${o.json ? JSON.stringify(result) : human(cmd!, result)}\n`);
    // A batch where some refs failed is a success (as in the seed); per-ref errors are in the output.
    return 0;
  } finally {
    client.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const body =
      err instanceof TypeError && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
        ? { reason: "INVALID_ARGUMENT" as const, message: err.message, hint: "Run chainmail --help." }
        : toWireError(err);
    if (body.reason === "INTERNAL") process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify({ error: body })}\n`);
    else process.stderr.write(`error: ${body.reason}: ${body.message}\nhint: ${body.hint}\n`);
    process.exitCode = exitCodeOf(body.reason);
  },
);
