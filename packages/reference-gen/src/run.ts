import { join, resolve } from "node:path";
import { type CliOptions, HELP, parseArgs, splitCommandLine, UsageError } from "./args.js";
import { generateReference } from "./generate.js";
import { readTools, type Source } from "./read.js";
import { VERSION } from "./version.js";
import { checkOutput, isFresh, writeOutput } from "./write.js";

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd?: string;
}

const processIo: Io = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
};

/** The whole CLI as a function: returns the exit code (0 done/fresh, 1 stale, 2 error). */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  let opts: CliOptions;
  let source: Source;
  try {
    opts = parseArgs(argv);
    if (opts.help) return done(io.stdout, HELP, 0);
    if (opts.version) return done(io.stdout, `${VERSION}\n`, 0);
    source = sourceOf(opts, io.cwd);
  } catch (err) {
    if (err instanceof UsageError) return done(io.stderr, `mcp-reference-gen: ${err.message}\n`, 2);
    throw err;
  }
  const cwd = io.cwd ?? process.cwd();
  const outDir = resolve(cwd, opts.out!);
  // Files are named as the user wrote --out, never as absolute paths.
  const shown = (name: string) => join(opts.out!, name);
  let files: Map<string, string>;
  try {
    const listing = await readTools(source, opts.timeoutMs);
    if (listing.tools.length > 0 && listing.tools.every((t) => !t.outputSchema)) io.stderr(NO_OUTPUT_SCHEMAS);
    files = generateReference(listing.tools, listing.server, {
      ...(opts.basePath !== undefined ? { basePath: opts.basePath } : {}),
      ...(opts.jsonUrl !== undefined ? { jsonUrl: opts.jsonUrl } : {}),
    });
  } catch (err) {
    return done(io.stderr, `mcp-reference-gen: ${(err as Error).message}\n`, 2);
  }
  try {
    if (opts.check) {
      const report = checkOutput(outDir, files);
      if (isFresh(report)) return done(io.stdout, `${files.size} files in ${shown(".")} are up to date\n`, 0);
      const lines = [
        ...report.stale.map((n) => `stale: ${shown(n)}`),
        ...report.missing.map((n) => `missing: ${shown(n)}`),
        ...report.extra.map((n) => `extra: ${shown(n)} (a generated page no tool needs)`),
      ];
      const count = lines.length;
      io.stderr(
        `${lines.join("\n")}\nmcp-reference-gen: ${count} file${count === 1 ? " is" : "s are"} out of date; run without --check to regenerate\n`,
      );
      return 1;
    }
    const report = writeOutput(outDir, files);
    const removed = report.removed.length > 0 ? `, removed ${report.removed.map(shown).join(", ")}` : "";
    return done(
      io.stdout,
      `wrote ${report.written.length} of ${files.size} files in ${shown(".")} (${report.unchanged.length} unchanged${removed})\n`,
      0,
    );
  } catch (err) {
    return done(io.stderr, `mcp-reference-gen: ${(err as Error).message}\n`, 2);
  }
}

/**
 * Said when no tool lists an output schema: the Result sections can then show only the content
 * blocks. Servers built with @mcpforge/toolkit list them only when asked, so the usual cause is a
 * missing flag in --server.
 */
export const NO_OUTPUT_SCHEMAS =
  "mcp-reference-gen: warning: no tool lists an output schema, so each Result section shows only the " +
  "content blocks; if the server lists them on request (a server built with @mcpforge/toolkit: " +
  "--output-schemas), add that to --server\n";

function sourceOf(opts: CliOptions, cwd: string | undefined): Source {
  if (opts.url !== undefined) return { kind: "http", url: opts.url, headers: opts.headers };
  const [command, ...args] = splitCommandLine(opts.server!);
  return { kind: "stdio", command: command!, args, label: opts.server!, ...(cwd ? { cwd } : {}) };
}

function done(write: (t: string) => void, text: string, code: number): number {
  write(text);
  return code;
}
