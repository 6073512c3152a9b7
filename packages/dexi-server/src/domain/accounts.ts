import { EMBEDDER_CONFIG_KEYS } from "../embed/config.js";
import type { Store, UserRow, UserSettings } from "../store/index.js";
import { DexiError } from "./errors.js";
import { checkName, refuseLookalike } from "./names.js";
import type { NotesService } from "./notes.js";
import { checkTag, tagCheckMessage } from "./tags.js";
import { canonicalTimeZone } from "./time.js";

export const EMBEDDING_PROVIDERS = ["use", "openai", "hash"] as const;

const invalid = (message: string) => new DexiError("INVALID_ARGUMENT", message);

/** A change to a user's settings; `null` forgets a value (the zone, the cap). */
export interface SettingsPatch {
  timeZone?: string | null;
  reviewTags?: readonly string[];
  plan?: string;
  noteCap?: number | null;
}

/** The embeddings the server uses unless env overrides them; `null` forgets one. */
export interface EmbeddingsPatch {
  provider?: string | null;
  url?: string | null;
  model?: string | null;
}

/** A zone in its IANA spelling (`europe/berlin` is `Europe/Berlin`), or INVALID_ARGUMENT. */
export function checkTimeZone(text: string): string {
  const zone = canonicalTimeZone(text);
  if (zone === undefined)
    throw invalid(`unknown time zone "${text}" (use an IANA name such as Europe/Berlin)`);
  return zone;
}

/**
 * Review deck tags, each exactly one tag by the tag rules (written into a note it must parse back to
 * itself, as a restriction's tag must), normalised as the parser stores them and deduplicated.
 */
export function checkDeckTags(given: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of given) {
    const check = checkTag(text);
    if (!check.ok) throw invalid(tagCheckMessage(check));
    if (!out.includes(check.tag)) out.push(check.tag);
  }
  return out;
}

/** A plan's note cap: a whole number of notes, or null for no cap. */
export function checkNoteCap(cap: number | null): number | null {
  if (cap !== null && (!Number.isInteger(cap) || cap < 0))
    throw invalid("the note cap is a whole number of notes, 0 or more");
  return cap;
}

export function checkEmbeddingsProvider(provider: string): string {
  if (!(EMBEDDING_PROVIDERS as readonly string[]).includes(provider))
    throw invalid(`unknown embeddings provider "${provider}": use ${EMBEDDING_PROVIDERS.join(", ")}`);
  return provider;
}

/** Users, teams, settings and the saved embeddings config: what the admin CLI changes besides notes. */
export class AccountsService {
  constructor(
    private readonly store: Store,
    private readonly notes: NotesService,
    private readonly now: () => number = Date.now,
  ) {}

  /** The named user (see names.ts), created on first use unless the name looks like another user's. */
  async ensureUser(text: string): Promise<UserRow> {
    const name = checkName("user", text);
    const found = await this.store.accounts.userByName(name);
    if (found) return found;
    await this.refuseLookalikeUser(name);
    return this.store.accounts.ensureUser(name, this.now());
  }

  async addUser(text: string, team?: string): Promise<UserRow> {
    const name = checkName("user", text);
    return this.store.tx(async () => {
      const found = await this.store.accounts.userByName(name);
      if (found) throw invalid(`user ${found.name} already exists`);
      await this.refuseLookalikeUser(name);
      const user = await this.store.accounts.createUser(name, this.now());
      if (team !== undefined) await this.notes.access.moveToTeam(user.id, (await this.ensureTeam(team)).id);
      return user;
    });
  }

  users() {
    return this.store.accounts.listUsers();
  }

  async addTeam(text: string): Promise<void> {
    const name = checkName("team", text);
    await this.store.tx(async () => {
      const found = await this.store.accounts.teamByName(name);
      if (found) throw invalid(`team ${found.name} already exists`);
      await this.refuseLookalikeTeam(name);
      await this.store.accounts.createTeam(name, this.now());
    });
  }

  /**
   * Puts a user (created on first use) into a team (created when new): the team's name, and how many
   * of the user's notes stopped being shared, since a share ends when its owner's team changes.
   */
  joinTeam(team: string, user: string): Promise<{ user: string; team: string; unshared: number }> {
    return this.store.tx(async () => {
      const t = await this.ensureTeam(team);
      const u = await this.ensureUser(user);
      const unshared = await this.notes.access.moveToTeam(u.id, t.id);
      return { user: u.name, team: t.name, unshared };
    });
  }

  /** Takes a user out of their team: how many of their notes stopped being shared. */
  async leaveTeam(user: string): Promise<number> {
    const u = await this.store.accounts.userByName(checkName("user", user));
    if (!u) throw new DexiError("NOT_FOUND", `User not found: ${user}`);
    return this.notes.access.moveToTeam(u.id, null);
  }

  teams() {
    return this.store.accounts.listTeams();
  }

  async settings(userId: number): Promise<UserSettings & { notes: number }> {
    return {
      ...(await this.store.accounts.settings(userId)),
      notes: await this.store.notes.countOwn(userId),
    };
  }

  /**
   * Changes a user's settings, each checked by its rule. New review deck tags re-enrol the user's
   * notes at once; the result says how many cards that added and dropped.
   */
  async updateSettings(
    userId: number,
    patch: SettingsPatch,
  ): Promise<{ enrolled: number; dropped: number } | undefined> {
    const checked: Partial<UserSettings> = {
      ...(patch.timeZone !== undefined
        ? { timeZone: patch.timeZone === null ? null : checkTimeZone(patch.timeZone) }
        : {}),
      ...(patch.reviewTags !== undefined ? { reviewTags: checkDeckTags(patch.reviewTags) } : {}),
      ...(patch.plan !== undefined ? { plan: patch.plan } : {}),
      ...(patch.noteCap !== undefined ? { noteCap: checkNoteCap(patch.noteCap) } : {}),
    };
    await this.store.accounts.updateSettings(userId, checked);
    return checked.reviewTags !== undefined ? this.notes.syncDeck(userId) : undefined;
  }

  /** The saved embeddings config (env overrides it when the server starts), key by key. */
  async embeddings(): Promise<[key: string, value: string][]> {
    const out: [string, string][] = [];
    for (const k of EMBEDDER_CONFIG_KEYS) {
      const v = await this.store.accounts.config(k);
      if (v !== undefined) out.push([k, v]);
    }
    return out;
  }

  async setEmbeddings(patch: EmbeddingsPatch): Promise<void> {
    const provider = patch.provider == null ? patch.provider : checkEmbeddingsProvider(patch.provider);
    await this.store.tx(async () => {
      const saved: [string, string | null | undefined][] = [
        ["embeddings.provider", provider],
        ["embeddings.url", patch.url],
        ["embeddings.model", patch.model],
      ];
      for (const [k, v] of saved) if (v !== undefined) await this.store.accounts.setConfig(k, v || null);
    });
  }

  private async ensureTeam(text: string) {
    const name = checkName("team", text);
    const found = await this.store.accounts.teamByName(name);
    if (found) return found;
    await this.refuseLookalikeTeam(name);
    return this.store.accounts.createTeam(name, this.now());
  }

  private async refuseLookalikeUser(name: string): Promise<void> {
    refuseLookalike(
      "user",
      name,
      (await this.store.accounts.listUsers()).map((u) => u.name),
    );
  }

  private async refuseLookalikeTeam(name: string): Promise<void> {
    refuseLookalike(
      "team",
      name,
      (await this.store.accounts.listTeams()).map((t) => t.name),
    );
  }
}
