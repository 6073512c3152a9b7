import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: ["src/index.ts", "src/cli.ts"],
  dts: ["src/index.ts"],
});
