/**
 * The clients trust the socket they connect to as the daemon: they send it every request (a mail's
 * body, an upload's bytes) and believe every answer. In sticky /tmp another local user can make
 * /tmp/chainmail-UID first, their own dir with their own listening socket, before the owner's
 * daemon ever runs (the daemon then refuses the dir, runtime-dir.test.ts). A client must refuse it
 * too, not talk to it: at a socket path chainmail derived (not named by CHAINMAIL_SOCKET or
 * --socket), the runtime dir must be this user's, a real dir no other user can write to, and the
 * socket this user's. A named socket may be another user's (the strong mode's daemon user), but its
 * dir must still be a real dir that only its owner can write to, and the socket the dir owner's.
 * Tested as root with uid 65534 for the other user, through the CLI the user runs.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { REASONS } from "../src/errors.js";
import { resolveHome } from "../src/home.js";
import { CLI } from "./support/tty.js";

const OTHER = 65534;
/** The strong mode's daemon user, in the tests of a named socket whose dirs a third user owns. */
const DAEMON_USER = 65533;

const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

beforeAll(() => {
  expect(process.getuid?.(), "chown to another uid needs root").toBe(0);
  expect(fs.existsSync(CLI), "build the CLI first (npx tsup)").toBe(true);
});

/** A sticky world-writable dir like /tmp, and a user's XDG dirs beside it. */
function shared(): { tmp: string; env: NodeJS.ProcessEnv } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "cm-sock-"));
  cleanup.push(() => fs.rmSync(base, { recursive: true, force: true }));
  const tmp = path.join(base, "tmp");
  fs.mkdirSync(tmp);
  fs.chmodSync(tmp, 0o1777);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env["PATH"],
    HOME: path.join(base, "home"),
    XDG_CONFIG_HOME: path.join(base, "config"),
    XDG_DATA_HOME: path.join(base, "data"),
    XDG_CACHE_HOME: path.join(base, "cache"),
    // The runtime dir is then tmp/chainmail: derived, as /tmp/chainmail-UID is without XDG_RUNTIME_DIR
    XDG_RUNTIME_DIR: tmp,
  };
  return { tmp, env };
}

