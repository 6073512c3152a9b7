import { sharedConfig } from "@mcpforge/vitest-config";
import { configDefaults } from "vitest/config";

/**
 * One suite, two stores: every test file that touches the store runs once on SQLite and once on a
 * throwaway PostgreSQL 15 (test/postgres-setup.ts); `freshStore()` in test/helpers.ts picks the store
 * from NOTES_STATUS_TEST_STORE. Files about the bin, the package or SQLite itself run once.
 */
const ON_BOTH_STORES = [
  "test/contract.test.ts",
  "test/durability.test.ts",
  "test/give-up.test.ts",
  "test/paging.test.ts",
  "test/scale-out.test.ts",
  "test/scheduler.test.ts",
  "test/status.test.ts",
  "test/time.test.ts",
  "test/tools.test.ts",
  "test/webhook.test.ts",
];

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
          include: [...ON_BOTH_STORES, "test/postgres-*.test.ts"],
          env: { NOTES_STATUS_TEST_STORE: "postgres" },
          globalSetup: ["test/postgres-setup.ts"],
        },
      },
    ],
  },
});
