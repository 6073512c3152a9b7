#!/usr/bin/env node
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  COMMON_FLAGS_HELP,
  parseServerArgs,
  printToolGroups,
  runServer,
  type ServerArgs,
} from "@mcpforge/toolkit";
import { createNotesApp } from "../app.js";
import { OutboxPublisher } from "../domain/publishers/outbox.js";
import type { Publisher } from "../domain/publishers/types.js";
import { WebhookPublisher } from "../domain/publishers/webhook.js";
import { DEFAULT_GIVE_UP_AFTER } from "../domain/scheduler.js";
import { notesTools, SERVER_NAME, SERVER_VERSION } from "../mcp/server.js";
import { copySqliteToPostgres } from "../store/copy.js";
import { defaultDataDir, defaultDbPath } from "../store/db.js";
import { describeStore, isPostgresUrl } from "../store/open.js";

const HELP = `${SERVER_NAME}: an MCP server for a writer's queue of short notes

Usage:
  ${SERVER_NAME} [options]               serve MCP on stdio (or --http), publishing due notes every minute
  ${SERVER_NAME} publish-due [options]   publish what is due now (and recycle evergreen notes), then exit;
                                         for cron. Prints a JSON report; exit code 1 when something failed.
  ${SERVER_NAME} migrate --from FILE --to URL
                                         copy a SQLite database into an empty PostgreSQL one and verify
                                         the counts; prints a JSON report

Options:
  --db PATH|URL          the store (default $NOTES_STATUS_DB, else ${defaultDbPath()}): a SQLite
                         file (":memory:" keeps everything in memory for this run), or a
                         postgres://user:password@host:port/database URL for PostgreSQL
  --outbox PATH          the outbox publisher's JSON-lines file (default $NOTES_STATUS_OUTBOX,
                         else ${join(defaultDataDir(), "outbox.jsonl")})
  --webhook-url URL      publish by POSTing JSON here instead (default $NOTES_STATUS_WEBHOOK_URL)
  --webhook-secret KEY   HMAC-SHA256 key for X-Signature-256 (default $NOTES_STATUS_WEBHOOK_SECRET; required
                         with a webhook)
  --tick-seconds N       how often the server publishes due notes (default 60)
  --give-up-after N      stop trying a note after N scheduler runs in a row failed to publish it: it
                         becomes status failed (default $NOTES_STATUS_GIVE_UP_AFTER, else ${DEFAULT_GIVE_UP_AFTER})
  --no-scheduler         serve without publishing anything (leave it to cron)
${COMMON_FLAGS_HELP}

Tool groups: notes, queue, tags (--tools list shows their tools).
`;

const OWN_OPTIONS = {
  db: { type: "string" },
  outbox: { type: "string" },
  "webhook-url": { type: "string" },
  "webhook-secret": { type: "string" },
  "tick-seconds": { type: "string" },
  "give-up-after": { type: "string" },
  "no-scheduler": { type: "boolean" },
  from: { type: "string" },
  to: { type: "string" },
} as const;

interface Options {
  command: Command;
  db: string;
  outbox: string;
  webhookUrl: string | undefined;
  webhookSecret: string | undefined;
  tickSeconds: number;
  giveUpAfter: number;
  scheduler: boolean;
}

type Args = ServerArgs<typeof OWN_OPTIONS>;
/** How long publish-due keeps writing the records the store refused before it exits. */
const HOLD_RECORDS_MS = 30_000;

const COMMANDS = ["publish-due", "migrate"] as const;
type Command = "serve" | (typeof COMMANDS)[number];
const isCommand = (c: string | undefined): c is (typeof COMMANDS)[number] =>
  (COMMANDS as readonly (string | undefined)[]).includes(c);

