#!/usr/bin/env node
/**
 * The chainmail bin: runs the command line (src/cli) and turns a failure into its reason's exit code
 * (the reasons table, src/errors.ts), on stderr as `error: REASON: message` + `hint:` (+ `detail:`,
 * the outside text that explains it, on its own line), or with --json on stdout as {"error": …}.
 */
import { main } from "../cli/main.js";
import { exitCodeOf, toWireError } from "../errors.js";
import { terminalText } from "../cli/human/index.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const body =
      err instanceof TypeError && (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
        ? { reason: "INVALID_ARGUMENT" as const, message: err.message, hint: "Run chainmail --help." }
        : toWireError(err);
    if (body.reason === "INTERNAL") process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify({ error: body })}\n`);
    else
      process.stderr.write(
        `error: ${body.reason}: ${body.message}\nhint: ${body.hint}\n${"detail" in body && body.detail ? `detail: ${forTerminal(body.detail)}\n` : ""}`,
      );
    process.exitCode = exitCodeOf(body.reason);
  },
);

/**
 * A detail is a stranger's text (a server's reply, a folder name): on a terminal its control and
 * invisible format characters (escape sequences, bidi overrides) could rewrite or reorder what the
 * owner reads, so they go; its further lines are indented under the label.
 */
function forTerminal(text: string): string {
  return terminalText(text).replace(/\n/g, "\n  ");
}