/** A fake daemon at `sock` that records what it is sent and answers every request with a forgery. */
async function impostor(sock: string): Promise<{ heard: () => string }> {
  let heard = "";
  const server = net.createServer((s) => {
    s.setEncoding("utf8");
    s.on("data", (chunk: string) => {
      heard += chunk;
      for (const line of chunk.split("\n").filter(Boolean)) {
        const id = (JSON.parse(line) as { id: number }).id;
        s.write(`${JSON.stringify({ v: 1, id, result: { accounts: [{ name: "forged" }] } })}\n`);
      }
    });
    s.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(sock, r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { heard: () => heard };
}

/** Plants `dir` with a listening socket in it, both then given to `uid`, the dir `mode`. */
async function plant(dir: string, uid: number, mode: number) {
  fs.mkdirSync(dir);
  const sock = path.join(dir, "chainmail.sock");
  const fake = await impostor(sock);
  fs.chmodSync(sock, 0o777);
  fs.chownSync(sock, uid, uid);
  fs.chmodSync(dir, mode);
  fs.chownSync(dir, uid, uid);
  return { sock, fake };
}

const cli = (args: string[], env: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, [CLI, ...args], { env, timeout: 30_000 }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
  );

describe("a client refuses a socket it did not get from the daemon's user", () => {
  it("a derived runtime dir of another user with a live socket: the CLI refuses it and sends nothing", async () => {
    const { tmp, env } = shared();
    const runtime = path.join(tmp, "chainmail");
    const { fake } = await plant(runtime, OTHER, 0o755);
    const r = await cli(["accounts"], env);
    expect(fake.heard(), "nothing reached the other user's socket").toBe("");
    expect(r.out).not.toContain("forged");
    expect(r.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    expect(r.err).toContain(`${runtime} belongs to another user (uid ${OTHER}, not 0)`);
  });

  it("a derived runtime dir that is a symlink, or that others can write to: refused, nothing sent", async () => {
    const { tmp, env } = shared();
    const elsewhere = path.join(tmp, "elsewhere");
    const { fake } = await plant(elsewhere, 0, 0o700);
    fs.symlinkSync(elsewhere, path.join(tmp, "chainmail"));
    const linked = await cli(["accounts"], env);
    expect(linked.err).toContain("is a symbolic link");
    expect(linked.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    fs.rmSync(path.join(tmp, "chainmail"));

    // Our own dir, but left open: anyone could have put the socket there
    const open = await plant(path.join(tmp, "chainmail"), 0, 0o777);
    const opened = await cli(["accounts"], env);
    expect(opened.err).toContain("is writable by other users");
    expect(opened.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    expect(fake.heard() + open.fake.heard()).toBe("");
  });

  it("a socket of another user in our own dir: refused", async () => {
    const { tmp, env } = shared();
    const runtime = path.join(tmp, "chainmail");
    const { sock, fake } = await plant(runtime, 0, 0o700);
    fs.chownSync(sock, OTHER, OTHER);
    const r = await cli(["accounts"], env);
    expect(r.err).toContain(`${sock} belongs to another user (uid ${OTHER}, not 0)`);
    expect(fake.heard()).toBe("");
  });

  it("a named socket (CHAINMAIL_SOCKET or --socket) may be another user's in that user's closed dir, as in the strong mode", async () => {
    const { tmp, env } = shared();
    const runtime = path.join(tmp, "daemon-user");
    const { sock, fake } = await plant(runtime, OTHER, 0o750);
    const r = await cli(["--socket", sock, "--json", "accounts"], env);
    expect(fake.heard()).toContain('"method"');
    expect(r.out).toContain("forged");

    // ...but not in a dir others can write to, nor one owned by another than the socket's owner
    fs.chmodSync(runtime, 0o777);
    const open = new DaemonClient({ socketPath: sock, client: "cli", socketNamed: true });
    await expect(open.call("accounts.list")).rejects.toMatchObject({
      reason: "DAEMON_UNAVAILABLE",
      message: expect.stringContaining("is writable by other users"),
    });
    open.close();
    fs.chmodSync(runtime, 0o750);
    fs.chownSync(sock, 0, 0);
    const mixed = new DaemonClient({ socketPath: sock, client: "cli", socketNamed: true });
    await expect(mixed.call("accounts.list")).rejects.toMatchObject({
      reason: "DAEMON_UNAVAILABLE",
      message: expect.stringContaining(`is not owned by the owner of its dir (uid ${OTHER})`),
    });
    mixed.close();
    expect(resolveHome(undefined, { ...env, CHAINMAIL_SOCKET: sock }).socketNamed).toBe(true);
    expect(resolveHome(undefined, env).socketNamed).toBeUndefined();
  });

  it("a dir above the socket's that another user owns, or can write to, lets them swap the socket's dir: refused", async () => {
    const { tmp, env } = shared();
    // A third user's dir in sticky tmp; inside it the daemon user's closed dir, as named. The third
    // user can rename it away at any time and put their own (with their own socket) there.
    const theirs = path.join(tmp, "theirs");
    fs.mkdirSync(theirs);
    const { sock, fake } = await plant(path.join(theirs, "daemon-user"), DAEMON_USER, 0o750);
    fs.chownSync(theirs, OTHER, OTHER);
    const r = await cli(["--socket", sock, "accounts"], env);
    expect(fake.heard(), "nothing reached the socket").toBe("");
    expect(r.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    expect(r.err).toContain(`${theirs}, above the socket's dir, belongs to another user (uid ${OTHER})`);

    // A root-owned ancestor that anyone can write to (not sticky): the same, for a derived socket too
    const open = path.join(tmp, "open");
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    const ours = await plant(path.join(open, "chainmail"), 0, 0o700);
    const derived = await cli(["accounts"], { ...env, XDG_RUNTIME_DIR: open });
    expect(derived.err).toContain(`${open}, above the socket's dir, is writable by other users (mode 0777)`);
    expect(derived.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    expect(ours.fake.heard()).toBe("");

    // A symlink on the way, planted by the other user, is refused; one of ours that leads to a safe
    // place is followed and the place checked: the daemon there is reached
    const safe = path.join(tmp, "safe");
    fs.mkdirSync(safe, { mode: 0o700 });
    const real = await plant(path.join(safe, "chainmail"), 0, 0o700);
    const link = path.join(tmp, "link");
    fs.symlinkSync(safe, link);
    const followed = await cli(["--json", "accounts"], { ...env, XDG_RUNTIME_DIR: link });
    expect(followed.out).toContain("forged");
    expect(real.fake.heard()).toContain('"method"');
    fs.lchownSync(link, OTHER, OTHER);
    const planted = await cli(["accounts"], { ...env, XDG_RUNTIME_DIR: link });
    expect(planted.err).toContain(`${link}, above the socket's dir, belongs to another user (uid ${OTHER})`);
    expect(planted.out).not.toContain("forged");
  });

  it("a named socket's dir may sit in a dir of the daemon user's own (its home), as the strong mode's may", async () => {
    const { tmp, env } = shared();
    const daemonHome = path.join(tmp, "daemon-home");
    fs.mkdirSync(daemonHome);
    const { sock, fake } = await plant(path.join(daemonHome, "run"), DAEMON_USER, 0o750);
    fs.chownSync(daemonHome, DAEMON_USER, DAEMON_USER);
    const r = await cli(["--socket", sock, "--json", "accounts"], env);
    expect(fake.heard()).toContain('"method"');
    expect(r.out).toContain("forged");
  });

  it("no daemon at all is still DAEMON_UNAVAILABLE naming the socket", async () => {
    const { tmp, env } = shared();
    const r = await cli(["accounts"], env);
    expect(r.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    expect(r.err).toContain(
      `cannot reach the chainmail daemon at ${path.join(tmp, "chainmail", "chainmail.sock")}`,
    );
  });
});
