export {
  type ClientOptions,
  type Connected,
  connectHttp,
  connectInMemory,
  connectStdio,
  type Elicitation,
  elicitationCapability,
  type Era,
  inspectorCliPath,
  MODERN_REVISION,
  newClient,
  runInspector,
  runInspectorHttp,
  type StdioSpawn,
} from "./clients.js";
export {
  type AskingClient,
  type AskingCombination,
  type AskingTransport,
  type AskTarget,
  checkElicitation,
  ELICITATION_MATRIX,
  type PersonAnswer,
} from "./elicitation.js";
export { expectToolsListGolden, expectToolsListMatchesGolden, lineDiff, renderToolsList } from "./golden.js";
export { checkDefaultToolsList, expectDefaultToolsList, goldenWithoutOutputSchemas } from "./listing.js";
export {
  assertFuzzClean,
  casesFor,
  type FuzzFailure,
  type FuzzOptions,
  type FuzzReport,
  fuzzTools,
  seededRandom,
} from "./fuzz.js";
export { npxSpawn, type PackedInstall, type PackOptions, packAndInstall } from "./pack.js";
export {
  checkCombination,
  MATRIX,
  type MatrixClient,
  type MatrixTarget,
  type MatrixTransport,
  startHttpBin,
} from "./matrix.js";
export { type RoundRobinProxy, roundRobinProxy } from "./proxy.js";
export {
  type RecordedCall,
  type RecordOptions,
  type ReplayedResult,
  recordToolCall,
  replayToolCall,
} from "./replay.js";
export { postWithoutEnd } from "./endless-body.js";
export { type ManualClock, manualClock, type Session, session } from "./session.js";
export { serverVersionOfCopy, type VersionCopyOptions } from "./version-copy.js";
export {
  POSTGRES_BIN_DIR,
  type PostgresServer,
  type StartPostgresOptions,
  startPostgres,
} from "./postgres.js";
