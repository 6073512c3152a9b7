import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { extname, join, resolve, sep } from "node:path";
import { type App, openApp } from "../app.js";
import { DEFAULT_USER } from "../config.js";
import { DexiError } from "../domain/errors.js";
import { importItems, pruneMissing } from "../domain/importing.js";
import { checkTag, tagCheckMessage } from "../domain/tags.js";
import { canonicalTimeZone, machineTimeZone } from "../domain/time.js";
import { EMBEDDER_CONFIG_KEYS } from "../embed/config.js";
import { WorkerPoolEmbedder } from "../embed/pool.js";
import type { Embedder } from "../embed/types.js";
import { pollFeeds } from "../feeds.js";
import { parseBookmarks } from "../importers/bookmarks.js";
import { emailItem, splitMbox } from "../importers/email.js";
import { parseFeed } from "../importers/feed.js";
import { markdownFiles, markdownItem } from "../importers/markdown.js";
import type { ImportItem } from "../importers/types.js";
import { DEXI_VERSION } from "../server.js";
import { defaultDbPath } from "../store/db.js";
import { type Args, only, parseArgs, UsageError } from "./args.js";

const HELP = `dexi: administer a Dexi notes database (the MCP server is dexi-mcp)

Usage: dexi <command> [--db PATH] [--user NAME] ...

  settings [--time-zone TZ|none] [--review-tags "#review,#cards"] [--plan NAME] [--note-cap N|none]
           [--embeddings use|openai|hash] [--embeddings-url URL] [--embeddings-model NAME]
                              show or change a user's settings (and the embedding model)
  users [add NAME [--team T]]  list or add users
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

  --db PATH    database file (env DEXI_DB; default ${defaultDbPath()})
  --user NAME  whose data (env DEXI_USER; default "${DEFAULT_USER}")
`;

const SWITCHES = [
  "off",
  "verbose",
  "force",
  "no-embed",
  "unfiled",
  "prune",
  "restore-deleted",
  "help",
  "version",
];

export async function main(
  argv: string[],
  out: (s: string) => void = (s) => void process.stdout.write(s),
  err: (s: string) => void = (s) => void process.stderr.write(s),
): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv, SWITCHES);
  } catch (e) {
    err(`dexi: ${(e as Error).message}\n`);
    return 2;
  }
  if (args.switches.has("help") || args.positional.length === 0) {
    out(HELP);
    return args.switches.has("help") ? 0 : 2;
  }
  if (args.switches.has("version")) {
    out(`${DEXI_VERSION}\n`);
    return 0;
  }
  const db = args.flags.get("db") || process.env["DEXI_DB"] || defaultDbPath();
  const user = args.flags.get("user") || process.env["DEXI_USER"] || DEFAULT_USER;
  const app = openApp(db, { log: (l) => err(`${l}\n`) });
  try {
    const [command, ...rest] = args.positional;
    const ctx = { app, args, rest, user, out, err };
    switch (command) {
      case "settings":
        return settings(ctx);
      case "users":
        return users(ctx);
      case "teams":
        return teams(ctx);
      case "share":
        return share(ctx);
      case "move":
        return move(ctx);
      case "import":
        return await importCmd(ctx);
      case "feeds":
        return await feeds(ctx);
      case "reindex":
        return await reindex(ctx);
      default:
        throw new UsageError(`unknown command "${command}"; see dexi --help`);
    }
  } catch (e) {
    if (!(e instanceof UsageError) && !(e instanceof DexiError)) throw e;
    err(`dexi: ${e.message}\n`);
    return e instanceof UsageError ? 2 : 1;
  } finally {
    await app.close();
  }
}

interface Ctx {
  app: App;
  args: Args;
  rest: string[];
  user: string;
  out: (s: string) => void;
  err: (s: string) => void;
}

const COMMON = ["db", "user"];

function userId(ctx: Ctx): number {
  return ctx.app.store.accounts.ensureUser(ctx.user, Date.now()).id;
}

