import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  entry: ["src/index.ts", "src/bin/chainmail.ts", "src/testing/index.ts"],
  dts: ["src/index.ts", "src/testing/index.ts"],
  // A devDependency the testing entry loads (startSmtpRelay): resolved at run time, not bundled.
  external: ["smtp-server"],
});
