#!/usr/bin/env node
import { main } from "./cli/main.js";

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`dexi: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
