import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { extname, join, resolve, sep } from "node:path";
import { DEXI_REASONS } from "../domain/errors.js";
import { listFeeds, pollFeeds, subscribeFeed } from "../domain/feeds.js";
import { importItems, pruneMissing } from "../domain/importing.js";
import { WorkerPoolEmbedder } from "../embed/pool.js";
import type { Embedder } from "../embed/types.js";
import { parseBookmarks } from "../importers/bookmarks.js";
import { emailItem, splitMbox } from "../importers/email.js";
import { parseFeed } from "../importers/feed.js";
import { markdownFiles, markdownItem } from "../importers/markdown.js";
import type { ImportItem } from "../importers/types.js";
import { type Ctx, command, forFlag, on, str, UsageError, userId } from "./context.js";

const KINDS = ["markdown", "bookmarks", "email", "mbox", "feed"] as const;
type Kind = (typeof KINDS)[number];

function bulkEmbedder(ctx: Ctx): Embedder | undefined {
  if (on(ctx, "no-embed")) return undefined;
  const cfg = ctx.app.embedderConfig;
  // A remote endpoint is network-bound: no need for threads. Local models run in worker threads.
  if (cfg.provider === "openai") return ctx.app.notes.embedder;
  const workersText = str(ctx, "workers");
  const workers = workersText ? Number(workersText) : Math.min(2, availableParallelism());
  if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new UsageError("--workers takes 1-16");
  return new WorkerPoolEmbedder(cfg, workers);
}

async function closeBulk(ctx: Ctx, embedder: Embedder | undefined): Promise<void> {
  if (embedder && embedder !== ctx.app.notes.embedder) await embedder.close?.();
}

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

/**
 * The email notes of raw messages; a message the parser refuses (more than 1,000 MIME parts, a
 * header past 1 MB: mailparser's bounds against a crafted message) is left out and named in
 * `unreadable`, not the end of the import (one stranger's mail in a ten-year archive failed it).
 */
async function emailItems(
  raws: ReadonlyArray<{ raw: Buffer | string; where: string }>,
  unreadable: string[],
): Promise<ImportItem[]> {
  const items: ImportItem[] = [];
  for (const { raw, where } of raws) {
    try {
      items.push(await emailItem(raw));
    } catch (err) {
      unreadable.push(`${where}: ${(err as Error).message}`);
    }
  }
  return items;
}

async function collect(path: string, kind: Kind, unreadable: string[]): Promise<ImportItem[]> {
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
      return emailItems(
        files.map((f) => ({ raw: readFileSync(f), where: f })),
        unreadable,
      );
    }
    case "mbox":
      return emailItems(
        splitMbox(readFileSync(path, "utf8")).map((raw, i) => ({
          raw,
          where: `message ${i + 1} of ${path}`,
        })),
        unreadable,
      );
    case "feed":
      return parseFeed(readFileSync(path, "utf8"), { file: realpathSync(path) }).items;
  }
}

const deletedPart = (n: number) =>
  `${n} deleted in dexi (not imported again; --restore-deleted brings them back)`;

export const importCmd = command({
  options: {
    kind: { type: "string" },
    workers: { type: "string" },
    "no-embed": { type: "boolean" },
    verbose: { type: "boolean" },
    prune: { type: "boolean" },
    "restore-deleted": { type: "boolean" },
  },
  async run(ctx) {
    const path = ctx.rest[0];
    if (!path) throw new UsageError("import PATH");
    if (!existsSync(path)) throw new UsageError(`no such file or folder: ${path}`);
    const kindFlag = str(ctx, "kind");
    if (kindFlag !== undefined && !(KINDS as readonly string[]).includes(kindFlag))
      throw new UsageError(`unknown --kind ${kindFlag}`);
    const kind = (kindFlag as Kind | undefined) ?? detectKind(path);
    const prune = on(ctx, "prune");
    if (prune && (kind !== "markdown" || !statSync(path).isDirectory()))
      throw new UsageError("--prune works on a folder of Markdown files (a vault)");
    const unreadable: string[] = [];
    const items = await collect(resolve(path), kind, unreadable);
    for (const u of unreadable) ctx.err(`left out, unreadable: ${u}\n`);
    // A vault that is unmounted or emptied by mistake must not empty the notes.
    if (prune && items.length === 0) throw new UsageError(`--prune found no Markdown files under ${path}`);
    const id = await userId(ctx);
    const embedder = bulkEmbedder(ctx);
    const verbose = on(ctx, "verbose");
    const started = Date.now();
    try {
      const report = await importItems(ctx.app.notes, id, items, {
        ...(embedder ? { embedder } : {}),
        ...(on(ctx, "restore-deleted") ? { restoreDeleted: true } : {}),
        log: (l) => ctx.err(`${l}\n`),
        onCommitted: (done, r, total) => {
          if (verbose)
            for (const n of done) ctx.out(`${n.updated ? "updated" : "created"} ${n.id} ${n.key}\n`);
          ctx.err(`imported ${r.created + r.updated}/${total}\n`);
        },
      });
      const pruned = prune
        ? await pruneMissing(
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
        ...(unreadable.length ? [`${unreadable.length} unreadable (left out, named above)`] : []),
      ];
      ctx.out(`${kind}: ${parts.join(", ")} in ${secs}s\n`);
      // Items left out at the plan's cap: the exit code of LIMIT_REACHED.
      return report.overCap > 0 ? DEXI_REASONS.LIMIT_REACHED.exitCode : 0;
    } finally {
      await closeBulk(ctx, embedder);
    }
  },
});

export const feeds = command({
  options: { "no-embed": { type: "boolean" }, "restore-deleted": { type: "boolean" } },
  async run(ctx) {
    const id = await userId(ctx);
    const [sub, url] = ctx.rest;
    if (sub === "add") {
      if (!url) throw new UsageError("feeds add URL (http or https)");
      const r = await forFlag("feeds add", () => subscribeFeed(ctx.app.notes, id, url));
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
          ...(on(ctx, "restore-deleted") ? { restoreDeleted: true } : {}),
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
        // A feed that could not be fetched is no bad input: the others were polled, so 1, not a reason's code.
        return failed > 0 ? 1 : 0;
      } finally {
        await closeBulk(ctx, embedder);
      }
    }
    if (sub === "list" || sub === undefined) {
      for (const f of await listFeeds(ctx.app.notes, id)) {
        ctx.out(
          `${f.url}\t${f.title ?? "-"}\tlast polled ${f.last_polled_ms ? new Date(f.last_polled_ms).toISOString() : "never"}\n`,
        );
      }
      return 0;
    }
    throw new UsageError(`unknown feeds command "${sub}"`);
  },
});

export const reindex = command({
  options: { force: { type: "boolean" }, workers: { type: "string" } },
  async run(ctx) {
    const { notes } = ctx.app;
    const force = on(ctx, "force");
    const before = force ? [] : await notes.store.vectors.models();
    const embedder = bulkEmbedder(ctx) ?? notes.embedder;
    try {
      const { embedded } = await notes.backfill({
        embedder,
        force,
        onProgress: (done, total) => ctx.err(`embedded ${done}/${total}\n`),
      });
      const stale = before.filter((m) => m.model !== embedder.id);
      ctx.out(
        `reindex: ${embedded} notes embedded with ${embedder.id}${stale.length ? ` (replacing ${stale.map((m) => `${m.count} from ${m.model}`).join(", ")})` : ""}\n`,
      );
      return 0;
    } finally {
      await closeBulk(ctx, embedder);
    }
  },
});