function settings(ctx: Ctx): number {
  const { args, app } = ctx;
  only(args, [
    ...COMMON,
    "time-zone",
    "review-tags",
    "plan",
    "note-cap",
    "embeddings",
    "embeddings-url",
    "embeddings-model",
  ]);
  const id = userId(ctx);
  const tzText = args.flags.get("time-zone");
  // undefined: unchanged; null ("none"): forget it, so periods follow the server's zone.
  let tz: string | null | undefined;
  if (tzText === "none") tz = null;
  else if (tzText !== undefined) {
    tz = canonicalTimeZone(tzText);
    if (tz === undefined)
      throw new UsageError(`unknown time zone "${tzText}" (use an IANA name such as Europe/Berlin, or none)`);
  }
  const tagsText = args.flags.get("review-tags");
  const reviewTags = tagsText === undefined ? undefined : deckTags(tagsText);
  const capText = args.flags.get("note-cap");
  let noteCap: number | null | undefined;
  if (capText !== undefined) {
    noteCap = capText === "none" ? null : Number(capText);
    if (noteCap !== null && (!Number.isInteger(noteCap) || noteCap < 0))
      throw new UsageError(`--note-cap takes a whole number or "none"`);
  }
  const plan = args.flags.get("plan");
  app.store.accounts.updateSettings(id, {
    ...(tz !== undefined ? { timeZone: tz } : {}),
    ...(reviewTags !== undefined ? { reviewTags } : {}),
    ...(plan !== undefined ? { plan } : {}),
    ...(noteCap !== undefined ? { noteCap } : {}),
  });
  const provider = args.flags.get("embeddings");
  if (provider !== undefined && !["use", "openai", "hash"].includes(provider))
    throw new UsageError(`--embeddings takes use, openai or hash`);
  const saved: [string, string | undefined][] = [
    ["embeddings.provider", provider],
    ["embeddings.url", args.flags.get("embeddings-url")],
    ["embeddings.model", args.flags.get("embeddings-model")],
  ];
  for (const [k, v] of saved) if (v !== undefined) app.store.accounts.setConfig(k, v === "" ? null : v);
  if (reviewTags !== undefined) {
    const { enrolled, dropped } = app.notes.syncDeck(id);
    ctx.out(`review deck updated: ${enrolled} notes enrolled, ${dropped} dropped\n`);
  }
  const s = app.store.accounts.settings(id);
  const zone =
    s.timeZone ?? `not set (dexi-mcp uses its --time-zone, else this machine's: ${machineTimeZone()})`;
  ctx.out(`user: ${ctx.user}\ntime zone: ${zone}\nreview deck tags: ${s.reviewTags.join(" ") || "(none)"}\n`);
  ctx.out(`plan: ${s.plan}\nnote cap: ${s.noteCap ?? "none"} (${app.store.notes.countOwn(id)} notes)\n`);
  const emb = EMBEDDER_CONFIG_KEYS.map((k) => [k, app.store.accounts.config(k)] as const).filter(
    ([, v]) => v !== undefined,
  );
  ctx.out(
    `embeddings: ${emb.length ? emb.map(([k, v]) => `${k.slice(11)}=${v}`).join(" ") : "use (default)"}\n`,
  );
  return 0;
}

/** Review deck tags, each normalised and checked by the tag parser like a restriction's tag; deduplicated. */
function deckTags(text: string): string[] {
  const out: string[] = [];
  for (const given of text.split(/[,\s]+/).filter(Boolean)) {
    const check = checkTag(given);
    if (!check.ok) throw new UsageError(`--review-tags: ${tagCheckMessage(check)}`);
    if (!out.includes(check.tag)) out.push(check.tag);
  }
  return out;
}

