import { KIT_REASONS } from "@mcpforge/toolkit";
import type { App } from "../app.js";
import { DEXI_REASONS, DexiError } from "../domain/errors.js";

/** A bad command line: printed with `dexi:` and exit code 2, the code of INVALID_ARGUMENT. */
export class UsageError extends Error {}

/** What a command gets: the app, whose data, its own flags' values and its positionals. */
export interface Ctx {
  app: App;
  /** What --db (or DEXI_DB, or the default) named. */
  db?: string;
  user: string;
  values: Record<string, string | boolean | undefined>;
  /** The positionals after the command's name. */
  rest: string[];
  out: (s: string) => void;
  err: (s: string) => void;
  /** Everything on standard input (a password is read from there, never from argv). */
  input: () => Promise<string>;
}

/** A command's own flags, in node:util parseArgs form. */
export type Options = Readonly<Record<string, { readonly type: "string" | "boolean" }>>;

/** One `dexi` command: its own flags and what it does. */
export interface Command {
  options: Options;
  run(ctx: Ctx): number | Promise<number>;
}

export const command = (c: Command): Command => c;

const REASONS: Record<string, { exitCode: number }> = { ...KIT_REASONS, ...DEXI_REASONS };

/** The exit code the reasons table declares for an expected failure; undefined for anything else. */
export function exitCodeOf(err: unknown): number | undefined {
  if (err instanceof UsageError) return KIT_REASONS.INVALID_ARGUMENT.exitCode;
  if (err instanceof DexiError) return REASONS[err.reason]?.exitCode ?? KIT_REASONS.INTERNAL.exitCode;
  return undefined;
}

/** Runs a domain call whose INVALID_ARGUMENT names a value of `flag`, so the message says which flag. */
export function forFlag<T>(flag: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof DexiError && e.reason === "INVALID_ARGUMENT")
      throw new UsageError(`${flag}: ${e.message}`);
    throw e;
  }
}

export const str = (ctx: Ctx, name: string): string | undefined => {
  const v = ctx.values[name];
  return typeof v === "string" ? v : undefined;
};
export const on = (ctx: Ctx, name: string): boolean => ctx.values[name] === true;

/** The acting user's id; the user is created on first use. */
export const userId = async (ctx: Ctx): Promise<number> => (await ctx.app.accounts.ensureUser(ctx.user)).id;
