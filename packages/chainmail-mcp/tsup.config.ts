import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/bin/chainmail-mcp.ts"],
  format: ["esm"],
  target: "node20",
  dts: { entry: ["src/index.ts"] },
  sourcemap: true,
  clean: true,
  splitting: true,
});
