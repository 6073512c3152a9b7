import { randomUUID } from "node:crypto";
import type { Embedder } from "../embed/types.js";
import { noteText } from "../embed/types.js";
import { type Hit, VectorIndex } from "../embed/vector-index.js";
import type { ListFilter, NoteRow, Scope, Store } from "../store/index.js";
import { Access, checkFolderName, isRestricted, type Viewer } from "./access.js";
import { DexiError, noteNotFound } from "./errors.js";
import type { Sort, SourceFilter, UpdateMode } from "./limits.js";
import { type Grade, schedule } from "./sm2.js";
import { parseTags, type TagKind, tagCandidates } from "./tags.js";
import { isoUtc, machineTimeZone, type Period, periodRange } from "./time.js";
import {
  type Deleted,
  type DueReviews,
  type FolderCounts,
  type Graded,
  type NoteFull,
  type NoteItem,
  type NotePage,
  type NoteWindow,
  type TagCounts,
  toFull,
  toItem,
} from "./view.js";

export interface NotesOptions {
  store: Store;
  embedder: Embedder;
  /** The zone for periods of users who set none (`--time-zone`); default this machine's. */
  timeZone?: string;
  now?: () => number;
  log?: (line: string) => void;
}

export interface ListOptions {
  page: number;
  size: number;
  source: SourceFilter;
  tag?: string;
  folder?: string;
  period?: Period;
  sort: Sort;
}

const MAX_QUERY_TERMS = 32;
/** How long a batch of notes stays claimed by the instance embedding it. */
const EMBED_LEASE_MS = 10 * 60_000;

/**
 * Turns any user text into a safe FTS5 query: the words (letters, digits) each as a quoted string,
 * all required. Operators, quotes, `-`, `*`, `NEAR(…)` are plain text, never syntax.
 */
export function ftsQuery(text: string): string | undefined {
  const words = text.normalize("NFC").match(/[\p{L}\p{N}\p{M}]+/gu);
  if (!words || words.length === 0) return undefined;
  return words
    .slice(0, MAX_QUERY_TERMS)
    .map((w) => `"${w}"`)
    .join(" ");
}

/** The notes service: every tool and the CLI go through it, with a Viewer deciding what is visible. */
export class NotesService {
  readonly store: Store;
  readonly access: Access;
  readonly embedder: Embedder;
  readonly index: VectorIndex;
  /** The zone for periods of users who set none. */
  readonly timeZone: string;
  private readonly now: () => number;
  private readonly log: (line: string) => void;

