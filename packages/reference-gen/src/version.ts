import { createRequire } from "node:module";

/** This package's version, read from its package.json (one level above both src/ and dist/). */
export const VERSION: string = (createRequire(import.meta.url)("../package.json") as { version: string })
  .version;
