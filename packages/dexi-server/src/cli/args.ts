/** Minimal argv parsing for `dexi`: positionals, `--flag value`, `--flag=value`, and boolean switches. */
export interface Args {
  positional: string[];
  flags: Map<string, string>;
  switches: Set<string>;
}

export function parseArgs(argv: readonly string[], switchNames: readonly string[]): Args {
  const out: Args = { positional: [], flags: new Map(), switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) {
      out.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (switchNames.includes(name)) {
      out.switches.add(name);
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    out.flags.set(name, value);
  }
  return out;
}

export class UsageError extends Error {}

export function only(args: Args, allowed: readonly string[]): void {
  for (const name of args.flags.keys()) {
    if (!allowed.includes(name)) throw new UsageError(`unknown flag --${name}`);
  }
}
