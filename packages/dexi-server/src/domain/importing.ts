import { randomUUID } from "node:crypto";
import type { Embedder } from "../embed/types.js";
import { noteText } from "../embed/types.js";
import type { ImportItem } from "../importers/types.js";
import type { NotesService } from "./notes.js";
import { parseTags } from "./tags.js";

export interface ImportReport {
  created: number;
  skipped: number;
  /** Items left out because the plan's note cap was reached. */
  overCap: number;
  /** Created notes without a vector (embedding failed); `dexi reindex` fills them in. */
  unembedded: number;
}

export interface ImportOptions {
  /** Usually a worker pool: embedding runs off the main thread. Omit to import without vectors. */
  embedder?: Embedder;
  batch?: number;
  /** Called after each batch is committed (durable): the notes created in it. */
  onCommitted?: (notes: { id: string; key: string }[], report: ImportReport, total: number) => void;
  now?: () => number;
  log?: (line: string) => void;
}

/**
 * Bulk import for one user. Items whose content key exists are skipped, so importing the same thing
 * twice creates nothing new. Each batch is embedded first, then written in one transaction with its
 * tags, review cards, source records and vectors: a crash loses at most the batch in flight, never
 * half a note.
 */
export async function importItems(
  notes: NotesService,
  userId: number,
  items: readonly ImportItem[],
  o: ImportOptions = {},
): Promise<ImportReport> {
  const { store } = notes;
  const report: ImportReport = { created: 0, skipped: 0, overCap: 0, unembedded: 0 };
  const seen = new Set<string>();
  const fresh = items.filter((it) => {
    if (seen.has(it.key) || store.notes.byContentKey(userId, it.key)) {
      report.skipped++;
      return false;
    }
    seen.add(it.key);
    return true;
  });
  const { noteCap } = store.accounts.settings(userId);
  let todo = fresh;
  if (noteCap !== null) {
    const room = Math.max(0, noteCap - store.notes.countOwn(userId));
    report.overCap = Math.max(0, fresh.length - room);
    todo = fresh.slice(0, room);
  }
  const batch = o.batch ?? 32;
  const now = o.now ?? Date.now;
  for (let i = 0; i < todo.length; i += batch) {
    const chunk = todo.slice(i, i + batch);
    let vectors: (Float32Array | undefined)[] = [];
    if (o.embedder) {
      try {
        vectors = await o.embedder.embed(chunk.map((it) => noteText(it.title, it.body)));
      } catch (err) {
        o.log?.(`dexi: embedding failed for a batch (${(err as Error).message}); run dexi reindex later`);
      }
    }
    const done = store.tx(() =>
      chunk.map((it, j) => {
        const t = now();
        const created = it.createdMs ?? t;
        const folderId = it.folder ? store.accounts.ensureFolder(userId, it.folder).id : null;
        const uuid = randomUUID();
        const id = store.notes.insert({
          uuid,
          userId,
          folderId,
          title: it.title,
          body: it.body,
          source: it.source,
          sourceUrl: it.sourceUrl,
          contentKey: it.key,
          createdMs: created,
          updatedMs: created,
          tags: parseTags(it.body),
        });
        const r = it.record;
        if (r?.kind === "bookmark") store.records.addBookmark(id, r.url, r.addedMs);
        else if (r?.kind === "email") store.records.addEmail(id, r);
        else if (r?.kind === "feed") store.records.addFeedArticle(id, r);
        notes.syncCard(userId, id, it.body, t);
        const vec = vectors[j];
        if (vec && o.embedder) store.vectors.put(id, o.embedder.id, vec);
        else report.unembedded++;
        return { id: uuid, key: it.key };
      }),
    );
    report.created += done.length;
    o.onCommitted?.(done, report, todo.length);
  }
  return report;
}
