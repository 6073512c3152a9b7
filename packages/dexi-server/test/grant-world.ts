/**
 * A world of notes for the grant attack suites (restriction-leaks, restriction-property): notes of
 * several users, filed, tagged, shared, each carrying a marker word of its own (title, body, its own
 * hashtag and mention), and what a viewer is granted by Dexi's Access rules, written out here
 * independently of src/domain/access.ts so the suites compare the server against the rules, not
 * against itself.
 */
import { randomUUID } from "node:crypto";
import type { Restriction, Viewer } from "../src/domain/access.js";
import { type Session, storeRows, type TestApp, userId } from "./helpers.js";

export interface NoteSpec {
  /** Unique among the world's notes, and never a prefix of another's: its marker is `qx${name}`. */
  name: string;
  owner: string;
  /** A folder of the owner's, or undefined for none. */
  folder?: string;
  /** Tags written into the body besides the note's own marker tags. */
  tags: string[];
  shared: boolean;
}

export interface Placed extends NoteSpec {
  uuid: string;
}

/** Who the attacker is: a user, its scopes, and a restriction (none: an unrestricted reader of shares). */
export interface Grant {
  user: string;
  scopes: string[];
  restriction?: Restriction;
}

export const marker = (name: string) => `qx${name}`;

export function bodyOf(n: NoteSpec): string {
  const m = marker(n.name);
  return `roadmap client ${m}b ${n.tags.join(" ")} #${m}h @${m}m`;
}

export const titleOf = (n: NoteSpec) => `${marker(n.name)}t plan`;

/** The notes a grant may see, by the README's Access rules. */
export function inGrant(note: NoteSpec, grant: Grant, teams: Record<string, string | undefined>): boolean {
  const r = grant.restriction;
  if (r && (r.folder !== undefined || r.tag !== undefined)) {
    if (note.owner !== grant.user) return false;
    if (r.folder !== undefined && note.folder?.toLowerCase() !== r.folder.trim().toLowerCase()) return false;
    if (r.tag !== undefined && !note.tags.map((t) => t.toLowerCase()).includes(r.tag.toLowerCase()))
      return false;
    return true;
  }
  if (note.owner === grant.user) return true;
  const team = teams[grant.user];
  return note.shared && team !== undefined && teams[note.owner] === team;
}

/**
 * Writes the world through the domain as each owner (unrestricted), in order, and joins users to their
 * teams. Each note gets its own creation time from `advance` (the app's clock). A note `skip` names is
 * not written (its clock step is still taken, so the others keep their times; its folder is still
 * made), and is placed with a uuid no note has: the twin of a world, without the notes outside a grant.
 */
export async function build(
  app: TestApp,
  notes: readonly NoteSpec[],
  teams: Record<string, string | undefined>,
  advance: () => void,
  skip: (n: NoteSpec) => boolean = () => false,
): Promise<Placed[]> {
  const teamIds = new Map<string, number>();
  for (const [user, team] of Object.entries(teams)) {
    const id = await userId(app, user);
    if (team === undefined) continue;
    if (!teamIds.has(team)) teamIds.set(team, (await app.store.accounts.createTeam(team, Date.now())).id);
    await app.store.accounts.setTeam(id, teamIds.get(team)!);
  }
  const out: Placed[] = [];
  for (const n of notes) {
    const owner = await ownerViewer(app, n.owner);
    advance();
    if (skip(n)) {
      // Its folder stays: folders are the account's, kept when their notes go.
      if (n.folder !== undefined) await app.store.accounts.ensureFolder(owner.userId, n.folder);
      out.push({ ...n, uuid: nobody() });
      continue;
    }
    const { id } = await app.notes.create(owner, { title: titleOf(n), text: bodyOf(n) });
    if (n.folder !== undefined) await app.notes.file(owner, id, n.folder);
    if (n.shared) await app.notes.share(owner, id, true);
    out.push({ ...n, uuid: id });
  }
  return out;
}

export async function ownerViewer(app: TestApp, name: string): Promise<Viewer> {
  return { userId: await userId(app, name), scopes: ["notes:read", "notes:write"] };
}

/** Everything a note is in the store, by uuid: its row, tags, card; and every folder. */
export async function snapshot(app: TestApp): Promise<Map<string, string>> {
  const notes = await storeRows<{ uuid: string }>(
    app,
    "SELECT n.uuid, n.user_id, n.folder_id, n.title, n.body, n.source, n.source_url, n.shared, n.created_ms, n.updated_ms FROM notes n ORDER BY n.uuid",
  );
  const tags = await storeRows<{ uuid: string }>(
    app,
    "SELECT n.uuid, t.tag, t.kind, t.pos FROM note_tags t JOIN notes n ON n.id = t.note_id ORDER BY n.uuid, t.pos",
  );
  const cards = await storeRows<{ uuid: string }>(
    app,
    "SELECT n.uuid, c.due_ms, c.interval_days, c.ease, c.repetitions, c.reviews FROM review_cards c JOIN notes n ON n.id = c.note_id ORDER BY n.uuid",
  );
  const folders = await storeRows<{ id: number }>(app, "SELECT id, user_id, name FROM folders ORDER BY id");
  const out = new Map<string, string>();
  const add = (key: string, row: unknown) => out.set(key, `${out.get(key) ?? ""}${JSON.stringify(row)}\n`);
  for (const r of notes) add(r.uuid, r);
  for (const r of tags) add(r.uuid, r);
  for (const r of cards) add(r.uuid, r);
  for (const r of folders) add(`folder ${r.id}`, r);
  return out;
}

/**
 * Every row of every table, each table's rows sorted: what "changed nothing" is compared on, derived
 * data (vectors, counters, the full-text index) included.
 */
export async function allRows(app: TestApp): Promise<Map<string, string[]>> {
  const tables = await storeRows<{ name: string }>(
    app,
    app.store.kind === "sqlite"
      ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
      : "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  const out = new Map<string, string[]>();
  for (const { name } of tables) {
    const rows = await storeRows<unknown>(app, `SELECT * FROM "${name}"`);
    out.set(name, rows.map((r) => JSON.stringify(r)).sort());
  }
  return out;
}

/** Takes the stored vector away from the note `uuid`: a note not yet embedded (or embedded by another model). */
export async function unembed(app: TestApp, uuid: string): Promise<void> {
  const row = await app.store.notes.byUuid(uuid);
  await app.store.tx(() => app.store.vectors.remove(row!.id));
}

/** Every byte of a call's answer a client receives: content, structured content, the error flag. */
export async function answer(s: Session, name: string, args: Record<string, unknown>): Promise<string> {
  const r = await s.raw(name, args);
  return JSON.stringify({ isError: r.isError ?? false, content: r.content, structured: r.structuredContent });
}

/** A uuid no note has. */
export const nobody = () => randomUUID();
