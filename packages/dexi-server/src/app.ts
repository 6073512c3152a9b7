import {
  type Caller,
  type HttpRoutes,
  type KitServer,
  OAuthError,
  OAuthErrorCode,
  type TokenVerifier,
} from "@mcpforge/toolkit";
import type { ClientDocuments } from "./auth/documents.js";
import { SignInLimiter } from "./auth/limiter.js";
import { AuthService } from "./auth/service.js";
import { Passwords } from "./auth/users.js";
import { hnswBuildMemoryMb, hnswThreshold, type Identity } from "./config.js";
import { AccountsService } from "./domain/accounts.js";
import { DexiError } from "./domain/errors.js";
import { checkRestriction, type Restriction, type Viewer } from "./domain/access.js";
import { NotesService } from "./domain/notes.js";
import {
  createEmbedder,
  EMBEDDER_CONFIG_KEYS,
  type EmbedderConfig,
  resolveEmbedderConfig,
} from "./embed/config.js";
import type { Embedder } from "./embed/types.js";
import { createDexiServer } from "./mcp/server.js";
import type { DexiContext } from "./mcp/tools/index.js";
import { isPostgresUrl, SqliteStore, type Store } from "./store/index.js";
import { PgStore } from "./store/postgres/store.js";
import { resourceMetadataUrl } from "./web/endpoints.js";
import { createWebRoutes } from "./web/routes.js";

export interface App<S extends Store = Store> {
  store: S;
  notes: NotesService;
  accounts: AccountsService;
  embedderConfig: EmbedderConfig;
  close(): Promise<void>;
}

type AppOptions = {
  embedder?: Embedder;
  now?: () => number;
  log?: (l: string) => void;
  timeZone?: string;
  /** PostgreSQL with pgvector: the HNSW threshold (default DEXI_HNSW_THRESHOLD; unset, exact only). */
  hnswThreshold?: number;
  /** PostgreSQL with pgvector: the most maintenance_work_mem of an HNSW build, MB (default DEXI_HNSW_BUILD_MEMORY). */
  hnswBuildMemoryMb?: number;
};

/**
 * Opens a SQLite database file and wires the domain services (notes, with the configured embedder
 * loaded lazily; accounts) that the MCP server and the admin CLI both go through.
 */
export function openApp(dbPath: string, options: AppOptions = {}): App<SqliteStore> {
  // A URL is never a file name: without this, `postgres://h/db` would become a folder `postgres:`.
  if (isPostgresUrl(dbPath)) {
    throw new DexiError(
      "INVALID_ARGUMENT",
      `--db ${dbPath} names a PostgreSQL database; open it with openAppAt (the bins do)`,
    );
  }
  const store = SqliteStore.open(dbPath);
  return wire(store, (k) => store.sync.accounts.config(k), options);
}

/**
 * Opens the store `--db` names: a postgres:// or postgresql:// URL is PostgreSQL (migrated on
 * connect), anything else a SQLite file (":memory:" allowed).
 */
