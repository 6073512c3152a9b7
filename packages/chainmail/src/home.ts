/**
 * Where chainmail keeps things. CHAINMAIL_HOME (or --home) puts everything under one dir so tests and
 * several daemons run side by side; otherwise the XDG dirs are used. CHAINMAIL_SOCKET (or --socket)
 * names the socket, and so the runtime dir (its parent), whatever the home: for clients of a daemon
 * that runs as another OS user (the strong mode, see the README).
 */
import { execFileSync } from "node:child_process";
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
  /**
   * The socket was named by CHAINMAIL_SOCKET (or --socket), not derived: its dir may be another
   * OS user's (the strong mode's daemon user), which a client accepts only then (`socketRefusal`).
   */
  socketNamed?: true;
}

function xdg(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const v = env[name];
  // The XDG spec says relative values are invalid and must be ignored.
  return v && path.isAbsolute(v) ? v : path.join(os.homedir(), fallback);
}

export function attachmentsDefaultDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdg(env, "XDG_CACHE_HOME", ".cache"), "chainmail", "attachments");
}

/** CHAINMAIL_SOCKET, which must be absolute: a relative one would follow the working dir. */
function socketOverride(env: NodeJS.ProcessEnv): string | undefined {
  const v = env["CHAINMAIL_SOCKET"];
  if (v === undefined || v === "") return undefined;
  if (!path.isAbsolute(v))
    throw new MailError(
      "INVALID_ARGUMENT",
      `CHAINMAIL_SOCKET (or --socket) must be an absolute path; got ${JSON.stringify(v)}`,
      "Give the daemon's socket path, such as /tmp/chainmail-UID/chainmail.sock.",
    );
  return path.resolve(v);
}

export function resolveHome(explicit?: string, env: NodeJS.ProcessEnv = process.env): Home {
  const home = homeDirs(explicit, env);
  const socket = socketOverride(env);
  return socket ? { ...home, runtimeDir: path.dirname(socket), socketPath: socket, socketNamed: true } : home;
}

function homeDirs(explicit: string | undefined, env: NodeJS.ProcessEnv): Home {
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

const refuse = (dir: string, why: string, hint: string) =>
  new MailError("INVALID_ARGUMENT", `${dir} ${why}`, hint);

/**
 * Creates a dir of this user with `mode` (0700 unless given), or checks an existing one: judged by
 * lstat, so a symlink planted at the path (in a shared dir such as /tmp) is refused instead of
 * followed, and a dir of another user is refused. Created with mkdir (which never follows a symlink
 * at the last component) and checked again after. The mode and group are then set on the dir opened
 * with O_NOFOLLOW, the one checked: once it is ours, nobody else can rename it, not even in sticky /tmp.
 */
export function ensurePrivateDir(dir: string, options: { mode?: number; gid?: number } = {}): void {
  const mode = options.mode ?? 0o700;
  const uid = process.getuid?.();
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const st = fs.lstatSync(dir);
  const hint =
    "Remove it (or point CHAINMAIL_HOME, CHAINMAIL_SOCKET or XDG_RUNTIME_DIR elsewhere) and start again.";
  if (st.isSymbolicLink())
    throw refuse(dir, "is a symbolic link; chainmail never follows one for its own dirs", hint);
  if (!st.isDirectory()) throw refuse(dir, "is not a directory", hint);
  if (uid !== undefined && st.uid !== uid)
    throw refuse(dir, `belongs to another user (uid ${st.uid}, not ${uid})`, hint);
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
  try {
    const same = fs.fstatSync(fd);
    if (same.ino !== st.ino || same.dev !== st.dev) throw refuse(dir, "changed while it was checked", hint);
    if (options.gid !== undefined && same.gid !== options.gid) fs.fchownSync(fd, same.uid, options.gid);
    if ((same.mode & 0o7777) !== mode) fs.fchmodSync(fd, mode);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Why a client must not connect to `socketPath`, or undefined. A client sends the daemon every
 * request (a mail's body, an upload's bytes) and believes every answer, so the socket must be the
 * daemon user's: in sticky /tmp another local user can make /tmp/chainmail-UID, their own dir with
 * their own listening socket, before the owner's daemon first runs. The runtime dir (the socket's
 * parent) must be a real dir, by lstat, that no other user can write to; it and the socket must be
 * this user's, or, for a socket named by CHAINMAIL_SOCKET or --socket (`named`: a daemon under
 * another OS user, the strong mode), the socket its dir owner's. A dir or socket that cannot be
 * looked at (missing, or not searchable by this user) is left to connect() to report.
 */
export function socketRefusal(socketPath: string, named: boolean): string | undefined {
  const uid = process.getuid?.();
  const dir = path.dirname(socketPath);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) return `${dir} is a symbolic link`;
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (!named && uid !== undefined && st.uid !== uid)
    return `${dir} belongs to another user (uid ${st.uid}, not ${uid})`;
  if ((st.mode & 0o022) !== 0)
    return `${dir} is writable by other users (mode 0${(st.mode & 0o7777).toString(8)})`;
  // (a named socket's dir owner, the strong mode's daemon user, may own dirs above it too: its home)
  const above = unsafeAncestor(dir, uid, named ? st.uid : undefined);
  if (above !== undefined) return above;
  let sock: fs.Stats;
  try {
    sock = fs.lstatSync(socketPath);
  } catch {
    return undefined;
  }
  if (!named && uid !== undefined && sock.uid !== uid)
    return `${socketPath} belongs to another user (uid ${sock.uid}, not ${uid})`;
  if (named && sock.uid !== st.uid)
    return `${socketPath} is not owned by the owner of its dir (uid ${st.uid})`;
  return undefined;
}

