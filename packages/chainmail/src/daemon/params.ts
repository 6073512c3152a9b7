/** Checks a request's params; every failure is INVALID_ARGUMENT naming the parameter. */
import { MailError } from "../errors.js";

export type Params = Record<string, unknown>;

const bad = (name: string, what: string) => new MailError("INVALID_ARGUMENT", `${name} ${what}`);

export function asParams(v: unknown): Params {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v)) throw bad("params", "must be an object");
  return v as Params;
}

export function str(p: Params, name: string, opts: { required: true; max?: number }): string;
export function str(p: Params, name: string, opts?: { required?: false; max?: number }): string | undefined;
export function str(
  p: Params,
  name: string,
  opts: { required?: boolean; max?: number } = {},
): string | undefined {
  const v = p[name];
  if (v === undefined || v === null || v === "") {
    if (opts.required) throw bad(name, "is required");
    return undefined;
  }
  if (typeof v !== "string") throw bad(name, "must be a string");
  if (v.length > (opts.max ?? 2000)) throw bad(name, `must be at most ${opts.max ?? 2000} characters`);
  return v;
}

export function bool(p: Params, name: string): boolean {
  const v = p[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw bad(name, "must be true or false");
  return v;
}

export function int(p: Params, name: string, min: number, max: number, dflt: number): number {
  const v = p[name];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v)) throw bad(name, "must be an integer");
  if (v < min || v > max) throw bad(name, `must be from ${min} to ${max}`);
  return v;
}

export function strArray(
  p: Params,
  name: string,
  opts: { min?: number; max?: number; itemMax?: number } = {},
): string[] {
  const v = p[name];
  const min = opts.min ?? 0;
  if (v === undefined || v === null) {
    if (min > 0) throw bad(name, "is required");
    return [];
  }
  if (!Array.isArray(v)) throw bad(name, "must be an array of strings");
  if (v.length < min || v.length > (opts.max ?? 1000))
    throw bad(name, `must hold ${min} to ${opts.max ?? 1000} items`);
  for (const [i, x] of v.entries()) {
    if (typeof x !== "string") throw bad(`${name}[${i}]`, "must be a string");
    if (x.length > (opts.itemMax ?? 2000)) throw bad(`${name}[${i}]`, "is too long");
  }
  return v as string[];
}
