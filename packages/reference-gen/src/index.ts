export { generateReference, normaliseBasePath } from "./generate.js";
export {
  ANNOTATION_CONDITIONS_META_KEY,
  compareStrings,
  conditionOf,
  GENERATED_COMMENT,
  GENERATED_MARKER,
  type GenerateOptions,
  GROUP_META_KEY,
  groupOf,
  type JsonSchema,
  type ListedTool,
  SCOPE_META_KEY,
  type ServerInfo,
  scopeOf,
  type ToolAnnotations,
  titleOf,
  UNGROUPED,
} from "./model.js";
export { type Listing, readTools, type Source } from "./read.js";
export { accessLabel, accessOf } from "./render/access.js";
export { exampleCall, fromPattern } from "./render/example-call.js";
export { flattenObject, type FieldRow } from "./render/flatten.js";
export { renderToolPage } from "./render/page.js";
export { isUntrusted } from "./render/schema.js";
export { typeLabel } from "./render/types.js";
export { type CheckReport, checkOutput, isFresh, type WriteReport, writeOutput } from "./write.js";
export { type Io, run } from "./run.js";
export { parseArgs, splitCommandLine } from "./args.js";
export { VERSION } from "./version.js";
