/**
 * How an operation is declared: its parameter schema, its result type, its audit action and whether
 * it changes mail. `parseParams` checks a request's params against the schema and reports the first
 * problem as INVALID_ARGUMENT naming the parameter.
 */
import type { z } from "zod";
import { MailError } from "../../errors.js";

export interface Operation<P extends z.ZodObject = z.ZodObject, R = unknown> {
  params: P;
  /** The audit log's action for the call, or null for a method that writes no audit row. */
  audit: string | null;
  /** It changes mail or folders, so the cache of the accounts it touches is out of date afterwards. */
  mutates: boolean;
  /** Never set: carries the result type for the client and the handler table. */
  readonly result?: R;
}

/** Declares an operation returning `R`: `operation<BatchResult>()({ params, audit, mutates })`. */
export const operation =
  <R>() =>
  <P extends z.ZodObject>(decl: { params: P; audit: string | null; mutates: boolean }): Operation<P, R> =>
    decl;

const bad = (message: string) => new MailError("INVALID_ARGUMENT", message);

/** The schema under optional/default, where a field's type and bounds are. */
function inner(schema: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  let s = schema;
  while (s && (s._zod.def.type === "optional" || s._zod.def.type === "default"))
    s = (s._zod.def as unknown as { innerType: z.core.$ZodType }).innerType;
  return s;
}

/** A check's bound, such as an array's min_length, or `fallback` when the schema has none. */
function bound(schema: z.core.$ZodType | undefined, check: string, key: string, fallback: number): number {
  for (const c of schema?._zod.def.checks ?? []) {
    const def = c._zod.def as unknown as Record<string, unknown>;
    if (def["check"] === check && typeof def[key] === "number") return def[key] as number;
  }
  return fallback;
}

const range = (s: z.core.$ZodType | undefined, minCheck: string, maxCheck: string) => {
  const min = bound(s, minCheck, "value", bound(s, minCheck, "minimum", 0));
  const max = bound(s, maxCheck, "value", bound(s, maxCheck, "maximum", Number.POSITIVE_INFINITY));
  return { min, max };
};

function describe(issue: z.core.$ZodIssue, shape: z.ZodRawShape, raw: Record<string, unknown>): string {
  const [key, index] = issue.path;
  const field = String(key);
  if (issue.code === "custom") return issue.message; // written whole by the declaration's refine
  if (index !== undefined) {
    const name = `${field}[${String(index)}]`;
    if (issue.code === "invalid_type") return `${name} must be a string`;
    if (issue.code === "too_big") return `${name} is too long`;
    if (issue.code === "too_small") return `${name} must not be empty`;
    return `${name} is not valid`;
  }
  const schema = inner(shape[field]);
  switch (issue.code) {
    case "invalid_type":
      if (raw[field] === undefined) return `${field} is required`;
      if (issue.expected === "array") return `${field} must be an array of strings`;
      if (issue.expected === "boolean") return `${field} must be true or false`;
      if (issue.expected === "number" || issue.expected === "int") return `${field} must be an integer`;
      return `${field} must be a string`;
    case "too_big":
    case "too_small": {
      if (issue.origin === "string") {
        return issue.code === "too_big"
          ? `${field} must be at most ${String(issue.maximum)} characters`
          : `${field} must be at least ${String(issue.minimum)} characters`;
      }
      if (issue.origin === "array") {
        const { min, max } = range(schema, "min_length", "max_length");
        return `${field} must hold ${min} to ${max} items`;
      }
      const { min, max } = range(schema, "greater_than", "less_than");
      return `${field} must be from ${min} to ${max}`;
    }
    case "invalid_value": {
      const values = issue.values.map((v) => JSON.stringify(v));
      return `${field} must be ${values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}` : values[0]}`;
    }
    case "invalid_format":
      // A pattern whose message names its field says the rule itself (idempotency_key's characters).
      return issue.message.startsWith(`${field} `) ? issue.message : `${field} is not valid`;
    default:
      return `${field} is not valid`;
  }
}

/**
 * Checks a request's params. An absent or null value is an absent parameter, and so is "" for a
 * string (a CLI or client that sends an empty option means "not given").
 */
export function parseParams<P extends z.ZodObject>(schema: P, params: unknown): z.output<P> {
  if (params !== undefined && params !== null && (typeof params !== "object" || Array.isArray(params)))
    throw bad("params must be an object");
  const raw: Record<string, unknown> = {};
  const shape = schema.shape as z.ZodRawShape;
  for (const key of Object.keys(shape)) {
    const v = params ? (params as Record<string, unknown>)[key] : undefined;
    if (!Object.hasOwn(params ?? {}, key) || v === null) continue;
    const type = inner(shape[key])?._zod.def.type;
    if (v === "" && (type === "string" || type === "enum")) continue;
    raw[key] = v;
  }
  const got = schema.safeParse(raw);
  if (got.success) return got.data;
  throw bad(describe(got.error.issues[0]!, shape, raw));
}
