import { defineConfig } from "tsup";

export default defineConfig({
  entry: [
    "src/index.ts",
    "src/testing/index.ts",
    "src/example/cli.ts",
    "src/bench/run.ts",
    "src/bench/kit-server.ts",
    "src/bench/sdk-server.ts",
    "src/bench/proxy.ts",
  ],
  format: ["esm"],
  target: "node20",
  dts: { entry: ["src/index.ts", "src/testing/index.ts"] },
  sourcemap: true,
  clean: true,
  splitting: true,
});
