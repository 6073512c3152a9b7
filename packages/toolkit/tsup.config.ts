import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/testing/index.ts", "src/example/bin/mcpforge-example.ts", "src/bench/run.ts"],
  format: ["esm"],
  target: "node20",
  dts: { entry: ["src/index.ts", "src/testing/index.ts"] },
  sourcemap: true,
  clean: true,
  splitting: true,
});
