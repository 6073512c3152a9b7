// One place for test settings: packages call `sharedConfig()` and add what is theirs.
import { defineConfig, mergeConfig } from "vitest/config";

/** @param {import("vitest/config").UserConfig} [own] */
export function sharedConfig(own = {}) {
  return mergeConfig(
    defineConfig({
      test: {
        include: ["test/**/*.test.ts"],
        environment: "node",
        // Generous: e2e tests spawn servers, and CI shares two cores between two packages at a time.
        testTimeout: 120_000,
        hookTimeout: 120_000,
        // Two cores on CI: files in parallel across forks, never more than the machine has.
        pool: "forks",
        maxWorkers: 2,
      },
    }),
    own,
  );
}