/** Flags win over environment variables, which win over the defaults. */
function optionsOf({ values, positionals }: Args, env: NodeJS.ProcessEnv): Options {
  const [command, ...extra] = positionals;
  if ((command !== undefined && !isCommand(command)) || extra.length > 0)
    fail(`unknown argument ${isCommand(command) ? extra[0] : command}; see --help`);
  const giveUp = values["give-up-after"];
  const o: Options = {
    command: command ?? "serve",
    db: values.db ?? (env["NOTES_STATUS_DB"] || defaultDbPath(env)),
    outbox: values.outbox ?? (env["NOTES_STATUS_OUTBOX"] || join(defaultDataDir(env), "outbox.jsonl")),
    webhookUrl: values["webhook-url"] ?? (env["NOTES_STATUS_WEBHOOK_URL"] || undefined),
    webhookSecret: values["webhook-secret"] ?? (env["NOTES_STATUS_WEBHOOK_SECRET"] || undefined),
    tickSeconds: 60,
    giveUpAfter:
      giveUp !== undefined
        ? runs(giveUp, "--give-up-after")
        : runs(
            env["NOTES_STATUS_GIVE_UP_AFTER"] || String(DEFAULT_GIVE_UP_AFTER),
            "NOTES_STATUS_GIVE_UP_AFTER",
          ),
    scheduler: values["no-scheduler"] !== true,
  };
  const tick = values["tick-seconds"];
  if (tick !== undefined) {
    o.tickSeconds = Number(tick);
    if (!Number.isFinite(o.tickSeconds) || o.tickSeconds < 1)
      fail("--tick-seconds takes a number of seconds, 1 or more");
  }
  return o;
}

function runs(text: string, name: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n < 1) fail(`${name} takes a whole number of runs, 1 or more`);
  return n;
}

function publisherOf(o: Options): Publisher {
  if (!o.webhookUrl) return new OutboxPublisher(o.outbox);
  if (!o.webhookSecret) fail("a webhook needs --webhook-secret (or NOTES_STATUS_WEBHOOK_SECRET)");
  return new WebhookPublisher({ url: o.webhookUrl, secret: o.webhookSecret });
}

function fail(message: string): never {
  process.stderr.write(`${SERVER_NAME}: ${message}\n`);
  process.exit(2);
}

/** parseArgs names an unknown flag in a sentence of its own; the bin's message names it first. */
function argError(err: unknown): string {
  const { code, message } = err as { code?: unknown; message: string };
  const flag = /'([^']+)'/.exec(message)?.[1];
  return code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag ? `unknown argument ${flag}; see --help` : message;
}

async function main(): Promise<void> {
  let args: Args;
  try {
    args = parseServerArgs(process.argv.slice(2), OWN_OPTIONS, { allowPositionals: true });
  } catch (err) {
    fail(argError(err));
  }
  const { flags } = args;
  if (flags.help) return void process.stdout.write(HELP);
  if (flags.version) return void process.stdout.write(`${SERVER_VERSION}\n`);
  // Before the store is opened: listing the groups creates no database.
  if (flags.tools === "list") return printToolGroups(notesTools);
  const o = optionsOf(args, process.env);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (o.command === "migrate") return migrateCommand(args.values.from, args.values.to);
  const app = await createNotesApp({
    db: o.db,
    publisher: publisherOf(o),
    scheduler: { giveUpAfter: o.giveUpAfter },
    log,
  });
  // Which store serves this process, on stderr (stdout is the protocol or the report).
  log(`${SERVER_NAME}: store ${describeStore(o.db)}`);
  if (o.command === "publish-due") {
    const report = await app.scheduler.tick();
    // A refused record this process still holds at exit would become an unknown outcome next run.
    await app.scheduler.recordHeld(report, HOLD_RECORDS_MS);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    await app.close();
    process.exitCode =
      report.failed.length + report.unrecorded.length + report.outcomeUnknown.length > 0 ? 1 : 0;
    return;
  }
  if (o.scheduler) app.scheduler.start(o.tickSeconds * 1000);
  await runServer(app.kit, { flags, caller: { scopes: [], clientId: "local" }, log });
}

async function migrateCommand(from: string | undefined, to: string | undefined): Promise<void> {
  if (!from || !to) fail("migrate needs --from <sqlite file> and --to <postgres url>");
  if (isPostgresUrl(from) || !isPostgresUrl(to))
    fail("migrate copies a SQLite file (--from) into PostgreSQL (--to postgres://...)");
  if (!existsSync(from)) fail(`no SQLite database at ${from}`);
  const report = await copySqliteToPostgres(from, to);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((err: unknown) => fail((err as Error).message));
