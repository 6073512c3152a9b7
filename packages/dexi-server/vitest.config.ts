import { sharedConfig } from "@mcpforge/vitest-config";
import { configDefaults } from "vitest/config";

/**
 * Two projects: "sqlite" runs every suite as before; "postgres" runs the files about the PostgreSQL
 * store (test/postgres-*.test.ts) against a throwaway PostgreSQL 15 started for the run
 * (test/postgres-setup.ts). The suites parametrized over both stores join the postgres project as the
 * PostgreSQL store gains their operations.
 */
export default sharedConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: "sqlite", exclude: [...configDefaults.exclude, "test/postgres-*.test.ts"] },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          // The shared include (every test file) is merged into a project's own, so the other files are
          // excluded here instead.
          include: ["test/postgres-*.test.ts"],
          exclude: [...configDefaults.exclude, "test/!(postgres-)*.test.ts"],
          globalSetup: ["test/postgres-setup.ts"],
        },
      },
    ],
  },
});
