import pg from "pg";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The throwaway PostgreSQL server's maintenance URL (the postgres project's global setup). */
    postgresUrl: string;
    /** A database every Dexi migration has been applied to, for `CREATE DATABASE ... TEMPLATE`. */
    postgresTemplate: string;
  }
}

let made = 0;

/** A new, empty database on the throwaway server, by URL. */
export async function freshDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: inject("postgresUrl") });
  await admin.connect();
  const name = `dexi_${process.pid}_${Date.now().toString(36)}_${made++}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(inject("postgresUrl"));
  url.pathname = `/${name}`;
  return url.toString();
}
