/** Global setup of the postgres project: one throwaway PostgreSQL 15 for the run; each test makes its own database. */
import { startPostgres } from "@mcpforge/toolkit/testing";
import type { TestProject } from "vitest/node";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide("postgresUrl", server.url);
  return () => server.stop();
}
