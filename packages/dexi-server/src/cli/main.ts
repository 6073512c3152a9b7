import { parseArgs } from "node:util";
import { type App, openAppAt } from "../app.js";
import { isPostgresUrl } from "../store/index.js";
import { copySqliteToPostgres } from "../store/postgres/copy.js";
import { DEFAULT_USER, dexiArgs } from "../config.js";
import { DEXI_VERSION } from "../mcp/server.js";
import { defaultDbPath } from "../store/db.js";
import { settings, teams, users } from "./accounts.js";
import { type Command, type Ctx, command, exitCodeOf, UsageError } from "./context.js";
import { feeds, importCmd, reindex } from "./import.js";
import { move, share } from "./notes.js";
import { status } from "./status.js";

const HELP = `dexi: administer a Dexi notes database (the MCP server is dexi-mcp)

Usage: dexi <command> [--db PATH] [--user NAME] ...

  settings [--time-zone TZ|none] [--review-tags "#review,#cards"] [--plan NAME] [--note-cap N|none]
           [--embeddings use|openai|hash] [--embeddings-url URL] [--embeddings-model NAME]
                              show or change a user's settings (and the embedding model)
  users [add NAME [--team T] [--password-stdin]]  list or add users (with a password for the
                              sign-in page of dexi-mcp --http, read from standard input)
  users password NAME         set or change a user's password (read from standard input)
  teams [add NAME | join TEAM USER | leave USER]
  share NOTE_ID [--off]       share an own note with the owner's team (read-only for them)
  move NOTE_ID (--folder NAME | --unfiled)
                              file an own note into a folder (created if new) or take it out of any
  import PATH [--kind markdown|bookmarks|email|mbox|feed] [--workers N] [--no-embed] [--verbose]
                              import a Markdown folder / Obsidian vault, a bookmarks .html export,
                              .eml files (or a folder of them), an mbox, or an RSS/Atom file;
                              again: brings in edits made at the source (never over dexi edits)
                              and skips items whose notes were deleted in dexi
         [--prune]            for a vault: also remove notes whose files are gone (unless edited in dexi)
         [--restore-deleted]  import items whose notes were deleted in dexi too
  feeds add URL | feeds poll [--restore-deleted] | feeds list
  reindex [--force] [--workers N]   embed notes that have no vector from the current model
  status                      the store, which vector search it uses (pgvector exact, pgvector hnsw,
                              in-process) and how many notes have the current model's vectors
  migrate --from FILE --to postgres://...
                              copy a SQLite database (vectors included) into an empty PostgreSQL
                              database, and check that every table's count and the vectors match

  --db PATH    database file or postgres:// URL (env DEXI_DB; default ${defaultDbPath()})
  --user NAME  whose data (env DEXI_USER; default "${DEFAULT_USER}")

Exit codes: 0 done; 2 a bad command line or value; 3 not found; 4 read-only; 5 the plan's note cap;
1 some feeds could not be fetched; 70 an unexpected error.
`;

/** Handled in main: it opens two databases of its own, not the one --db names. */
const migrate = command({
  options: { from: { type: "string" }, to: { type: "string" } },
  run: () => {
    throw new Error("migrate runs in main");
  },
});

const GLOBAL = { db: { type: "string" }, user: { type: "string" } } as const;

const COMMANDS: Record<string, Command> = {
  settings,
  users,
  teams,
  share,
  move,
  import: importCmd,
  feeds,
  reindex,
  migrate,
  status,
};

/** The command's name: the first positional, reading every command's flags so their values are skipped. */
function commandName(argv: string[]): string | undefined {
  const options = Object.assign({ ...GLOBAL }, ...Object.values(COMMANDS).map((c) => c.options));
  return parseArgs({ args: argv, options, strict: false, allowPositionals: true }).positionals[0];
}

/** Argument parsing fails only on a bad command line. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Runs `dexi` with argv; returns the exit code, which for a refused change is its reason's. */
export async function main(
  argv: string[],
  out: (s: string) => void = (s) => void process.stdout.write(s),
  err: (s: string) => void = (s) => void process.stderr.write(s),
  input: () => Promise<string> = readStdin,
): Promise<number> {
  let app: App | undefined;
  try {
    const name = commandName(argv);
    const cmd = name === undefined ? undefined : COMMANDS[name];
    const { flags, values, positionals } = usage(() =>
      dexiArgs(argv, { ...GLOBAL, ...(cmd?.options ?? {}) }, { allowPositionals: true }),
    );
    if (flags.help || name === undefined) {
      out(HELP);
      return flags.help ? 0 : 2;
    }
    if (flags.version) {
      out(`${DEXI_VERSION}\n`);
      return 0;
    }
    if (!cmd) throw new UsageError(`unknown command "${name}"; see dexi --help`);
    if (cmd === migrate) {
      const given = values as Record<string, unknown>;
      const from = given["from"] as string | undefined;
      const to = given["to"] as string | undefined;
      if (!from || !to || !isPostgresUrl(to)) throw new UsageError("migrate --from FILE --to postgres://...");
      const report = await copySqliteToPostgres(from, to);
      const { vectorsMd5, ...counts } = report;
      out(
        `copied ${Object.entries(counts)
          .map(([t, n]) => `${n} ${t}`)
          .join(", ")}; counts and vectors verified (md5 ${vectorsMd5})\n`,
      );
      return 0;
    }
    if (
      flags.http ||
      flags.token !== undefined ||
      flags.sessionIdleMinutes ||
      flags.maxSessions ||
      flags.maxSessionsPerUser ||
      flags.tools !== undefined ||
      flags.readOnly ||
      flags.outputSchemas
    )
      throw new UsageError(
        "--http, --token-file, --tools, --read-only, --output-schemas and the session flags are dexi-mcp's; see dexi --help",
      );
    const db = (values["db"] as string | undefined) || process.env["DEXI_DB"] || defaultDbPath();
    const user = (values["user"] as string | undefined) || process.env["DEXI_USER"] || DEFAULT_USER;
    app = await openAppAt(db, { log: (l) => err(`${l}\n`) });
    const ctx: Ctx = { app, db, user, values, rest: positionals.slice(1), out, err, input };
    return await cmd.run(ctx);
  } catch (e) {
    const code = exitCodeOf(e);
    if (code === undefined) throw e;
    err(`dexi: ${(e as Error).message}\n`);
    return code;
  } finally {
    await app?.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
