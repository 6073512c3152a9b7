/**
 * Where chainmail keeps things. CHAINMAIL_HOME (or --home) puts everything under one dir so tests and
 * several daemons run side by side; otherwise the XDG dirs are used.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { MailError } from "./errors.js";

export interface Home {
  configFile: string;
  stateDir: string;
  dbFile: string;
  /** The local mail cache (SQLite), next to state.db. */
  cacheFile: string;
  secretsDir: string;
  runtimeDir: string;
  socketPath: string;
  /** Default directory of download_attachment and save_raw_message. */
  attachmentsDir: string;
}

function xdg(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const v = env[name];
  // The XDG spec says relative values are invalid and must be ignored.
  return v && path.isAbsolute(v) ? v : path.join(os.homedir(), fallback);
}

export function attachmentsDefaultDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdg(env, "XDG_CACHE_HOME", ".cache"), "chainmail", "attachments");
}

export function resolveHome(explicit?: string, env: NodeJS.ProcessEnv = process.env): Home {
  const base = explicit ?? env["CHAINMAIL_HOME"];
  if (base) {
    const root = path.resolve(base);
    return {
      configFile: path.join(root, "config.toml"),
      stateDir: path.join(root, "state"),
      dbFile: path.join(root, "state", "state.db"),
      cacheFile: path.join(root, "state", "cache.db"),
      secretsDir: path.join(root, "secrets"),
      runtimeDir: path.join(root, "run"),
      socketPath: path.join(root, "run", "chainmail.sock"),
      attachmentsDir: attachmentsDefaultDir(env),
    };
  }
  const config = path.join(xdg(env, "XDG_CONFIG_HOME", ".config"), "chainmail");
  const data = path.join(xdg(env, "XDG_DATA_HOME", ".local/share"), "chainmail");
  const rt = env["XDG_RUNTIME_DIR"];
  const runtime =
    rt && path.isAbsolute(rt)
      ? path.join(rt, "chainmail")
      : path.join(os.tmpdir(), `chainmail-${process.getuid?.() ?? 0}`);
  return {
    configFile: path.join(config, "config.toml"),
    stateDir: data,
    dbFile: path.join(data, "state.db"),
    cacheFile: path.join(data, "cache.db"),
    secretsDir: path.join(data, "secrets"),
    runtimeDir: runtime,
    socketPath: path.join(runtime, "chainmail.sock"),
    attachmentsDir: attachmentsDefaultDir(env),
  };
}

/** Creates a private dir (0700), or checks an existing one is ours and private. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new MailError("INVALID_ARGUMENT", `${dir} belongs to another user`, "Use a directory you own.");
  }
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}
