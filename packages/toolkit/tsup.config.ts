import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: [
    "src/index.ts",
    "src/testing/index.ts",
    "src/example/bin/mcpforge-example.ts",
    "src/bench/run.ts",
    "src/bench/kit-server.ts",
    "src/bench/sdk-server.ts",
    "src/bench/proxy.ts",
  ],
  dts: ["src/index.ts", "src/testing/index.ts"],
});
