import { readdirSync } from "node:fs";
import { sharedConfig } from "@mcpforge/vitest-config";
import { configDefaults } from "vitest/config";

/**
 * One suite, two stores: every test file about Dexi's behaviour runs once on SQLite (project "sqlite")
 * and once on a throwaway PostgreSQL 15 (project "postgres", started by test/postgres-setup.ts);
 * `testApp()` and `freshLocation()` (test/helpers.ts, test/stores.ts) pick the store from
 * DEXI_TEST_STORE. The files about the PostgreSQL store itself (test/postgres-*.test.ts) run in
 * "postgres" only. The rest run on SQLite only: SQLite itself (migrations of the SQLite file, the turn
 * queue, the vector slab, `dexi migrate`'s SQLite side), the pure rules (tags, sm2, time: no store),
 * the admin CLI's imports and exit codes, OAuth (its own pages and tokens, held to PostgreSQL by
 * postgres-scale-out), embeddings and semantic ranking (the vector path, which the pgvector work
 * covers on PostgreSQL), and the packed tarball.
 */
const ON_BOTH_STORES = [
  "access.test.ts",
  "cli.test.ts",
  "cli-exit-codes.test.ts",
  "contract.test.ts",
  "deletions.test.ts",
  "differential.test.ts",
  "durability.test.ts",
  "matrix.test.ts",
  "oauth-attacks.test.ts",
  "oauth-client-documents.test.ts",
  "oauth-restriction-writes.test.ts",
  "ranking.test.ts",
  "tools.test.ts",
];

// The shared include (every test file) is merged into a project's own, so the postgres project names
// what it leaves out instead.
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
          env: { DEXI_TEST_STORE: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          exclude: [...configDefaults.exclude, ...SQLITE_ONLY.map((f) => `test/${f}`)],
          env: { DEXI_TEST_STORE: "postgres" },
          globalSetup: ["test/postgres-setup.ts"],
        },
      },
    ],
  },
});
