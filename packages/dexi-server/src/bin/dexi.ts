#!/usr/bin/env node
import { KIT_REASONS } from "@mcpforge/toolkit";
import { main } from "../cli/main.js";

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Not a declared reason: INTERNAL, with its exit code.
    process.stderr.write(`dexi: ${(err as Error).message}\n`);
    process.exit(KIT_REASONS.INTERNAL.exitCode);
  },
);
