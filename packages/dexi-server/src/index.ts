export { type App, describeStore, mcpServer, openApp, openAppAt, viewerResolver } from "./app.js";
export { type Identity, MCP_OPTIONS, mcpConfig, parseMcpFlags } from "./config.js";
export { AccountsService } from "./domain/accounts.js";
export * from "./domain/limits.js";
export {
  Access,
  checkRestriction,
  InvalidRestriction,
  type Restriction,
  type Viewer,
} from "./domain/access.js";
export { DEXI_REASONS, DexiError } from "./domain/errors.js";
export { appendText, ftsQuery, NotesService } from "./domain/notes.js";
export { GRADE_TO_QUALITY, schedule } from "./domain/sm2.js";
export { checkTag, parseTags, type TagCheck, tagCheckMessage } from "./domain/tags.js";
export { type NoteFull, type NoteItem, similarityOf } from "./domain/view.js";
export { createEmbedder, type EmbedderConfig, resolveEmbedderConfig } from "./embed/config.js";
export { HashEmbedder } from "./embed/hash.js";
export { OpenAiEmbedder } from "./embed/openai.js";
export type { Embedder } from "./embed/types.js";
export { UseEmbedder } from "./embed/use.js";
export { createDexiServer, DEXI_SCOPES, DEXI_VERSION, dexiReasons } from "./mcp/server.js";
export { defaultDbPath, SqliteStore, type Store } from "./store/index.js";