/**
 * Why a dir above the socket's dir lets another user swap that dir for their own, or undefined:
 * whoever can rename an entry in an ancestor can put their own dir (and listening socket) at the
 * path after any check of the dir itself. So every ancestor, on the path as given and on its real
 * path (symlinks resolved), must be root's, this user's or (`daemonUid`, a named socket's) the
 * daemon user's, and writable by no one else unless it is sticky (as /tmp is: there only an entry's
 * owner may rename it, and the entry below is checked too). As OpenSSH judges the path to
 * authorized_keys. A symlink on the way must be such a user's; where it points is checked on the
 * real path.
 */
function unsafeAncestor(dir: string, uid: number | undefined, daemonUid?: number): string | undefined {
  const trusted = (owner: number) => owner === 0 || owner === uid || owner === daemonUid;
  const chains = [path.dirname(dir)];
  try {
    chains.push(fs.realpathSync(path.dirname(dir)));
  } catch {
    return undefined; // missing or not searchable: connect() reports it
  }
  for (const start of chains) {
    for (let at = start; ; at = path.dirname(at)) {
      let st: fs.Stats;
      try {
        st = fs.lstatSync(at);
      } catch {
        return undefined;
      }
      if (uid !== undefined && !trusted(st.uid))
        return `${at}, above the socket's dir, belongs to another user (uid ${st.uid})`;
      if (st.isDirectory() && (st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0)
        return `${at}, above the socket's dir, is writable by other users (mode 0${(st.mode & 0o7777).toString(8)})`;
      if (at === path.dirname(at)) break;
    }
  }
  return undefined;
}

/** A group's id from its name (through NSS, as `getent group` resolves it) or its number. */
export function groupId(group: string): number {
  if (/^\d+$/.test(group)) return Number(group);
  let line = "";
  try {
    line = execFileSync("getent", ["group", group], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    // getent exits 2 for an unknown group
  }
  const gid = line.split(":")[2];
  if (!gid || !/^\d+$/.test(gid))
    throw new MailError(
      "CONFIG_INVALID",
      `daemon.socket_group: no group named ${JSON.stringify(group)}`,
      "Create the group (groupadd) and add the daemon's user and the agent's user to it.",
    );
  return Number(gid);
}
