/**
 * A throwaway PostgreSQL 15 for tests: `initdb` into a temp dir, `postgres` on 127.0.0.1 and a free high
 * port (its socket in the same dir), trust authentication for one superuser, and a fresh database per
 * caller (`createDatabase`). PostgreSQL refuses to run as root, so as root the data dir belongs to the
 * `postgres` system user the Debian package creates and both programs run as that user; otherwise
 * everything runs as the current user.
 *
 * The server runs in its own process group. `stop()` shuts it down and removes the dir; if the test
 * process exits without that, an exit handler kills the group, and if the test process dies outright
 * (SIGKILL), a small watchdog process notices, kills the server's group and removes the dir.
 * Needs no npm package: readiness and databases go through the Debian client programs.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where Debian's postgresql-15 puts its programs. */
export const POSTGRES_BIN_DIR = "/usr/lib/postgresql/15/bin";

export interface PostgresServer {
  /** Connection URL of the `postgres` maintenance database (superuser, no password). */
  url: string;
  host: string;
  port: number;
  user: string;
  /** The temp dir holding the data dir and the socket. */
  dir: string;
  /** Creates an empty database (a fresh name unless given) and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Fast shutdown, then removes the temp dir. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Default POSTGRES_BIN_DIR. */
  binDir?: string;
  /** Extra `-c name=value` settings for the server. */
  settings?: Record<string, string | number>;
  /** How long to wait for the server to accept connections. Default 30 s. */
  startTimeoutMs?: number;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) killGroup(child, "SIGKILL");
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function systemUser(name: string): { uid: number; gid: number } | undefined {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return undefined;
  const parts = line.split(":");
  return { uid: Number(parts[2]), gid: Number(parts[3]) };
}

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

let counter = 0;

/** Starts a throwaway PostgreSQL (see the module comment). Rejects with the server's log if it cannot. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const binDir = options.binDir ?? POSTGRES_BIN_DIR;
  const postgresBin = join(binDir, "postgres");
  if (!existsSync(postgresBin)) {
    throw new Error(
      `PostgreSQL 15 is not installed (${postgresBin} is missing): apt-get install postgresql-15`,
    );
  }
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const owner = isRoot ? systemUser("postgres") : undefined;
  if (isRoot && !owner)
    throw new Error("Running as root needs the postgres system user (postgresql-15 adds it)");
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const user = "postgres";
  const dir = mkdtempSync(join(tmpdir(), "mcpforge-pg-"));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, "data");
  const env = { ...process.env, LC_ALL: "C", LANG: "C" };
  try {
    await run(
      join(binDir, "initdb"),
      ["-D", data, "-A", "trust", "-U", user, "-E", "UTF8", "--locale=C", "--no-sync"],
      { ...as, cwd: dir, env },
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(err as Error).message}`);
  }

  const host = "127.0.0.1";
  const settings: Record<string, string | number> = {
    listen_addresses: host,
    unix_socket_directories: dir,
    // A throwaway cluster: nothing to keep after a crash of the machine, so no flushes to wait for.
    fsync: "off",
    full_page_writes: "off",
    max_connections: 200,
    ...options.settings,
  };
  const args = Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
  let child: ChildProcess | undefined;
  let port = 0;
  let log = "";
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort();
    const c = spawn(postgresBin, ["-D", data, "-p", String(port), ...args], {
      ...as,
      cwd: dir,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    log = "";
    c.stdout?.on("data", (d: Buffer) => {
      log += d.toString();
    });
    c.stderr?.on("data", (d: Buffer) => {
      log += d.toString();
    });
    running.add(c);
    c.once("exit", () => running.delete(c));
    if (await ready(binDir, host, port, user, c, options.startTimeoutMs ?? 30_000)) child = c;
    else {
      killGroup(c, "SIGKILL");
      await exited(c, 2000);
    }
  }
  if (!child) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start:\n${log}`);
  }
  const server = child;
  const watchdog = startWatchdog(server, dir);
  const url = `postgres://${user}@${host}:${port}/postgres`;
  let stopped: Promise<void> | undefined;

  return {
    url,
    host,
    port,
    user,
    dir,
    async createDatabase(name?: string): Promise<string> {
      const db = name ?? `test_${process.pid}_${Date.now().toString(36)}_${counter++}`;
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(db)) throw new Error(`Not a plain database name: ${db}`);
      await run(join(binDir, "createdb"), ["-h", host, "-p", String(port), "-U", user, db], { env });
      return `postgres://${user}@${host}:${port}/${db}`;
    },
    stop(): Promise<void> {
      stopped ??= (async () => {
        // SIGINT to the postmaster alone is PostgreSQL's fast shutdown: clients are disconnected.
        if (server.pid !== undefined && server.exitCode === null) {
          try {
            process.kill(server.pid, "SIGINT");
          } catch {
            // already gone
          }
        }
        if (!(await exited(server, 10_000))) killGroup(server, "SIGKILL");
        await exited(server, 2000);
        killGroup(watchdog, "SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

async function ready(
  binDir: string,
  host: string,
  port: number,
  user: string,
  child: ChildProcess,
  timeoutMs: number,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    try {
      await run(join(binDir, "pg_isready"), ["-q", "-h", host, "-p", String(port), "-U", user, "-t", "2"]);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

/**
 * A shell of its own that polls the test process; once it is gone (killed before
 * any exit handler could run), it kills the group and removes the dir.
 */
function startWatchdog(server: ChildProcess, dir: string): ChildProcess {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 -${server.pid} 2>/dev/null; sleep 1; rm -rf '${dir}'`;
  const dog = spawn("/bin/sh", ["-c", script], { detached: true, stdio: "ignore" });
  dog.unref();
  running.add(dog);
  dog.once("exit", () => running.delete(dog));
  return dog;
}
