import { readdirSync } from "node:fs";
import { sharedConfig } from "@mcpforge/vitest-config";
import { configDefaults } from "vitest/config";

/**
 * One suite, two stores: every test file about Dexi's behaviour runs once on SQLite (project "sqlite")
 * and once on a throwaway PostgreSQL 15 (project "postgres", started by test/postgres-setup.ts);
 * `testApp()` and `freshLocation()` (test/helpers.ts, test/stores.ts) pick the store from
 * DEXI_TEST_STORE. The files about the PostgreSQL store itself (test/postgres-*.test.ts) run in
 * "postgres" only. The rest run on SQLite only: SQLite itself (migrations of the SQLite file, the turn
 * queue, the vector slab; in files run on both, the FTS5 tokenizer check in ranking and migration 4 in
 * deletions register on SQLite only), the pure rules with no store (tags, sm2, time), the flags
 * (config), the bin's start-up with the real model (e2e), the vector path (embeddings, semantic: the
 * pgvector work covers it on PostgreSQL), and the packed tarball (pack).
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
  "oauth-bin.test.ts",
  "oauth-client-documents.test.ts",
  "oauth-e2e.test.ts",
  "oauth-restriction-writes.test.ts",
  "ranking.test.ts",
  "restriction-leaks.test.ts",
  "restriction-property.test.ts",
  "semantic-window.test.ts",
  "team-attacks.test.ts",
  "team-property.test.ts",
  "tools.test.ts",
  "users-password.test.ts",
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
