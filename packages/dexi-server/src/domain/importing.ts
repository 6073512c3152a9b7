import { createHash, randomUUID } from "node:crypto";
import type { Embedder } from "../embed/types.js";
import { noteText } from "../embed/types.js";
import type { ImportItem } from "../importers/types.js";
import type { ImportedNote } from "../store/notes.js";
import type { NotesService } from "./notes.js";
import { parseTags } from "./tags.js";

export interface ImportReport {
  created: number;
  /** Notes whose source changed since the last import, and which nobody edited in dexi since: rewritten. */
  updated: number;
  /** Items already imported and unchanged. */
  skipped: number;
  /** Items changed in the source whose notes were also edited in dexi since: dexi's version is kept. */
  kept: number;
  /** Items left out because the plan's note cap was reached. */
  overCap: number;
  /** Items whose notes were deleted in dexi: not imported again (unless `restoreDeleted`). */
  deleted: number;
  /** Created or updated notes without a vector (embedding failed); `dexi reindex` fills them in. */
  unembedded: number;
}

export interface ImportOptions {
  /** Usually a worker pool: embedding runs off the main thread. Omit to import without vectors. */
  embedder?: Embedder;
  batch?: number;
  /** Called after each batch is committed (durable): the notes created or updated in it. */
  onCommitted?: (
    notes: { id: string; key: string; updated: boolean }[],
    report: ImportReport,
    total: number,
  ) => void;
  now?: () => number;
  log?: (line: string) => void;
  /** Import items whose notes were deleted in dexi too, and forget those deletions. */
  restoreDeleted?: boolean;
}

/**
 * How long a deletion of an imported note is remembered. Long enough to outlive any feed's window and
 * the usual re-import of an archive; bounded so the table does not grow without end.
 */
export const TOMBSTONE_DAYS = 365;

/** What an import writes into a note, hashed: the same source item always gives the same hash. */
export function importHash(title: string, body: string): string {
  return createHash("sha256").update(title).update("\u0000").update(body).digest("hex").slice(0, 32);
}

interface Planned {
  item: ImportItem;
  hash: string;
  /** Set when the item updates this existing note. */
  existing?: ImportedNote;
  /** Set when the item's note had been deleted in dexi and is imported again on request. */
  restored?: true;
}

/**
 * Sorts items into creates, updates, unchanged and kept. A note is rewritten from its source only
 * when the source changed and the note still holds exactly what the last import wrote; a note edited
 * in dexi is never overwritten. Notes imported before hashes were kept count as edited unless they
 * already match the source.
 */
async function plan(
  notes: NotesService,
  userId: number,
  items: readonly ImportItem[],
  report: ImportReport,
  o: { log: (line: string) => void; restoreDeleted: boolean; deletedSince: number },
) {
  const creates: Planned[] = [];
  const updates: Planned[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.key)) {
      report.skipped++;
      continue;
    }
    seen.add(item.key);
    const hash = importHash(item.title, item.body);
    const existing =
      (await notes.store.notes.byContentKey(userId, item.key)) ?? (await adoptLegacy(notes, userId, item));
    if (!existing) {
      if (!(await notes.store.tombstones.has(userId, item.key, o.deletedSince))) creates.push({ item, hash });
      else if (o.restoreDeleted) creates.push({ item, hash, restored: true });
      else report.deleted++;
      continue;
    }
    const current = importHash(existing.title, existing.body);
    if (current === hash) {
      if (existing.importHash !== hash) await notes.store.notes.setImportHash(existing.id, hash);
      report.skipped++;
    } else if (existing.importHash === hash)
      report.skipped++; // source unchanged, edited in dexi
    else if (existing.importHash === current) updates.push({ item, hash, existing });
    else {
      report.kept++;
      o.log(
        `dexi: kept note ${existing.uuid} as edited in dexi; its source changed too (${item.key}). Delete the note and import again with --restore-deleted to take the source's version.`,
      );
    }
  }
  return { creates, updates };
}

/** A note imported under the item's older key (see ImportItem.legacyKey) takes the item's key now. */
async function adoptLegacy(
  notes: NotesService,
  userId: number,
  item: ImportItem,
): Promise<ImportedNote | undefined> {
  if (item.legacyKey === undefined) return undefined;
  const old = await notes.store.notes.byContentKey(userId, item.legacyKey);
  if (old) await notes.store.notes.setContentKey(old.id, item.key);
  return old;
}

/**
 * An item with U+0000 taken out of every text it writes: a note cannot keep the character (see
 * checkNoteText), and in a source file or mail it is nothing a reader sees, so an import drops it
 * rather than failing the item on one store and keeping it on the other.
 */
function withoutNul(item: ImportItem): ImportItem {
  const strip = (o: object) =>
    Object.fromEntries(
      Object.entries(o).map(([k, v]) => [k, typeof v === "string" ? v.replaceAll("\u0000", "") : v]),
    );
  return { ...strip(item), ...(item.record ? { record: strip(item.record) } : {}) } as ImportItem;
}

