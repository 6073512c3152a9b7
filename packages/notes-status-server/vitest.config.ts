import { readdirSync } from "node:fs";
import { sharedConfig } from "@mcpforge/vitest-config";
import { configDefaults } from "vitest/config";

/**
 * One suite, two stores: every test file that touches the store runs once on SQLite and once on a
 * throwaway PostgreSQL 15 (test/postgres-setup.ts); `freshStore()` in test/helpers.ts picks the store
 * from NOTES_STATUS_TEST_STORE. Files about the bin, the package or SQLite itself run once.
 */
const ON_BOTH_STORES = [
  "contract.test.ts",
  "durability.test.ts",
  "give-up.test.ts",
  "paging.test.ts",
  "probe-delivery.test.ts",
  "probe-record.test.ts",
  "scale-out.test.ts",
  "scheduler.test.ts",
  "status.test.ts",
  "time.test.ts",
  "tools.test.ts",
  "webhook.test.ts",
];

// The shared include (every test file) is merged into a project's own include, so a list of files to
// include would still run them all: the postgres project names what it leaves out instead.
const SQLITE_ONLY = readdirSync(new URL("./test/", import.meta.url)).filter(
  (f) => f.endsWith(".test.ts") && !f.startsWith("postgres-") && !ON_BOTH_STORES.includes(f),
);

export default sharedConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "sqlite",
          exclude: [...configDefaults.exclude, "test/postgres-*.test.ts"],
          env: { NOTES_STATUS_TEST_STORE: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          exclude: [...configDefaults.exclude, ...SQLITE_ONLY.map((f) => `test/${f}`)],
          env: { NOTES_STATUS_TEST_STORE: "postgres" },
          globalSetup: ["test/postgres-setup.ts"],
        },
      },
    ],
  },
});
