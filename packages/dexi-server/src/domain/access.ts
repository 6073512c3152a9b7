/**
 * Every access rule in one place: who sees which notes, and how a restricted connection's writes stay
 * inside its boundary. Tools and importers never decide visibility themselves.
 *
 * Unrestricted: a user sees their own notes plus team-mates' notes shared with the team (read-only).
 * A share is with the team its owner is in: it ends when the owner leaves that team or joins another.
 * Restricted to a folder, a tag, or both:
 *  1. only the user's OWN notes inside the boundary are visible (team-shared notes are not);
 *  2. anything outside behaves exactly like something that does not exist (same errors, same counts);
 *  3. list_tags / list_folders count only in-boundary notes; outside folder names and tags never appear,
 *     nor a folder holding no in-boundary note;
 *  4. create_note files into the boundary folder (creating it when needed) and appends the tag when missing;
 *  5. update_note may not remove the boundary tag (the error names it);
 *  6. delete_note and the review tools act only on in-boundary notes;
 *  7. create_note at the plan's note cap, which counts every note of the account, is refused without
 *     the cap or the plan: beside the notes it sees, either would count the notes outside.
 */
import type { Store } from "../store/index.js";
import type { FolderRow } from "../store/accounts.js";
import type { NoteRow, Scope } from "../store/index.js";
import { DexiError, folderNotFound } from "./errors.js";
import { checkTag, hasTag, tagCheckMessage } from "./tags.js";

export interface Restriction {
  folder?: string;
  tag?: string;
}

/** Who is asking: a user, the scopes the connection was granted, and its boundary if any. */
export interface Viewer {
  userId: number;
  scopes: readonly string[];
  restriction?: Restriction;
}

/** A restriction that could never hold a note, refused where it is given (start-up, a consent page). */
export class InvalidRestriction extends Error {
  override readonly name = "InvalidRestriction";
}

/**
 * A restriction as a connection keeps it, or InvalidRestriction saying why it cannot be one:
 * the folder name trimmed (and never `unfiled`, which list_notes reads as "in no folder"), the tag as
 * Dexi's own tag parser reads it back from a note (see checkTag), so what create_note writes inside
 * the boundary is found inside it again.
 */
export function checkRestriction(r: Restriction): Restriction {
  const out: Restriction = {};
  if (r.folder !== undefined) {
    const folder = r.folder.trim();
    if (folder === "") throw new InvalidRestriction("Restriction folder is empty: name a folder");
    if (folder.toLowerCase() === "unfiled") {
      throw new InvalidRestriction(
        `Restriction folder "${folder}" is not a folder name: list_notes reads "unfiled" as notes in no folder, so no call could name it`,
      );
    }
    out.folder = folder;
  }
  if (r.tag !== undefined) out.tag = restrictionTag(r.tag);
  return out;
}

/** A restriction's tag as stored: `#x`/`@x` lower-cased; a bare word means the hashtag. */
export function restrictionTag(tag: string): string {
  const check = checkTag(tag);
  if (!check.ok) throw new InvalidRestriction(`Restriction tag ${tagCheckMessage(check)}`);
  return check.tag;
}

/**
 * A folder name a note is filed under, trimmed. Never empty, never `unfiled` (list_notes reads that
 * as "in no folder", so a folder of that name could never be listed), never holding U+0000.
 */
export function checkFolderName(name: string): string {
  const folder = name.trim();
  if (folder === "") throw new DexiError("INVALID_ARGUMENT", "A folder needs a name");
  if (folder.toLowerCase() === "unfiled")
    throw new DexiError(
      "INVALID_ARGUMENT",
      `"${folder}" is not a folder name: list_notes reads "unfiled" as notes in no folder`,
    );
  // Neither store could keep it alike (PostgreSQL text cannot hold it), as in a note's text.
  if (folder.includes("\u0000"))
    throw new DexiError("INVALID_ARGUMENT", "A folder name cannot hold the character U+0000 (NUL)");
  return folder;
}

export function isRestricted(viewer: Viewer): boolean {
  return !!(viewer.restriction?.folder || viewer.restriction?.tag);
}

export class Access {
  constructor(private readonly store: Store) {}