function users(ctx: Ctx): number {
  const { args, app, rest } = ctx;
  only(args, [...COMMON, "team"]);
  if (rest[0] === "add") {
    const name = rest[1];
    if (!name) throw new UsageError("users add NAME");
    if (app.store.accounts.userByName(name)) throw new UsageError(`user ${name} already exists`);
    const u = app.store.accounts.createUser(name, Date.now());
    const team = args.flags.get("team");
    if (team)
      app.store.accounts.setTeam(
        u.id,
        (app.store.accounts.teamByName(team) ?? app.store.accounts.createTeam(team, Date.now())).id,
      );
    ctx.out(`added user ${name}${team ? ` to team ${team}` : ""}\n`);
    return 0;
  }
  if (rest.length > 0 && rest[0] !== "list") throw new UsageError(`unknown users command "${rest[0]}"`);
  for (const u of app.store.accounts.listUsers())
    ctx.out(`${u.name}\tteam=${u.team ?? "-"}\tnotes=${u.notes}\tplan=${u.plan}\n`);
  return 0;
}

function teams(ctx: Ctx): number {
  const { app, rest } = ctx;
  only(ctx.args, COMMON);
  const acc = app.store.accounts;
  switch (rest[0]) {
    case "add": {
      if (!rest[1]) throw new UsageError("teams add NAME");
      if (acc.teamByName(rest[1])) throw new UsageError(`team ${rest[1]} already exists`);
      acc.createTeam(rest[1], Date.now());
      ctx.out(`added team ${rest[1]}\n`);
      return 0;
    }
    case "join": {
      const [, team, name] = rest;
      if (!team || !name) throw new UsageError("teams join TEAM USER");
      const t = acc.teamByName(team) ?? acc.createTeam(team, Date.now());
      acc.setTeam(acc.ensureUser(name, Date.now()).id, t.id);
      ctx.out(`${name} joined ${t.name}\n`);
      return 0;
    }
    case "leave": {
      const u = rest[1] ? acc.userByName(rest[1]) : undefined;
      if (!u) throw new UsageError("teams leave USER (an existing user)");
      acc.setTeam(u.id, null);
      ctx.out(`${u.name} left their team\n`);
      return 0;
    }
    case undefined:
    case "list":
      for (const t of acc.listTeams()) ctx.out(`${t.name}\t${t.members || "(no members)"}\n`);
      return 0;
    default:
      throw new UsageError(`unknown teams command "${rest[0]}"`);
  }
}

function share(ctx: Ctx): number {
  only(ctx.args, COMMON);
  const id = ctx.rest[0];
  if (!id) throw new UsageError("share NOTE_ID [--off]");
  const on = !ctx.args.switches.has("off");
  const note = ctx.app.notes.share({ userId: userId(ctx), scopes: [] }, id, on);
  ctx.out(`${on ? "shared" : "unshared"} "${note.title}" (${note.id})\n`);
  return 0;
}

function move(ctx: Ctx): number {
  only(ctx.args, [...COMMON, "folder"]);
  const id = ctx.rest[0];
  const folder = ctx.args.flags.get("folder");
  const unfiled = ctx.args.switches.has("unfiled");
  if (!id || (folder === undefined) === !unfiled)
    throw new UsageError("move NOTE_ID (--folder NAME | --unfiled)");
  if (folder !== undefined && folder.trim() === "") throw new UsageError("--folder needs a name");
  // list_notes reads "unfiled" as "in no folder", so a folder of that name could never be listed.
  if (folder?.trim().toLowerCase() === "unfiled")
    throw new UsageError('"unfiled" is not a folder name; use --unfiled');
  const note = ctx.app.notes.file({ userId: userId(ctx), scopes: [] }, id, unfiled ? null : folder!.trim());
  ctx.out(
    `moved "${note.title}" (${note.id}) ${note.folder ? `into ${note.folder}` : "out of its folder"}\n`,
  );
  return 0;
}

function bulkEmbedder(ctx: Ctx): Embedder | undefined {
  if (ctx.args.switches.has("no-embed")) return undefined;
  const cfg = ctx.app.embedderConfig;
  // A remote endpoint is network-bound: no need for threads. Local models run in worker threads.
  if (cfg.provider === "openai") return ctx.app.notes.embedder;
  const workersText = ctx.args.flags.get("workers");
  const workers = workersText ? Number(workersText) : Math.min(2, availableParallelism());
  if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new UsageError("--workers takes 1-16");
  return new WorkerPoolEmbedder(cfg, workers);
}

