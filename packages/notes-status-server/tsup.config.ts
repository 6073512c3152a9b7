import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: ["src/index.ts", "src/bin/notes-status-mcp.ts", "src/bench/run.ts"],
  dts: ["src/index.ts"],
});
