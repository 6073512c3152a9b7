import type { KitServer } from "@mcpforge/toolkit";
import type { Identity } from "./config.js";
import { AccountsService } from "./domain/accounts.js";
import { checkRestriction, type Restriction, type Viewer } from "./domain/access.js";
import { NotesService } from "./domain/notes.js";
import { createEmbedder, type EmbedderConfig, resolveEmbedderConfig } from "./embed/config.js";
import type { Embedder } from "./embed/types.js";
import { createDexiServer } from "./mcp/server.js";
import type { DexiContext } from "./mcp/tools/index.js";
import { Store } from "./store/index.js";

export interface App {
  store: Store;
  notes: NotesService;
  accounts: AccountsService;
  embedderConfig: EmbedderConfig;
  close(): Promise<void>;
}

/**
 * Opens the database and wires the domain services (notes, with the configured embedder loaded
 * lazily; accounts) that the MCP server and the admin CLI both go through.
 */
export function openApp(
  dbPath: string,
  options: { embedder?: Embedder; now?: () => number; log?: (l: string) => void; timeZone?: string } = {},
): App {
  const store = Store.open(dbPath);
  const embedderConfig = resolveEmbedderConfig((k) => store.accounts.config(k));
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
      store.close();
    },
  };
}

/**
 * A viewer for a fixed identity; the user is created on first use. The restriction is checked here,
 * once, so a folder or tag that could never hold a note stops the server before it serves anything.
 */
export function viewerResolver(
  app: App,
  identity: Identity,
  now: () => number = Date.now,
): (scopes: readonly string[]) => Viewer {
  const given: Restriction = {
    ...(identity.folder !== undefined ? { folder: identity.folder } : {}),
    ...(identity.tag !== undefined ? { tag: identity.tag } : {}),
  };
  const restriction = checkRestriction(given);
  const restricted = restriction.folder !== undefined || restriction.tag !== undefined;
  let userId: number | undefined;
  return (scopes) => {
    userId ??= app.store.accounts.ensureUser(identity.user, now()).id;
    return { userId, scopes, ...(restricted ? { restriction } : {}) };
  };
}

/** The MCP server over an app, every call acting as the viewer `viewerOf` gives for its scopes. */
export function mcpServer(
  app: App,
  viewerOf: (scopes: readonly string[]) => Viewer,
  log?: (line: string) => void,
): KitServer<DexiContext> {
  return createDexiServer({
    notes: app.notes,
    viewerFor: (caller) => viewerOf(caller.scopes),
    ...(log ? { log } : {}),
  });
}