type Kind = "markdown" | "bookmarks" | "email" | "mbox" | "feed";

function detectKind(path: string): Kind {
  const st = statSync(path);
  if (st.isDirectory()) {
    const names = readdirSync(path);
    return names.some((n) => /\.eml$/i.test(n)) && !names.some((n) => /\.(md|markdown)$/i.test(n))
      ? "email"
      : "markdown";
  }
  const ext = extname(path).toLowerCase();
  if (ext === ".html" || ext === ".htm") return "bookmarks";
  if (ext === ".eml") return "email";
  if (ext === ".mbox" || readFileSync(path, "utf8").slice(0, 5) === "From ") return "mbox";
  if ([".xml", ".rss", ".atom"].includes(ext)) return "feed";
  if (ext === ".md" || ext === ".markdown") return "markdown";
  throw new UsageError(`cannot tell what ${path} is; pass --kind`);
}

async function collect(path: string, kind: Kind): Promise<ImportItem[]> {
  switch (kind) {
    case "markdown": {
      if (statSync(path).isFile()) return [markdownItem(resolve(path, ".."), path)];
      return [...markdownFiles(path)].map((f) => markdownItem(path, f));
    }
    case "bookmarks":
      return parseBookmarks(readFileSync(path, "utf8"));
    case "email": {
      const files = statSync(path).isDirectory()
        ? readdirSync(path)
            .filter((n) => /\.eml$/i.test(n))
            .sort()
            .map((n) => join(path, n))
        : [path];
      return Promise.all(files.map((f) => emailItem(readFileSync(f))));
    }
    case "mbox":
      return Promise.all(splitMbox(readFileSync(path, "utf8")).map((m) => emailItem(m)));
    case "feed":
      return parseFeed(readFileSync(path, "utf8"), { file: realpathSync(path) }).items;
  }
}

async function importCmd(ctx: Ctx): Promise<number> {
  only(ctx.args, [...COMMON, "kind", "workers"]);
  const path = ctx.rest[0];
  if (!path) throw new UsageError("import PATH");
  const kindFlag = ctx.args.flags.get("kind");
  if (kindFlag && !["markdown", "bookmarks", "email", "mbox", "feed"].includes(kindFlag))
    throw new UsageError(`unknown --kind ${kindFlag}`);
  const kind = (kindFlag as Kind | undefined) ?? detectKind(path);
  const prune = ctx.args.switches.has("prune");
  if (prune && (kind !== "markdown" || !statSync(path).isDirectory()))
    throw new UsageError("--prune works on a folder of Markdown files (a vault)");
  const items = await collect(resolve(path), kind);
  // A vault that is unmounted or emptied by mistake must not empty the notes.
  if (prune && items.length === 0) throw new UsageError(`--prune found no Markdown files under ${path}`);
  const id = userId(ctx);
  const embedder = bulkEmbedder(ctx);
  const verbose = ctx.args.switches.has("verbose");
  const started = Date.now();
  try {
    const report = await importItems(ctx.app.notes, id, items, {
      ...(embedder ? { embedder } : {}),
      ...(ctx.args.switches.has("restore-deleted") ? { restoreDeleted: true } : {}),
      log: (l) => ctx.err(`${l}\n`),
      onCommitted: (done, r, total) => {
        if (verbose) for (const n of done) ctx.out(`${n.updated ? "updated" : "created"} ${n.id} ${n.key}\n`);
        ctx.err(`imported ${r.created + r.updated}/${total}\n`);
      },
    });
    const pruned = prune
      ? pruneMissing(
          ctx.app.notes,
          id,
          `md:${realpathSync(path)}${sep}`,
          new Set(items.map((it) => it.key)),
          (l) => ctx.err(`${l}\n`),
        )
      : undefined;
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    const parts = [
      `${report.created} created`,
      `${report.updated} updated`,
      `${report.skipped} already imported`,
      ...(report.kept ? [`${report.kept} kept as edited in dexi (their source changed too)`] : []),
      ...(pruned ? [`${pruned.removed} removed (their files are gone)`] : []),
      ...(pruned?.kept ? [`${pruned.kept} kept as edited in dexi (their files are gone)`] : []),
      ...(report.deleted ? [deletedPart(report.deleted)] : []),
      ...(report.overCap ? [`${report.overCap} over the plan's note cap`] : []),
      ...(report.unembedded ? [`${report.unembedded} without vectors (run dexi reindex)`] : []),
    ];
    ctx.out(`${kind}: ${parts.join(", ")} in ${secs}s\n`);
    return report.overCap > 0 ? 5 : 0;
  } finally {
    if (embedder && embedder !== ctx.app.notes.embedder) await embedder.close?.();
  }
}

