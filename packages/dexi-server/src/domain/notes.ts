import { randomUUID } from "node:crypto";
import type { Embedder } from "../embed/types.js";
import { noteText } from "../embed/types.js";
import { VectorIndex } from "../embed/vector-index.js";
import type { ListFilter, NoteRow, Store } from "../store/index.js";
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

  get(viewer: Viewer, uuid: string): NoteFull {
    const row = this.store.notes.visibleByUuid(this.access.scope(viewer), uuid);
    if (!row) throw noteNotFound();
    return toFull(row, this.store.notes.tagsOf([row.id]).get(row.id) ?? [], viewer.userId);
  }

  search(viewer: Viewer, query: string, page: number, size: number): NotePage {
    const match = ftsQuery(query);
    if (!match) return { items: [], total: 0, page };
    const { rows, total } = this.store.notes.search(
      this.access.scope(viewer),
      match,
      size,
      (page - 1) * size,
    );
    return { items: this.items(rows, viewer), total, page };
  }

  list(viewer: Viewer, o: ListOptions): NotePage {
    const filter: ListFilter = { sort: o.sort };
    if (o.source !== "all") filter.source = o.source;
    if (o.tag !== undefined) filter.tags = tagCandidates(o.tag);
    if (o.folder !== undefined) filter.folder = this.access.resolveFolder(viewer, o.folder);
    if (o.period) {
      const { from, to } = periodRange(o.period, this.now(), this.timeZoneOf(viewer.userId));
      filter.from = from;
      filter.to = to;
    }
    const { rows, total } = this.store.notes.list(
      this.access.scope(viewer),
      filter,
      o.size,
      (o.page - 1) * o.size,
    );
    return { items: this.items(rows, viewer), total, page: o.page };
  }

  /** The zone a user's periods are in: their own setting, else the server's. */
  timeZoneOf(userId: number): string {
    return this.store.accounts.settings(userId).timeZone ?? this.timeZone;
  }

  async semantic(viewer: Viewer, query: string, size: number): Promise<NoteWindow> {
    const [vec] = await this.embedOrFail([query]);
    return { items: this.nearest(viewer, vec!, size) };
  }

  async similar(viewer: Viewer, uuid: string, size: number): Promise<NoteWindow> {
    const row = this.store.notes.visibleByUuid(this.access.scope(viewer), uuid);
    if (!row) throw noteNotFound();
    let vec = this.index.fresh().vector(row.id);
    if (!vec) {
      [vec] = await this.embedOrFail([noteText(row.title, row.body)]);
      this.saveVector(row.id, vec!);
    }
    return { items: this.nearest(viewer, vec!, size, row.id) };
  }

  private nearest(viewer: Viewer, vec: Float32Array, size: number, exclude?: number): NoteItem[] {
    const scope = this.access.scope(viewer);
    const only = isRestricted(viewer) ? this.store.notes.visibleIds(scope) : undefined;
    // The only user, unrestricted: every vector is visible, so no look-ups while ranking.
    const everything = !only && this.store.notes.seesEverything(scope);
    const hits = this.index.search(
      vec,
      size,
      everything ? (ids) => new Set(ids) : (ids) => this.store.notes.visibleAmong(scope, ids),
      only,
      exclude,
    );
    const rows = this.store.notes.rowsByIds(hits.map((h) => h.id));
    const tags = this.store.notes.tagsOf(rows.map((r) => r.id));
    const cos = new Map(hits.map((h) => [h.id, h.cosine]));
    return rows.map((r) => toItem(r, tags.get(r.id) ?? [], viewer.userId, cos.get(r.id)));
  }

  tags(viewer: Viewer, kind: TagKind, limit: number): TagCounts {
    return { tags: this.store.notes.tagCounts(this.access.scope(viewer), kind, limit) };
  }

  folders(viewer: Viewer): FolderCounts {
    const { folders, unfiled } = this.access.visibleFolders(viewer);
    return {
      folders: folders.map((f) => ({ name: f.name, note_count: f.note_count })),
      unfiled_count: unfiled,
    };
  }

  // --- writes ---

  async create(viewer: Viewer, input: { title: string; text: string }): Promise<NoteFull> {
    this.checkCap(viewer.userId);
    const body = this.access.placeNew(viewer, input.text, false).text;
    const vec = await this.tryEmbed(input.title, body);
    const now = this.now();
    const id = this.store.tx(() => {
      this.checkCap(viewer.userId);
      const { folder } = this.access.placeNew(viewer, input.text, true);
      const noteId = this.store.notes.insert({
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
      this.syncCard(viewer.userId, noteId, body, now);
      if (vec) this.store.vectors.put(noteId, this.embedder.id, vec);
      return noteId;
    });
    if (vec) this.index.put(id, vec);
    return this.fullById(id, viewer);
  }

  async update(
    viewer: Viewer,
    input: { note_id: string; title?: string; text?: string; mode: UpdateMode },
  ): Promise<NoteFull> {
    const note = this.access.writable(
      viewer,
      this.store.notes.visibleByUuid(this.access.scope(viewer), input.note_id),
    );
    if (input.title === undefined && input.text === undefined) {
      throw new DexiError("NOTHING_TO_UPDATE", "Nothing to update");
    }
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
    this.store.tx(() => {
      this.store.notes.update(note.id, { title, body, updatedMs: now, tags: parseTags(body) });
      this.syncCard(viewer.userId, note.id, body, now);
      if (vec) this.store.vectors.put(note.id, this.embedder.id, vec);
    });
    if (vec) this.index.put(note.id, vec);
    return this.fullById(note.id, viewer);
  }

  /**
   * Deletes a note. An imported note's key is remembered (see Tombstones), so importing or polling its
   * source again does not bring it back; `remember: false` is for notes whose source is gone (prune).
   */
  delete(viewer: Viewer, uuid: string, options: { remember?: boolean } = {}): Deleted {
    const note = this.access.writable(
      viewer,
      this.store.notes.visibleByUuid(this.access.scope(viewer), uuid),
    );
    this.store.tx(() => {
      const key = this.store.notes.contentKeyOf(note.id);
      if (key !== null && options.remember !== false)
        this.store.tombstones.remember(note.user_id, key, this.now());
      this.store.notes.delete(note.id);
    });
    this.index.remove(note.id);
    return { deleted: true, id: note.uuid, title: note.title };
  }

  /** Shares an own note with the owner's team (read-only for team-mates), or stops sharing it. */
  share(viewer: Viewer, uuid: string, shared: boolean): NoteFull {
    const note = this.access.writable(
      viewer,
      this.store.notes.visibleByUuid(this.access.scope(viewer), uuid),
    );
    this.store.notes.setShared(note.id, shared);
    return this.fullById(note.id, viewer);
  }

  /** Files an own note into a folder (created when new), or takes it out of any with null. */
  file(viewer: Viewer, uuid: string, folder: string | null): NoteFull {
    const name = folder === null ? null : checkFolderName(folder);
    const note = this.access.writable(
      viewer,
      this.store.notes.visibleByUuid(this.access.scope(viewer), uuid),
    );
    this.store.tx(() => {
      const folderId = name === null ? null : this.store.accounts.ensureFolder(viewer.userId, name).id;
      this.store.notes.setFolder(note.id, folderId);
    });
    return this.fullById(note.id, viewer);
  }

  // --- review ---

  dueReviews(viewer: Viewer, limit: number): DueReviews {
    const { rows, total } = this.store.notes.dueCards(this.access.scope(viewer), this.now(), limit);
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

  grade(viewer: Viewer, uuid: string, grade: Grade): Graded {
    const scope = { ...this.access.scope(viewer), teammates: [] };
    const note = this.store.notes.visibleByUuid(scope, uuid);
    if (!note) {
      if (this.store.notes.visibleByUuid(this.access.scope(viewer), uuid)) {
        throw new DexiError("NOT_IN_REVIEW", "Note is not in review");
      }
      throw noteNotFound();
    }
    const card = this.store.notes.card(note.id);
    if (!card) throw new DexiError("NOT_IN_REVIEW", "Note is not in review");
    const now = this.now();
    const next = schedule(
      { intervalDays: card.interval_days, ease: card.ease, repetitions: card.repetitions },
      grade,
      now,
    );
    this.store.tx(() =>
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
  syncCard(userId: number, noteId: number, body: string, nowMs: number): void {
    const deck = new Set(this.store.accounts.settings(userId).reviewTags);
    if (parseTags(body).some((t) => deck.has(t.tag))) this.store.notes.enrol(noteId, nowMs);
    else this.store.notes.unenrol(noteId);
  }

  /** Re-applies a user's review deck to all their notes (after `dexi settings --review-tags`). */
  syncDeck(userId: number): { enrolled: number; dropped: number } {
    return this.store.tx(() => {
      const deck = this.store.accounts.settings(userId).reviewTags;
      const want = new Set(this.store.notes.ownIdsWithTags(userId, deck));
      const have = new Set(this.store.notes.ownCardIds(userId));
      let enrolled = 0;
      let dropped = 0;
      const now = this.now();
      for (const id of want) {
        if (have.has(id)) continue;
        this.store.notes.enrol(id, now);
        enrolled++;
      }
      for (const id of have) {
        if (want.has(id)) continue;
        this.store.notes.unenrol(id);
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
    if (options.force) this.store.tx(() => this.store.vectors.clear());
    const total = this.store.vectors.countMissing(embedder.id);
    let done = 0;
    const batch = options.batch ?? 64;
    while (true) {
      const rows = this.store.vectors.missing(embedder.id, batch);
      if (rows.length === 0) break;
      const vecs = await embedder.embed(rows.map((r) => noteText(r.title, r.body)));
      this.store.tx(() => {
        rows.forEach((r, i) => {
          this.store.vectors.put(r.id, embedder.id, vecs[i]!);
        });
      });
      done += rows.length;
      options.onProgress?.(done, total);
    }
    this.index.fresh();
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

  private saveVector(noteId: number, vec: Float32Array): void {
    this.store.tx(() => this.store.vectors.put(noteId, this.embedder.id, vec));
    this.index.put(noteId, vec);
  }

  private checkCap(userId: number): void {
    const { plan, noteCap } = this.store.accounts.settings(userId);
    if (noteCap !== null && this.store.notes.countOwn(userId) >= noteCap) {
      throw new DexiError(
        "LIMIT_REACHED",
        `Note limit reached: the ${plan} plan allows ${noteCap} notes. Delete notes or upgrade the plan to create more.`,
      );
    }
  }

  private fullById(id: number, viewer: Viewer): NoteFull {
    const row = this.store.notes.byId(id)!;
    return toFull(row, this.store.notes.tagsOf([id]).get(id) ?? [], viewer.userId);
  }

  private items(rows: NoteRow[], viewer: Viewer): NoteItem[] {
    const tags = this.store.notes.tagsOf(rows.map((r) => r.id));
    return rows.map((r) => toItem(r, tags.get(r.id) ?? [], viewer.userId));
  }
}

/** Append mode: a blank line between the old body and the new text (none when the body is empty). */
export function appendText(body: string, text: string): string {
  if (body === "") return text;
  if (text === "") return body;
  return `${body}${body.endsWith("\n") ? "\n" : "\n\n"}${text}`;
}
