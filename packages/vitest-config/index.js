// One place for test settings: packages call `sharedConfig()` and add what is theirs.
import { defineConfig, mergeConfig } from "vitest/config";

/** @param {import("vitest/config").UserConfig} [own] */
export function sharedConfig(own = {}) {
  return mergeConfig(
    defineConfig({
      test: {
        include: ["test/**/*.test.ts"],
        environment: "node",
        testTimeout: 30_000,
        hookTimeout: 60_000,
        // Two cores on CI: files in parallel across forks, never more than the machine has.
        pool: "forks",
        maxWorkers: 2,
      },
    }),
    own,
  );
}