/**
 * Bulk import for one user. A key seen before is not created again, so importing the same thing twice
 * creates nothing new; a source edited since is re-imported into its note (see `plan`). Each batch is
 * embedded first, then written in one transaction with its tags, review cards, source records and
 * vectors: a crash loses at most the batch in flight, never half a note.
 */
export async function importItems(
  notes: NotesService,
  userId: number,
  items: readonly ImportItem[],
  o: ImportOptions = {},
): Promise<ImportReport> {
  const { store } = notes;
  const report: ImportReport = {
    created: 0,
    updated: 0,
    skipped: 0,
    kept: 0,
    overCap: 0,
    deleted: 0,
    unembedded: 0,
  };
  const now = o.now ?? Date.now;
  const deletedSince = now() - TOMBSTONE_DAYS * 86_400_000;
  await store.tombstones.expire(deletedSince);
  const { creates, updates } = await plan(notes, userId, items.map(withoutNul), report, {
    log: o.log ?? (() => {}),
    restoreDeleted: o.restoreDeleted === true,
    deletedSince,
  });
  const { noteCap } = await store.accounts.settings(userId);
  let allowed = creates;
  if (noteCap !== null) {
    const room = Math.max(0, noteCap - (await store.notes.countOwn(userId)));
    report.overCap = Math.max(0, creates.length - room);
    allowed = creates.slice(0, room);
  }
  const todo = [...updates, ...allowed];
  const batch = o.batch ?? 32;
  for (let i = 0; i < todo.length; i += batch) {
    const chunk = todo.slice(i, i + batch);
    let vectors: (Float32Array | undefined)[] = [];
    if (o.embedder) {
      try {
        vectors = await o.embedder.embed(chunk.map(({ item }) => noteText(item.title, item.body)));
      } catch (err) {
        o.log?.(`dexi: embedding failed for a batch (${(err as Error).message}); run dexi reindex later`);
      }
    }
    const done = await store.tx(async () => {
      const out: { id: string; key: string; updated: boolean }[] = [];
      for (const [j, { item: it, hash, existing, restored }] of chunk.entries()) {
        const t = now();
        let id: number;
        let uuid: string;
        if (existing) {
          ({ id, uuid } = existing);
          await store.notes.update(id, {
            title: it.title,
            body: it.body,
            updatedMs: t,
            tags: parseTags(it.body),
          });
          await store.notes.setImportHash(id, hash);
        } else {
          const created = it.createdMs ?? t;
          uuid = randomUUID();
          id = await store.notes.insert({
            uuid,
            userId,
            folderId: it.folder ? (await store.accounts.ensureFolder(userId, it.folder)).id : null,
            title: it.title,
            body: it.body,
            source: it.source,
            sourceUrl: it.sourceUrl,
            contentKey: it.key,
            importHash: hash,
            createdMs: created,
            updatedMs: created,
            tags: parseTags(it.body),
          });
          const r = it.record;
          if (r?.kind === "bookmark") await store.records.addBookmark(id, r.url, r.addedMs);
          else if (r?.kind === "email") await store.records.addEmail(id, r);
          else if (r?.kind === "feed") await store.records.addFeedArticle(id, r);
          if (restored) await store.tombstones.forget(userId, it.key);
        }
        await notes.syncCard(userId, id, it.body, t);
        const vec = vectors[j];
        if (vec && o.embedder) await store.vectors.put(id, o.embedder.id, vec);
        else {
          if (existing) await store.vectors.remove(id); // the old vector described the old text
          report.unembedded++;
        }
        out.push({ id: uuid, key: it.key, updated: existing !== undefined });
      }
      return out;
    });
    for (const d of done) d.updated ? report.updated++ : report.created++;
    o.onCommitted?.(done, report, todo.length);
  }
  return report;
}

export interface PruneReport {
  /** Notes removed because their source is gone and nobody edited them in dexi. */
  removed: number;
  /** Notes whose source is gone but which were edited in dexi: left in place. */
  kept: number;
}

/**
 * Removes the user's notes imported under `keyPrefix` (a vault's folder) whose key is not among
 * `present`, the keys the source still has: a deleted file's note goes too. A note edited in dexi
 * since its import stays, and is named in the log.
 */
export async function pruneMissing(
  notes: NotesService,
  userId: number,
  keyPrefix: string,
  present: ReadonlySet<string>,
  log: (line: string) => void = () => {},
): Promise<PruneReport> {
  const report: PruneReport = { removed: 0, kept: 0 };
  for (const note of await notes.store.notes.importedUnder(userId, keyPrefix)) {
    if (present.has(note.key)) continue;
    if (note.importHash !== importHash(note.title, note.body)) {
      report.kept++;
      log(`dexi: kept note ${note.uuid} as edited in dexi; its source is gone (${note.key})`);
      continue;
    }
    // The source is gone, not unwanted: if the file comes back, it is imported again.
    await notes.delete({ userId, scopes: [] }, note.uuid, { remember: false });
    report.removed++;
  }
  return report;
}