  constructor(options: NotesOptions) {
    this.timeZone = options.timeZone ?? machineTimeZone();
    this.store = options.store;
    this.embedder = options.embedder;
    this.access = new Access(options.store);
    this.index = new VectorIndex(options.store.vectors, options.embedder.id);
    this.now = options.now ?? Date.now;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  // --- reads ---

  async get(viewer: Viewer, uuid: string): Promise<NoteFull> {
    const row = await this.store.notes.visibleByUuid(await this.access.scope(viewer), uuid);
    if (!row) throw noteNotFound();
    return toFull(row, (await this.store.notes.tagsOf([row.id])).get(row.id) ?? [], viewer.userId);
  }

  async search(viewer: Viewer, query: string, page: number, size: number): Promise<NotePage> {
    const match = ftsQuery(query);
    if (!match) return { items: [], total: 0, page };
    const { rows, total } = await this.store.notes.search(
      await this.access.scope(viewer),
      match,
      size,
      (page - 1) * size,
    );
    return { items: await this.items(rows, viewer), total, page };
  }

  async list(viewer: Viewer, o: ListOptions): Promise<NotePage> {
    const filter: ListFilter = { sort: o.sort };
    if (o.source !== "all") filter.source = o.source;
    if (o.tag !== undefined) filter.tags = tagCandidates(o.tag);
    if (o.folder !== undefined) filter.folder = await this.access.resolveFolder(viewer, o.folder);
    if (o.period) {
      const { from, to } = periodRange(o.period, this.now(), await this.timeZoneOf(viewer.userId));
      filter.from = from;
      filter.to = to;
    }
    const { rows, total } = await this.store.notes.list(
      await this.access.scope(viewer),
      filter,
      o.size,
      (o.page - 1) * o.size,
    );
    return { items: await this.items(rows, viewer), total, page: o.page };
  }

  /** The zone a user's periods are in: their own setting, else the server's. */
  async timeZoneOf(userId: number): Promise<string> {
    return (await this.store.accounts.settings(userId)).timeZone ?? this.timeZone;
  }

  async semantic(viewer: Viewer, query: string, size: number): Promise<NoteWindow> {
    const [vec] = await this.embedOrFail([query]);
    return { items: await this.nearest(viewer, vec!, size) };
  }

  async similar(viewer: Viewer, uuid: string, size: number): Promise<NoteWindow> {
    const row = await this.store.notes.visibleByUuid(await this.access.scope(viewer), uuid);
    if (!row) throw noteNotFound();
    // With pgvector the database holds the vectors; the in-process index is never loaded.
    const stored = this.store.vectorSearch
      ? await this.store.vectors.get(row.id, this.embedder.id)
      : (await this.index.fresh()).vector(row.id);
    // A read writes nothing, whoever asks (a read-only grant may not): a note with no vector of the
    // current model is embedded for this call only; the next backfill (`dexi reindex`) stores one.
    const vec = stored ?? (await this.embedOrFail([noteText(row.title, row.body)]))[0]!;
    return { items: await this.nearest(viewer, vec, size, row.id) };
  }

  private async nearest(
    viewer: Viewer,
    vec: Float32Array,
    size: number,
    exclude?: number,
  ): Promise<NoteItem[]> {
    const scope = await this.access.scope(viewer);
    const hits = this.store.vectorSearch
      ? await this.store.vectorSearch.nearest(scope, this.embedder.id, vec, size, exclude)
      : await this.nearestInProcess(viewer, scope, vec, size, exclude);
    const rows = await this.store.notes.rowsByIds(hits.map((h) => h.id));
    const tags = await this.store.notes.tagsOf(rows.map((r) => r.id));
    const cos = new Map(hits.map((h) => [h.id, h.cosine]));
    return rows.map((r) => toItem(r, tags.get(r.id) ?? [], viewer.userId, cos.get(r.id)));
  }

  /** The in-process index over every vector, checking visibility of the best candidates as it goes. */
  private async nearestInProcess(
    viewer: Viewer,
    scope: Scope,
    vec: Float32Array,
    size: number,
    exclude?: number,
  ): Promise<Hit[]> {
    const only = isRestricted(viewer) ? await this.store.notes.visibleIds(scope) : undefined;
    // The only user, unrestricted: every vector is visible, so no look-ups while ranking.
    const everything = !only && (await this.store.notes.seesEverything(scope));
    return this.index.search(
      vec,
      size,
      everything ? async (ids) => new Set(ids) : (ids) => this.store.notes.visibleAmong(scope, ids),
      only,
      exclude,
    );
  }

  async tags(viewer: Viewer, kind: TagKind, limit: number): Promise<TagCounts> {
    return { tags: await this.store.notes.tagCounts(await this.access.scope(viewer), kind, limit) };
  }

  async folders(viewer: Viewer): Promise<FolderCounts> {
    const { folders, unfiled } = await this.access.visibleFolders(viewer);
    return {
      folders: folders.map((f) => ({ name: f.name, note_count: f.note_count })),
      unfiled_count: unfiled,
    };
  }

  // --- writes ---

  async create(viewer: Viewer, input: { title: string; text: string }): Promise<NoteFull> {
    checkNoteText("title", input.title);
    checkNoteText("text", input.text);
    await this.checkCap(viewer);
    const body = (await this.access.placeNew(viewer, input.text, false)).text;
    const vec = await this.tryEmbed(input.title, body);
    const now = this.now();
    const id = await this.store.tx(async () => {
      await this.checkCap(viewer);
      const { folder } = await this.access.placeNew(viewer, input.text, true);
      const noteId = await this.store.notes.insert({
        uuid: randomUUID(),
        userId: viewer.userId,
        folderId: folder?.id ?? null,
        title: input.title,
        body,
        source: "note",
        sourceUrl: null,
        contentKey: null,
        createdMs: now,
        updatedMs: now,
        tags: parseTags(body),
      });
      await this.syncCard(viewer.userId, noteId, body, now);
      if (vec) await this.store.vectors.put(noteId, this.embedder.id, vec);
      return noteId;
    });
    if (vec) await this.index.put(id, vec);
    return this.fullById(id, viewer);
  }

  async update(
    viewer: Viewer,
    input: { note_id: string; title?: string; text?: string; mode: UpdateMode },
  ): Promise<NoteFull> {
    const note = this.access.writable(
      viewer,
      await this.store.notes.visibleByUuid(await this.access.scope(viewer), input.note_id),
    );
    if (input.title === undefined && input.text === undefined) {
      throw new DexiError("NOTHING_TO_UPDATE", "Nothing to update");
    }
    checkNoteText("title", input.title);
    checkNoteText("text", input.text);
    const title = input.title ?? note.title;
    const body =
      input.text === undefined
        ? note.body
        : input.mode === "append"
          ? appendText(note.body, input.text)
          : input.text;
    if (body !== note.body) this.access.checkUpdate(viewer, body);
    const changed = title !== note.title || body !== note.body;
    const vec = changed ? await this.tryEmbed(title, body) : undefined;
    const now = this.now();
    await this.store.tx(async () => {
      await this.store.notes.update(note.id, { title, body, updatedMs: now, tags: parseTags(body) });
      await this.syncCard(viewer.userId, note.id, body, now);
      if (vec) await this.store.vectors.put(note.id, this.embedder.id, vec);
    });
    if (vec) await this.index.put(note.id, vec);
    return this.fullById(note.id, viewer);
  }

  /**
   * Deletes a note. An imported note's key is remembered (see Tombstones), so importing or polling its
   * source again does not bring it back; `remember: false` is for notes whose source is gone (prune).
   */
  async delete(viewer: Viewer, uuid: string, options: { remember?: boolean } = {}): Promise<Deleted> {
    const note = this.access.writable(
      viewer,
      await this.store.notes.visibleByUuid(await this.access.scope(viewer), uuid),
    );
    await this.store.tx(async () => {
      const key = await this.store.notes.contentKeyOf(note.id);
      if (key !== null && options.remember !== false)
        await this.store.tombstones.remember(note.user_id, key, this.now());
      await this.store.notes.delete(note.id);
    });
    await this.index.remove(note.id);
    return { deleted: true, id: note.uuid, title: note.title };
  }

  /** Shares an own note with the owner's team (read-only for team-mates), or stops sharing it. */
  async share(viewer: Viewer, uuid: string, shared: boolean): Promise<NoteFull> {
    const note = this.access.writable(
      viewer,
      await this.store.notes.visibleByUuid(await this.access.scope(viewer), uuid),
    );
    await this.store.notes.setShared(note.id, shared);
    return this.fullById(note.id, viewer);
  }

  /** Files an own note into a folder (created when new), or takes it out of any with null. */
  async file(viewer: Viewer, uuid: string, folder: string | null): Promise<NoteFull> {
    const name = folder === null ? null : checkFolderName(folder);
    const note = this.access.writable(
      viewer,
      await this.store.notes.visibleByUuid(await this.access.scope(viewer), uuid),
    );
    await this.store.tx(async () => {
      const folderId =
        name === null ? null : (await this.store.accounts.ensureFolder(viewer.userId, name)).id;
      await this.store.notes.setFolder(note.id, folderId);
    });
    return this.fullById(note.id, viewer);
  }

  // --- review ---

  async dueReviews(viewer: Viewer, limit: number): Promise<DueReviews> {
    const { rows, total } = await this.store.notes.dueCards(
      await this.access.scope(viewer),
      this.now(),
      limit,
    );
    return {
      items: rows.map((r) => ({
        id: r.uuid,
        title: r.title,
        text: r.body,
        due_at: isoUtc(r.due_ms),
        interval_days: r.interval_days,
        repetitions: r.repetitions,
        is_new: r.reviews === 0,
      })),
      due_count: total,
    };
  }

  async grade(viewer: Viewer, uuid: string, grade: Grade): Promise<Graded> {
    const scope = { ...(await this.access.scope(viewer)), teammates: [] };
    const note = await this.store.notes.visibleByUuid(scope, uuid);
    if (!note) {
      if (await this.store.notes.visibleByUuid(await this.access.scope(viewer), uuid)) {
        throw new DexiError("NOT_IN_REVIEW", "Note is not in review");
      }
      throw noteNotFound();
    }
    const card = await this.store.notes.card(note.id);
    if (!card) throw new DexiError("NOT_IN_REVIEW", "Note is not in review");
    const now = this.now();
    const next = schedule(
      { intervalDays: card.interval_days, ease: card.ease, repetitions: card.repetitions },
      grade,
      now,
    );
    await this.store.tx(() =>
      this.store.notes.saveCard({
        note_id: note.id,
        due_ms: next.dueMs,
        interval_days: next.intervalDays,
        ease: next.ease,
        repetitions: next.repetitions,
        reviews: card.reviews + 1,
      }),
    );
    return {
      id: note.uuid,
      grade,
      due_at: isoUtc(next.dueMs),
      interval_days: next.intervalDays,
      ease_factor: next.ease,
      repetitions: next.repetitions,
    };
  }

  /** Enrols or drops a note's card after a write, by the owner's review deck tags. */
  async syncCard(userId: number, noteId: number, body: string, nowMs: number): Promise<void> {
    const deck = new Set((await this.store.accounts.settings(userId)).reviewTags);
    if (parseTags(body).some((t) => deck.has(t.tag))) await this.store.notes.enrol(noteId, nowMs);
    else await this.store.notes.unenrol(noteId);
  }

  /** Re-applies a user's review deck to all their notes (after `dexi settings --review-tags`). */
  syncDeck(userId: number): Promise<{ enrolled: number; dropped: number }> {
    return this.store.tx(async () => {
      const deck = (await this.store.accounts.settings(userId)).reviewTags;
      const want = new Set(await this.store.notes.ownIdsWithTags(userId, deck));
      const have = new Set(await this.store.notes.ownCardIds(userId));
      let enrolled = 0;
      let dropped = 0;
      const now = this.now();
      for (const id of want) {
        if (have.has(id)) continue;
        await this.store.notes.enrol(id, now);
        enrolled++;
      }
      for (const id of have) {
        if (want.has(id)) continue;
        await this.store.notes.unenrol(id);
        dropped++;
      }
      return { enrolled, dropped };
    });
  }

  // --- embeddings ---

  /**
   * Embeds notes with no vector from the current model (new model, failed embeds, imports done
   * without vectors). `embedder` may be a worker pool with the same model id.
   */
  async backfill(
    options: {
      batch?: number;
      embedder?: Embedder;
      /** Drop every stored vector first (`dexi reindex --force`). */
      force?: boolean;
      onProgress?: (done: number, total: number) => void;
    } = {},
  ) {
    const embedder = options.embedder ?? this.embedder;
    if (embedder.id !== this.embedder.id)
      throw new Error(`backfill with ${embedder.id} into an index of ${this.embedder.id}`);
    // Every vector goes, of any model, so that each note is embedded again by the current one.
    if (options.force) await this.store.tx(() => this.store.vectors.clear());
    const total = await this.store.vectors.countMissing(embedder.id);
    let done = 0;
    const batch = options.batch ?? 64;
    while (true) {
      // Claimed, so instances backfilling one shared database embed each note once.
      const rows = await this.store.vectors.claimMissing(embedder.id, batch, this.now(), EMBED_LEASE_MS);
      if (rows.length === 0) break;
      const vecs = await embedder.embed(rows.map((r) => noteText(r.title, r.body)));
      await this.store.tx(async () => {
        for (const [i, r] of rows.entries()) await this.store.vectors.put(r.id, embedder.id, vecs[i]!);
      });
      done += rows.length;
      options.onProgress?.(done, total);
    }
    // Warms the in-process index for the next search; with pgvector there is none to warm.
    if (!this.store.vectorSearch) await this.index.fresh();
    return { embedded: done };
  }

  private async tryEmbed(title: string, body: string): Promise<Float32Array | undefined> {
    try {
      const [vec] = await this.embedder.embed([noteText(title, body)]);
      return vec;
    } catch (err) {
      // The note is still saved; `dexi reindex` (or the next backfill) embeds it later.
      this.log(`dexi: could not embed a note (${(err as Error).message}); it is saved without a vector`);
      return undefined;
    }
  }

  private async embedOrFail(texts: string[]): Promise<Float32Array[]> {
    try {
      return await this.embedder.embed(texts);
    } catch (err) {
      this.log(`dexi: embedding failed: ${(err as Error).stack ?? err}`);
      throw new DexiError(
        "EMBEDDINGS_UNAVAILABLE",
        `The embedding model is unavailable: ${(err as Error).message}`,
      );
    }
  }

  /** Refuses a note past the plan's cap, which counts every note of the account. */
  private async checkCap(viewer: Viewer): Promise<void> {
    const { plan, noteCap } = await this.store.accounts.settings(viewer.userId);
    if (noteCap !== null && (await this.store.notes.countOwn(viewer.userId)) >= noteCap)
      throw this.access.capReached(viewer, plan, noteCap);
  }

  private async fullById(id: number, viewer: Viewer): Promise<NoteFull> {
    const row = (await this.store.notes.byId(id))!;
    return toFull(row, (await this.store.notes.tagsOf([id])).get(id) ?? [], viewer.userId);
  }

  private async items(rows: NoteRow[], viewer: Viewer): Promise<NoteItem[]> {
    // Rows may come with their tags (a store that read them in the same query); the rest are read.
    const unread = rows.filter((r) => r.tags === undefined).map((r) => r.id);
    const tags = unread.length > 0 ? await this.store.notes.tagsOf(unread) : new Map<number, string[]>();
    return rows.map((r) => toItem(r, r.tags ?? tags.get(r.id) ?? [], viewer.userId));
  }
}

/**
 * A note's title and text may not hold U+0000 (NUL): PostgreSQL text cannot store it, and a note must
 * read back exactly as written whichever store keeps it, so the character is refused, never dropped.
 */
export function checkNoteText(field: "title" | "text", value: string | undefined): void {
  if (value?.includes("\u0000")) {
    throw new DexiError(
      "INVALID_ARGUMENT",
      `The ${field} holds the character U+0000 (NUL), which a note cannot keep`,
    );
  }
}

/** Append mode: a blank line between the old body and the new text (none when the body is empty). */
export function appendText(body: string, text: string): string {
  if (body === "") return text;
  if (text === "") return body;
  return `${body}${body.endsWith("\n") ? "\n" : "\n\n"}${text}`;
}
