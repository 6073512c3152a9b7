/**
 * The runtime dir holds the socket every client trusts, so it must be the daemon user's own dir: a
 * symlink planted at its path (the attack in sticky /tmp when XDG_RUNTIME_DIR is unset), a folder of
 * another user or a file there makes the daemon refuse to start, naming the path. With
 * `[daemon] socket_group` the dir is 0750 and the socket 0660, owned by that group.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { startDaemon } from "../src/daemon/server.js";
import { type Home, resolveHome } from "../src/home.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A chainmail home whose socket sits in `shared`, a sticky world-writable dir like /tmp. */
function homeIn(config = ""): { home: Home; shared: string; runtime: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-rt-"));
  dirs.push(dir);
  const shared = path.join(dir, "shared");
  fs.mkdirSync(shared);
  fs.chmodSync(shared, 0o1777);
  const runtime = path.join(shared, `chainmail-${process.getuid?.() ?? 0}`);
  const home = resolveHome(path.join(dir, "home"), {
    ...process.env,
    CHAINMAIL_SOCKET: path.join(runtime, "chainmail.sock"),
    XDG_CACHE_HOME: path.join(dir, "cache"),
  });
  fs.mkdirSync(path.dirname(home.configFile), { recursive: true });
  fs.writeFileSync(home.configFile, `[cache]\nbackground = false\n${config}`);
  return { home, shared, runtime };
}

const refusal = (home: Home) =>
  startDaemon({ home, log: () => undefined }).then(
    async (d) => {
      await d.stop();
      throw new Error("the daemon started");
    },
    (err: unknown) => err as { reason: string; message: string },
  );

describe("the runtime dir", () => {
  it("is /tmp/chainmail-UID when XDG_RUNTIME_DIR is unset, and CHAINMAIL_SOCKET moves the socket and the dir", () => {
    const env = { HOME: "/home/x", PATH: "/usr/bin" };
    const uid = process.getuid?.() ?? 0;
    expect(resolveHome(undefined, env).runtimeDir).toBe(path.join(os.tmpdir(), `chainmail-${uid}`));
    const moved = resolveHome("/srv/cm", { ...env, CHAINMAIL_SOCKET: "/run/chainmail/s.sock" });
    expect(moved).toMatchObject({
      socketPath: "/run/chainmail/s.sock",
      runtimeDir: "/run/chainmail",
      secretsDir: "/srv/cm/secrets",
    });
    expect(() => resolveHome(undefined, { ...env, CHAINMAIL_SOCKET: "rel/s.sock" })).toThrow(/absolute/);
  });

  it("refuses a symlink planted at its path, naming the path, and never follows it", async () => {
    const { home, shared, runtime } = homeIn();
    // Another user's dir the link points at; the daemon must not put its socket there.
    const decoy = path.join(shared, "decoy");
    fs.mkdirSync(decoy, { mode: 0o700 });
    fs.symlinkSync(decoy, runtime);
    const err = await refusal(home);
    expect(err.reason).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain(runtime);
    expect(err.message).toContain("symbolic link");
    expect(fs.readdirSync(decoy)).toEqual([]);
    expect(fs.lstatSync(runtime).isSymbolicLink()).toBe(true);
  });

  it("refuses a symlink to a dir of its own user too (the link itself can be repointed)", async () => {
    const { home, shared, runtime } = homeIn();
    const mine = path.join(shared, "mine");
    fs.mkdirSync(mine, { mode: 0o700 });
    fs.symlinkSync(mine, runtime);
    expect((await refusal(home)).message).toContain(`${runtime} is a symbolic link`);
  });

  it("refuses a folder owned by another uid, naming the path", async () => {
    expect(process.getuid?.(), "chown to another uid needs root").toBe(0);
    const { home, runtime } = homeIn();
    fs.mkdirSync(runtime, { mode: 0o700 });
    fs.chownSync(runtime, 65534, 65534);
    const err = await refusal(home);
    expect(err.reason).toBe("INVALID_ARGUMENT");
    expect(err.message).toBe(`${runtime} belongs to another user (uid 65534, not 0)`);
    expect(fs.readdirSync(runtime)).toEqual([]);
  });

  it("refuses a file at its path", async () => {
    const { home, runtime } = homeIn();
    fs.writeFileSync(runtime, "");
    expect((await refusal(home)).message).toBe(`${runtime} is not a directory`);
  });

  it("creates it 0700 with the socket 0600, and tightens a dir that was left open", async () => {
    const { home, runtime } = homeIn();
    fs.mkdirSync(runtime, { mode: 0o755 });
    fs.chmodSync(runtime, 0o755);
    const d = await startDaemon({ home, log: () => undefined });
    try {
      expect(fs.lstatSync(runtime).mode & 0o7777).toBe(0o700);
      expect(fs.lstatSync(home.socketPath).mode & 0o777).toBe(0o600);
    } finally {
      await d.stop();
    }
  });

  it("with socket_group: the dir 0750 and the socket 0660, both of that group, and clients connect", async () => {
    // Our own primary group by number: chgrp to it needs no privilege, so this runs as any user.
    const gid = process.getgid?.() ?? 0;
    const other = gid === 0 ? 65534 : gid;
    const { home, runtime } = homeIn(`[daemon]\nsocket_group = "${other}"\n`);
    const d = await startDaemon({ home, log: () => undefined });
    try {
      const dir = fs.lstatSync(runtime);
      expect([dir.mode & 0o7777, dir.gid]).toEqual([0o750, other]);
      const sock = fs.lstatSync(home.socketPath);
      expect([sock.isSocket(), sock.mode & 0o777, sock.gid]).toEqual([true, 0o660, other]);
      const c = new DaemonClient({ socketPath: home.socketPath, client: "mcp" });
      try {
        expect((await c.ping()).ok).toBe(true);
      } finally {
        c.close();
      }
    } finally {
      await d.stop();
    }
  });

  it("refuses an unknown socket_group by name", async () => {
    const { home } = homeIn('[daemon]\nsocket_group = "no-such-group-cm"\n');
    const err = await refusal(home);
    expect(err).toMatchObject({ reason: "CONFIG_INVALID" });
    expect(err.message).toContain("no-such-group-cm");
  });
});
