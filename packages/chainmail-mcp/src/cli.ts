#!/usr/bin/env node
import { exitCodeOf, isMailError } from "@mcpforge/chainmail";
import { main } from "./main.js";

main(process.argv.slice(2)).catch((err: unknown) => {
  const reason = isMailError(err) ? err.reason : "INTERNAL";
  const hint = isMailError(err) ? `\nhint: ${err.hint}` : "";
  process.stderr.write(`chainmail-mcp: ${reason}: ${(err as Error).message}${hint}\n`);
  process.exit(exitCodeOf(reason));
});
