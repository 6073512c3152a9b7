/**
 * The strong mode, for real (as root, which this machine and CI are): a throwaway group and three
 * throwaway system users made by the test and removed after. The daemon runs as its own user with
 * `socket_group`; an "agent" user in the group uses chainmail through the socket (CHAINMAIL_SOCKET
 * or --socket) but cannot read the secrets, config.toml or state.db, nor edit config.toml; a user
 * outside the group cannot even connect.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { resolveHome } from "../src/home.js";
import { setSecret } from "../src/secrets.js";
import { CLI } from "./support/tty.js";

const tag = crypto.randomBytes(3).toString("hex");
const GROUP = `cmg${tag}`;
const DAEMON = `cmd${tag}`;
const AGENT = `cma${tag}`;
const OUTSIDER = `cmo${tag}`;

let base: string;
let socket: string;
let home: ReturnType<typeof resolveHome>;
let daemon: ChildProcess | undefined;
let daemonPid: number | undefined;

function sh(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** A command as `user`, with chainmail's env for that user. */
function as(user: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync("runuser", ["-u", user, "--", ...args], {
    encoding: "utf8",
    env: { PATH: process.env["PATH"], HOME: "/nonexistent", ...env },
    timeout: 30_000,
  });
}

beforeAll(async () => {
  expect(process.getuid?.(), "the strong-mode test creates OS users: it runs as root").toBe(0);
  sh("groupadd", ["--system", GROUP]);
  sh("useradd", ["--system", "--no-create-home", "--home-dir", "/nonexistent", "-N", "-g", GROUP, DAEMON]);
  sh("useradd", ["--system", "--no-create-home", "--home-dir", "/nonexistent", "-N", "-G", GROUP, AGENT]);
  sh("useradd", ["--system", "--no-create-home", "--home-dir", "/nonexistent", "-N", OUTSIDER]);
  const uid = Number(sh("id", ["-u", DAEMON]).trim());
  const gid = Number(sh("getent", ["group", GROUP]).split(":")[2]);

  // base/home: the daemon's CHAINMAIL_HOME (0700, its own); base/run: where its socket goes.
  base = fs.mkdtempSync(path.join(os.tmpdir(), "cm-strong-"));
  fs.chmodSync(base, 0o755);
  fs.chownSync(base, uid, gid);
  socket = path.join(base, "run", "chainmail.sock");
  home = resolveHome(path.join(base, "home"), { PATH: "", CHAINMAIL_SOCKET: socket });
  fs.mkdirSync(path.dirname(home.configFile), { recursive: true, mode: 0o700 });
  fs.writeFileSync(
    home.configFile,
    `[daemon]\nsocket_group = "${GROUP}"\n[cache]\nbackground = false\n[[accounts]]\nname = "work"\nprovider = "imap"\naddress = "a@example.com"\nusername = "a"\n[accounts.imap]\nhost = "127.0.0.1"\nport = 1\ntls = "none"\n`,
    { mode: 0o600 },
  );
  setSecret(home.secretsDir, "work", "the-daemon-users-secret");
  sh("chown", ["-R", `${uid}:${gid}`, path.join(base, "home")]);
  fs.chmodSync(path.join(base, "home"), 0o700);

  const env = {
    PATH: process.env["PATH"],
    HOME: "/nonexistent",
    CHAINMAIL_HOME: path.join(base, "home"),
    CHAINMAIL_SOCKET: socket,
  };
  daemon = spawn("runuser", ["-u", DAEMON, "--", process.execPath, CLI, "daemon"], { env, stdio: "ignore" });
  for (let i = 0; i < 200 && daemonPid === undefined; i++) {
    await new Promise((r) => setTimeout(r, 50));
    if (!fs.existsSync(socket)) continue;
    const c = new DaemonClient({ socketPath: socket, socketNamed: true, client: "cli" });
    daemonPid = await c.ping().then(
      (p) => p.pid,
      () => undefined,
    );
    c.close();
  }
  expect(daemonPid, "the daemon did not start as its own user").toBeDefined();
}, 60_000);

afterAll(async () => {
  if (daemonPid !== undefined) {
    const exited = new Promise<void>((resolve) => daemon?.once("close", () => resolve()));
    process.kill(daemonPid, "SIGTERM");
    await exited;
  }
  for (const u of [DAEMON, AGENT, OUTSIDER]) spawnSync("userdel", [u]);
  spawnSync("groupdel", [GROUP]);
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

describe("the strong mode (the daemon under its own OS user, the socket open to a group)", () => {
  it("runs the daemon as its user, with the runtime dir 0750 and the socket 0660 of the group", () => {
    const uid = Number(sh("id", ["-u", DAEMON]).trim());
    const gid = Number(sh("getent", ["group", GROUP]).split(":")[2]);
    expect(fs.statSync(`/proc/${daemonPid}`).uid).toBe(uid);
    const dir = fs.lstatSync(path.dirname(socket));
    expect([dir.uid, dir.gid, dir.mode & 0o7777]).toEqual([uid, gid, 0o750]);
    const sock = fs.lstatSync(socket);
    expect([sock.uid, sock.gid, sock.mode & 0o777]).toEqual([uid, gid, 0o660]);
  });

  it("lets a member of the group use chainmail through CHAINMAIL_SOCKET or --socket", () => {
    const viaEnv = as(AGENT, [process.execPath, CLI, "--json", "accounts"], { CHAINMAIL_SOCKET: socket });
    expect(viaEnv.status, viaEnv.stderr).toBe(0);
    expect(JSON.parse(viaEnv.stdout).accounts).toMatchObject([{ name: "work", confirmation_pending: true }]);
    const viaFlag = as(AGENT, [process.execPath, CLI, "--socket", socket, "--json", "policy", "status"]);
    expect(viaFlag.status, viaFlag.stderr).toBe(0);
    expect(JSON.parse(viaFlag.stdout).accounts[0]).toMatchObject({ account: "work", pending: true });
  });

  it("keeps the secrets, config.toml and state.db out of the member's reach", () => {
    const secret = fs.readdirSync(home.secretsDir).map((f) => path.join(home.secretsDir, f));
    expect(secret.length).toBeGreaterThan(0);
    for (const f of [...secret, home.configFile, home.dbFile]) {
      const read = as(AGENT, ["cat", f]);
      expect(read.status, f).not.toBe(0);
      expect(read.stdout).toBe("");
    }
    const edit = as(AGENT, ["sh", "-c", `echo '[files]' >> '${home.configFile}'`]);
    expect(edit.status).not.toBe(0);
    expect(fs.readFileSync(home.configFile, "utf8")).not.toContain("[files]");
    const del = as(AGENT, ["rm", "-f", home.dbFile]);
    expect(del.status).not.toBe(0);
    expect(fs.existsSync(home.dbFile)).toBe(true);
  });

  it("keeps a user outside the group off the socket", () => {
    const r = as(OUTSIDER, [process.execPath, CLI, "--socket", socket, "--json", "accounts"]);
    expect(r.status).toBe(11);
    expect(JSON.parse(r.stdout).error.reason).toBe("DAEMON_UNAVAILABLE");
  });
});
