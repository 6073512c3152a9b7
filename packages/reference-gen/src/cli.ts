#!/usr/bin/env node
import { run } from "./run.js";

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mcp-reference-gen: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 2;
  },
);
