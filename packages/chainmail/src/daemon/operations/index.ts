/**
 * Every daemon operation, declared once: the daemon checks params with these schemas (methods.ts
 * holds one handler per name), the client's `call` takes and returns the declared types, and the
 * protocol's method list is this table's keys.
 */
import type { z } from "zod";
import { accountOperations } from "./accounts.js";
import { adminOperations } from "./admin.js";
import { authOperations } from "./auth.js";
import { cacheOperations } from "./cache.js";
import { composeOperations } from "./compose.js";
import type { Operation } from "./define.js";
import { itemOperations } from "./items.js";
import { eventOperations } from "./events.js";
import { organizeOperations } from "./organize.js";
import { readingOperations } from "./reading.js";
import { policyOperations } from "./policy.js";
import { uploadOperations } from "./uploads.js";

export const OPERATIONS = {
  ...accountOperations,
  ...readingOperations,
  ...organizeOperations,
  ...cacheOperations,
  ...itemOperations,
  ...eventOperations,
  ...composeOperations,
  ...policyOperations,
  ...uploadOperations,
  ...adminOperations,
  ...authOperations,
} satisfies Record<string, Operation>;

export type Method = keyof typeof OPERATIONS;
export const METHODS = Object.keys(OPERATIONS) as Method[];

/** What a caller sends: fields with a default may be left out. */
export type ParamsOf<M extends Method> = z.input<(typeof OPERATIONS)[M]["params"]>;
/** What a handler gets: the params checked, defaults filled in. */
export type CheckedParamsOf<M extends Method> = z.output<(typeof OPERATIONS)[M]["params"]>;
export type ResultOf<M extends Method> =
  (typeof OPERATIONS)[M] extends Operation<z.ZodObject, infer R> ? R : never;

export { type Operation, operation, parseParams } from "./define.js";
export * from "./fields.js";
export * from "./items.js";
export {
  EventCursorField,
  EventKindsField,
  EventsLimitField,
  GROUP_RULE,
  GroupField,
  InField,
  WaitSecondsField,
} from "./events.js";
