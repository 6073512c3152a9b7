import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: ["src/index.ts", "src/bin/chainmail-mcp.ts"],
  dts: ["src/index.ts"],
});
