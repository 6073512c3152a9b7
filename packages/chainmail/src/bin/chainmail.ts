#!/usr/bin/env node
/**
 * The chainmail bin: runs the command line (src/cli) and turns a failure into its reason's exit code
 * (the reasons table, src/errors.ts), on stderr as `error: REASON: message` + `hint:`, or with --json
 * on stdout as {"error": …}.
 */
import { main } from "../cli/main.js";
import { exitCodeOf, toWireError } from "../errors.js";

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
    else process.stderr.write(`error: ${body.reason}: ${body.message}\nhint: ${body.hint}\n`);
    process.exitCode = exitCodeOf(body.reason);
  },
);