  /** The visibility scope for reads (rules 1 and 2). */
  async scope(viewer: Viewer): Promise<Scope> {
    const r = viewer.restriction;
    if (!isRestricted(viewer)) {
      return { userId: viewer.userId, teammates: await this.store.accounts.teammates(viewer.userId) };
    }
    const scope: Scope = { userId: viewer.userId, teammates: [] };
    if (r?.folder)
      scope.folderId = (await this.store.accounts.folderByName(viewer.userId, r.folder))?.id ?? null;
    if (r?.tag) scope.tag = restrictionTag(r.tag);
    return scope;
  }

  /**
   * Folders the viewer may name (rule 3): exactly the ones list_folders shows. Under a restriction,
   * those holding a visible note: a folder exists once a note was filed there, so an empty one shown
   * to a folder-and-tag connection would tell that notes outside its boundary are (or were) in it.
   */
  async visibleFolders(viewer: Viewer): Promise<{
    folders: { id: number; name: string; note_count: number }[];
    unfiled: number;
  }> {
    const counts = await this.store.notes.folderCounts(await this.scope(viewer));
    if (!isRestricted(viewer)) return counts;
    // Under a folder boundary every other folder counts 0 visible notes.
    return { folders: counts.folders.filter((f) => f.note_count > 0), unfiled: counts.unfiled };
  }

  /** A folder named in list_notes: case-insensitive, or `Folder not found: X` when not visible. */
  async resolveFolder(viewer: Viewer, name: string): Promise<number | "unfiled"> {
    if (name.trim().toLowerCase() === "unfiled") return "unfiled";
    const found = await this.store.accounts.folderByName(viewer.userId, name);
    if (!found) throw folderNotFound(name);
    if (isRestricted(viewer) && !(await this.visibleFolders(viewer)).folders.some((f) => f.id === found.id)) {
      throw folderNotFound(name);
    }
    return found.id;
  }

  /**
   * Puts a user in a team (null: in none). A share is with the team its owner shared it in, and a
   * note keeps no team of its own, so when the user's team changes every share of theirs ends:
   * otherwise a note shared with one team would be shown to the next team its owner joins. Returns
   * how many notes stopped being shared (0 when the team is the one they are in).
   */
  async moveToTeam(userId: number, teamId: number | null): Promise<number> {
    return this.store.tx(async () => {
      if ((await this.store.accounts.userById(userId))?.team_id === teamId) return 0;
      await this.store.accounts.setTeam(userId, teamId);
      return this.store.notes.unshareAll(userId);
    });
  }

  /** The note a write may touch: visible (else `Note not found`) and the viewer's own (else read-only). */
  writable(viewer: Viewer, note: NoteRow | undefined): NoteRow {
    if (!note) throw new DexiError("NOT_FOUND", "Note not found");
    if (note.user_id !== viewer.userId) {
      throw new DexiError(
        "READ_ONLY",
        `Note is read-only: it belongs to ${note.owner_name} and is shared with your team`,
      );
    }
    return note;
  }

  /** Where a new note goes and what its text becomes (rule 4). */
  async placeNew(
    viewer: Viewer,
    text: string,
    createFolder: boolean,
  ): Promise<{ folder: FolderRow | null; text: string }> {
    const r = viewer.restriction;
    const folder =
      r?.folder && createFolder ? await this.store.accounts.ensureFolder(viewer.userId, r.folder) : null;
    let out = text;
    if (r?.tag) {
      const tag = restrictionTag(r.tag);
      if (!hasTag(out, tag)) out = out === "" ? tag : `${out}${/\s$/.test(out) ? "" : " "}${tag}`;
    }
    return { folder, text: out };
  }

  /** The refusal of a new note at the plan's note cap (rule 7 for a restricted viewer). */
  capReached(viewer: Viewer, plan: string, noteCap: number): DexiError {
    return new DexiError(
      "LIMIT_REACHED",
      isRestricted(viewer)
        ? "Note limit reached: this account holds as many notes as its plan allows. Delete notes or upgrade the plan to create more."
        : `Note limit reached: ${plan === "unlimited" ? "this account" : `the ${plan} plan`} allows ${noteCap} note${noteCap === 1 ? "" : "s"}. Delete notes or upgrade the plan to create more.`,
    );
  }

  /** Refuses a new body that drops the boundary tag (rule 5). */
  checkUpdate(viewer: Viewer, newText: string): void {
    const r = viewer.restriction;
    if (!r?.tag) return;
    const tag = restrictionTag(r.tag);
    if (!hasTag(newText, tag)) {
      throw new DexiError(
        "RESTRICTED_TAG",
        `This connection is restricted to notes tagged ${tag}; the new text would remove ${tag} from the note`,
      );
    }
  }
}
