/**
 * Global setup of the postgres project: one throwaway PostgreSQL 15 for the run, and a migrated
 * template database that each test's own database is copied from (a copy takes a fraction of running
 * every migration again, which the files about migrations still do on empty databases of their own).
 */
import { startPostgres } from "@mcpforge/toolkit/testing";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migratePostgres } from "../src/store/postgres/migrations.js";

export const TEMPLATE = "dexi_template";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  await admin.end();
  const url = new URL(server.url);
  url.pathname = `/${TEMPLATE}`;
  const pool = new pg.Pool({ connectionString: url.toString() });
  await migratePostgres(pool);
  await pool.end();
  project.provide("postgresUrl", server.url);
  project.provide("postgresTemplate", TEMPLATE);
  return () => server.stop();
}
