import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/bin/notes-status-mcp.ts", "src/bench/run.ts"],
  format: ["esm"],
  target: "node20",
  dts: { entry: ["src/index.ts"] },
  sourcemap: true,
  clean: true,
  splitting: true,
});
