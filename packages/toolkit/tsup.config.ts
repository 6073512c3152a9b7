import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: ["src/index.ts", "src/testing/index.ts", "src/example/bin/mcpforge-example.ts", "src/bench/run.ts"],
  dts: ["src/index.ts", "src/testing/index.ts"],
});