const deletedPart = (n: number) =>
  `${n} deleted in dexi (not imported again; --restore-deleted brings them back)`;

async function feeds(ctx: Ctx): Promise<number> {
  only(ctx.args, COMMON);
  const id = userId(ctx);
  const [sub, url] = ctx.rest;
  if (sub === "add") {
    if (!url || !/^https?:\/\//i.test(url)) throw new UsageError("feeds add URL (http or https)");
    const r = ctx.app.store.records.addFeed(id, url, Date.now());
    ctx.out(
      r.created
        ? `subscribed to ${url}; run dexi feeds poll to fetch it\n`
        : `already subscribed to ${url}\n`,
    );
    return 0;
  }
  if (sub === "poll") {
    const embedder = bulkEmbedder(ctx);
    try {
      const results = await pollFeeds(ctx.app.notes, id, {
        ...(embedder ? { embedder } : {}),
        ...(ctx.args.switches.has("restore-deleted") ? { restoreDeleted: true } : {}),
      });
      let failed = 0;
      for (const r of results) {
        if (r.error) {
          failed++;
          ctx.out(`${r.url}: failed: ${r.error}\n`);
        } else {
          const { created, updated, skipped, deleted } = r.report!;
          const gone = deleted ? `, ${deletedPart(deleted)}` : "";
          ctx.out(`${r.url}: ${created} new, ${updated} updated, ${skipped} already seen${gone}\n`);
        }
      }
      return failed > 0 ? 1 : 0;
    } finally {
      if (embedder && embedder !== ctx.app.notes.embedder) await embedder.close?.();
    }
  }
  if (sub === "list" || sub === undefined) {
    for (const f of ctx.app.store.records.feeds(id)) {
      ctx.out(
        `${f.url}\t${f.title ?? "-"}\tlast polled ${f.last_polled_ms ? new Date(f.last_polled_ms).toISOString() : "never"}\n`,
      );
    }
    return 0;
  }
  throw new UsageError(`unknown feeds command "${sub}"`);
}

async function reindex(ctx: Ctx): Promise<number> {
  only(ctx.args, [...COMMON, "workers"]);
  const { app } = ctx;
  if (ctx.args.switches.has("force"))
    app.store.tx(() => app.store.db.prepare("DELETE FROM embeddings").run());
  const before = app.store.vectors.models();
  const embedder = bulkEmbedder(ctx) ?? app.notes.embedder;
  try {
    const { embedded } = await app.notes.backfill({
      embedder,
      onProgress: (done, total) => ctx.err(`embedded ${done}/${total}\n`),
    });
    const stale = before.filter((m) => m.model !== embedder.id);
    ctx.out(
      `reindex: ${embedded} notes embedded with ${embedder.id}${stale.length ? ` (replacing ${stale.map((m) => `${m.count} from ${m.model}`).join(", ")})` : ""}\n`,
    );
    return 0;
  } finally {
    if (embedder !== app.notes.embedder) await embedder.close?.();
  }
}
