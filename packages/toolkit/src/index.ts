export type { Annotations, AnyTool, Caller, CallInfo, Shape, ToolDefinition } from "./define.js";
export { hints, openWorld } from "./annotations.js";
export type {
  AskField,
  AskFieldValue,
  AskForm,
  Asking,
  AskUrl,
  FormAccepted,
  FormAnswer,
  NotAccepted,
  Unavailable,
  UrlAccepted,
  UrlAnswer,
} from "./ask.js";
export { type ToolDefaults, toolFactory } from "./define.js";
export {
  defineReasons,
  type ErrorBody,
  isReasonedError,
  type ReasonedError,
  KIT_REASONS,
  type ReasonSpec,
  type Reasons,
  ToolError,
} from "./errors.js";
export { compactSchema, inlineRefs } from "./compact.js";
export { errorBody, errorResult, successResult, type TextMode } from "./result.js";
export {
  ERROR_SCHEMA,
  JSON_SCHEMA_DIALECT,
  type JsonSchema,
  parseInput,
  TOOL_NAME_PATTERN,
} from "./schema.js";
export {
  type AnyKit,
  type AskStateOptions,
  createServer,
  ANNOTATION_CONDITIONS_META_KEY,
  GROUP_META_KEY,
  SCOPE_META_KEY,
  type GateOptions,
  KitServer,
  REQUEST_STATE_KEY_ENV,
  type ServerDefinition,
} from "./server.js";
export {
  isUntrustedSchema,
  UNTRUSTED_TITLE,
  fenceText,
  Untrusted,
  type UntrustedText,
  untrusted,
  untrustedField,
} from "./untrusted.js";
export { readBodyText } from "./http/body.js";
export { createKitHttpHandler, type KitHttpHandler } from "./http/handler.js";
export { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS } from "./http/sessions.js";
export { checkMessage, decodeLine } from "./jsonrpc.js";
export {
  migratePg,
  type PgConnection,
  type PgMigrations,
  type PgPool,
  pgSchemaVersion,
  pgTransaction,
} from "./postgres.js";
export { KitStdioTransport, MAX_STDIO_LINE_BYTES, type StdioHandle, serveStdio } from "./stdio.js";
export {
  type HttpHandle,
  type HttpHandlerOptions,
  type HttpOptions,
  type HttpRequestInfo,
  type HttpRoutes,
  type LegacySessionOptions,
  serveHttp,
  staticTokenVerifier,
  type TokenVerifier,
} from "./transports.js";
export {
  COMMON_FLAGS_HELP,
  COMMON_OPTIONS,
  type CommonFlags,
  parseCommonFlags,
  parseHttpAddress,
  type OwnValues,
  type ParseArgsOptionsConfig,
  parseServerArgs,
  printToolGroups,
  readTokenFile,
  runServer,
  type ServerArgs,
  TOKEN_IN_ARGV,
} from "./cli.js";
export {
  FlagError,
  groupFlagName,
  OUTPUT_SCHEMAS_ENV,
  outputSchemasOf,
  READ_ONLY_ENV,
  selectionFilter,
  selectionOf,
  type ToolSelection,
  TOOLS_ENV,
  toolGroupsText,
} from "./toolsets.js";
export { packageVersion } from "./version.js";
/** The SDK's OAuth error, for a server's own token verifier to refuse a token with (401 invalid_token). */
export { OAuthError, OAuthErrorCode } from "@modelcontextprotocol/server";
