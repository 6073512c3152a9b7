import { packageBuild } from "@mcpforge/tsconfig/tsup";

export default packageBuild({
  // src/cache/writer-worker.ts: the header writer's thread, loaded from dist/cache/writer-worker.js
  entry: ["src/index.ts", "src/bin/chainmail.ts", "src/testing/index.ts", "src/cache/writer-worker.ts"],
  dts: ["src/index.ts", "src/testing/index.ts"],
  // A devDependency the testing entry loads (startSmtpRelay): resolved at run time, not bundled.
  external: ["smtp-server"],
});
