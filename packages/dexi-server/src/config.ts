import { checkRestriction } from "./domain/access.js";
import { canonicalTimeZone } from "./domain/time.js";
import { defaultDbPath } from "./store/db.js";

/** The identity and grant a stdio (or static-token HTTP) connection runs with. */
export interface Identity {
  user: string;
  scopes: string[];
  folder?: string;
  tag?: string;
}

export interface McpConfig extends Identity {
  db: string;
  demo: boolean;
  /** The zone for `period` of users who set none (`dexi settings --time-zone`); default this machine's. */
  timeZone?: string;
}

export const DEFAULT_USER = "local";

const DEFAULT_SCOPES = "notes:read,notes:write";

/** A comma-separated scope list; an empty one grants nothing (it never falls back to the default). */
const scopeList = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * `--db`, `--user`, `--scopes`, `--folder`, `--tag`, `--time-zone`, `--demo`; env DEXI_DB, DEXI_USER,
 * DEXI_SCOPES, DEXI_FOLDER, DEXI_TAG, DEXI_TIME_ZONE.
 */
export function parseMcpFlags(rest: readonly string[], env: NodeJS.ProcessEnv = process.env): McpConfig {
  const cfg: McpConfig = {
    db: env["DEXI_DB"] || "",
    demo: false,
    user: env["DEXI_USER"] || DEFAULT_USER,
    scopes: scopeList(env["DEXI_SCOPES"] ?? DEFAULT_SCOPES),
    ...(env["DEXI_FOLDER"] ? { folder: env["DEXI_FOLDER"] } : {}),
    ...(env["DEXI_TAG"] ? { tag: env["DEXI_TAG"] } : {}),
    ...(env["DEXI_TIME_ZONE"] ? { timeZone: env["DEXI_TIME_ZONE"] } : {}),
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [name, inline] =
      arg.startsWith("--") && arg.includes("=") ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined || v === "") throw new Error(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case "--db":
        cfg.db = value();
        break;
      case "--user":
        cfg.user = value();
        break;
      case "--scopes": {
        // An explicit empty list (`--scopes ""`, `--scopes=`) is a grant of nothing, not a missing value.
        const v = inline ?? rest[++i];
        if (v === undefined) throw new Error(`${name} needs a value`);
        cfg.scopes = scopeList(v);
        break;
      }
      case "--folder":
        cfg.folder = value();
        break;
      case "--tag":
        cfg.tag = value();
        break;
      case "--time-zone":
        cfg.timeZone = value();
        break;
      case "--demo":
        cfg.demo = true;
        break;
      default:
        throw new Error(`unknown flag ${arg}; see --help`);
    }
  }
  for (const s of cfg.scopes) {
    if (s !== "notes:read" && s !== "notes:write")
      throw new Error(`unknown scope "${s}": use notes:read and/or notes:write`);
  }
  if (cfg.timeZone !== undefined) {
    const zone = canonicalTimeZone(cfg.timeZone);
    if (!zone)
      throw new Error(`unknown time zone "${cfg.timeZone}" (use an IANA name such as Europe/Berlin)`);
    cfg.timeZone = zone;
  }
  const restriction = checkRestriction({
    ...(cfg.folder !== undefined ? { folder: cfg.folder } : {}),
    ...(cfg.tag !== undefined ? { tag: cfg.tag } : {}),
  });
  delete cfg.folder;
  delete cfg.tag;
  Object.assign(cfg, restriction);
  if (!cfg.db) cfg.db = cfg.demo ? defaultDbPath().replace(/dexi\.db$/, "demo.db") : defaultDbPath();
  return cfg;
}