export async function openAppAt(location: string, options: AppOptions = {}): Promise<App> {
  if (!isPostgresUrl(location)) return openApp(location, options);
  const threshold = "hnswThreshold" in options ? options.hnswThreshold : hnswThreshold();
  const buildMemory = options.hnswBuildMemoryMb ?? hnswBuildMemoryMb();
  const store = await PgStore.open(location, {
    ...(threshold !== undefined ? { hnswThreshold: threshold } : {}),
    ...(buildMemory !== undefined ? { hnswBuildMemoryMb: buildMemory } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const saved = new Map<string, string | undefined>();
  for (const k of EMBEDDER_CONFIG_KEYS) saved.set(k, await store.accounts.config(k));
  return wire(store, (k) => saved.get(k), options);
}

/** The store for a log line: the engine and where it is, a URL without its password. */
export function describeStore(location: string): string {
  if (!isPostgresUrl(location)) return `sqlite ${location}`;
  const url = new URL(location);
  if (url.password) url.password = "***";
  return `postgresql ${url.toString()}`;
}

function wire<S extends Store>(
  store: S,
  saved: (key: string) => string | undefined,
  options: AppOptions,
): App<S> {
  const embedderConfig = resolveEmbedderConfig(saved);
  const embedder = options.embedder ?? createEmbedder(embedderConfig);
  const notes = new NotesService({
    store,
    embedder,
    ...(options.now ? { now: options.now } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.timeZone ? { timeZone: options.timeZone } : {}),
  });
  return {
    store,
    notes,
    accounts: new AccountsService(store, notes, options.now),
    embedderConfig,
    close: async () => {
      await embedder.close?.();
      await store.close();
    },
  };
}

/**
 * A viewer for a fixed identity; the user is created on first use. The restriction is checked here,
 * once, so a folder or tag that could never hold a note stops the server before it serves anything.
 */
export function viewerResolver(app: App, identity: Identity): (scopes: readonly string[]) => Promise<Viewer> {
  const given: Restriction = {
    ...(identity.folder !== undefined ? { folder: identity.folder } : {}),
    ...(identity.tag !== undefined ? { tag: identity.tag } : {}),
  };
  const restriction = checkRestriction(given);
  const restricted = restriction.folder !== undefined || restriction.tag !== undefined;
  let userId: number | undefined;
  return async (scopes) => {
    userId ??= (await app.accounts.ensureUser(identity.user)).id;
    return { userId, scopes, ...(restricted ? { restriction } : {}) };
  };
}

/** The MCP server over an app, every call acting as the viewer `viewerOf` gives for its scopes. */
export function mcpServer(
  app: App,
  viewerOf: (scopes: readonly string[]) => Viewer | Promise<Viewer>,
  log?: (line: string) => void,
): KitServer<DexiContext> {
  return createDexiServer({
    notes: app.notes,
    viewerFor: (caller) => viewerOf(caller.scopes),
    ...(log ? { log } : {}),
  });
}

/** What `dexi-mcp --http` needs to be its own OAuth authorization server. */
export interface OAuthSetup {
  auth: AuthService;
  passwords: Passwords;
  limiter: SignInLimiter;
  verifier: TokenVerifier;
  routes: HttpRoutes;
  resourceMetadataUrl: string;
}

/**
 * The authorization server (issuer `issuer`), the token verifier of the MCP endpoint at
 * `${issuer}/mcp`, and the pages, all over the app's database.
 */
export function oauthSetup(
  app: App,
  options: {
    issuer: string;
    now?: () => number;
    documents?: ClientDocuments;
    limiter?: SignInLimiter;
    trustProxy?: boolean;
  },
): OAuthSetup {
  // redos-ok: the owner's configured issuer URL
  const issuer = options.issuer.replace(/\/+$/, "");
  const now = options.now ?? Date.now;
  const auth = new AuthService(app.store.auth, {
    issuer,
    resource: `${issuer}/mcp`,
    now,
    ...(options.documents ? { documents: options.documents } : {}),
  });
  const passwords = new Passwords(app.store.accounts, app.store.auth, now);
  const limiter = options.limiter ?? new SignInLimiter({ now });
  const verifier: TokenVerifier = {
    async verifyAccessToken(token) {
      const caller = await auth.verify(token);
      if (typeof caller === "string") throw new OAuthError(OAuthErrorCode.InvalidToken, caller);
      return {
        token,
        clientId: caller.clientId,
        scopes: caller.scopes,
        expiresAt: caller.expiresAt,
        resource: new URL(caller.resource),
        // (subject: whose a 2025-era session is, in the kit: the user, whatever the grant becomes)
        extra: {
          subject: `user:${caller.userId}`,
          [GRANT_KEY]: { userId: caller.userId, restriction: caller.restriction },
        },
      };
    },
  };
  const routes = createWebRoutes({
    auth,
    passwords,
    notes: app.notes,
    limiter,
    documents: options.documents !== undefined,
    ...(options.trustProxy ? { trustProxy: true } : {}),
    now,
  });
  return { auth, passwords, limiter, verifier, routes, resourceMetadataUrl: resourceMetadataUrl(auth) };
}

/** Where a verified token's user and boundary travel in the caller's `extra`. */
const GRANT_KEY = "dexi.grant";

/**
 * The viewer of an OAuth caller: the token's user, scopes and restriction. A caller without a
 * verified grant acts as nobody (every call fails), never as some default user.
 */
export function grantViewer(caller: Caller): Viewer {
  const grant = caller.extra?.[GRANT_KEY] as { userId: number; restriction: Restriction } | undefined;
  if (!grant) throw new Error("This connection carries no verified grant");
  const restricted = grant.restriction.folder !== undefined || grant.restriction.tag !== undefined;
  return {
    userId: grant.userId,
    scopes: caller.scopes,
    ...(restricted ? { restriction: grant.restriction } : {}),
  };
}

/** The MCP server of an OAuth endpoint: every call acts as its token's grant. */
export function oauthMcpServer(app: App, log?: (line: string) => void): KitServer<DexiContext> {
  return createDexiServer({ notes: app.notes, viewerFor: grantViewer, ...(log ? { log } : {}) });
}
