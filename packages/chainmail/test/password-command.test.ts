/**
 * password_command against a real Dovecot: the password is the first line of the command's output,
 * the command runs without a shell, and a failing command is AUTH_REQUIRED naming it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { parseConfig } from "../src/config.js";
import { type Daemon, startDaemon } from "../src/daemon/server.js";
import { isMailError } from "../src/errors.js";
import { type Home, resolveHome } from "../src/home.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";

// Shell syntax in the password: a shell would expand it, so only a shell-less run logs in.
const PASSWORD = "pw;$(echo x)`y`*";
let dv: Dovecot;
let dir: string;
let home: Home;
let daemon: Daemon;
let client: DaemonClient;
let script: string;

function config(command: string): string {
  return `[cache]
enabled = false
[[accounts]]
name = "work"
address = "alice@example.com"
username = "alice"
password_command = ${command}
[accounts.imap]
host = "127.0.0.1"
port = ${dv.port}
tls = "none"
`;
}

beforeAll(async () => {
  dv = await startDovecot({ users: [{ name: "alice", password: PASSWORD }] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-pwcmd-"));
  home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  // Prints its first argument, then a second line that is not part of the password; counts its runs.
  script = path.join(dir, "pw.sh");
  fs.writeFileSync(script, `#!/bin/sh\necho run >> "${dir}/runs"\nprintf '%s\\nsecond line\\n' "$1"\n`, {
    mode: 0o755,
  });
  fs.writeFileSync(home.configFile, config(JSON.stringify([script, PASSWORD])));
  daemon = await startDaemon({ home, log: () => undefined });
  client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
  // A first start runs no password_command the owner has not confirmed: the owner confirms it once.
  expect((await client.testAccount({ account: "work" })).imap.error?.reason).toBe("POLICY_DENIED");
  expect(runs()).toBe(0);
  await client.call("policy.confirm", {});
});

afterAll(async () => {
  client?.close();
  await daemon?.stop();
  await dv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const runs = () =>
  fs.existsSync(path.join(dir, "runs"))
    ? fs.readFileSync(path.join(dir, "runs"), "utf8").split("\n").length - 1
    : 0;

describe("password_command", () => {
  it("logs in with the first line the command prints, run without a shell, and once per daemon", async () => {
    expect((await client.listAccounts()).accounts[0]).toMatchObject({
      auth: "unknown",
      auth_method: "password",
    });
    const r = await client.testAccount({ account: "work" });
    expect(r.imap.ok).toBe(true);
    expect((await client.listAccounts()).accounts[0]!.auth).toBe("ok");
    expect((await client.testAccount({ account: "work" })).imap.ok).toBe(true);
    expect(runs()).toBe(1);
  });

  it("a new command waits for the owner's confirmation; then a failing one is AUTH_REQUIRED naming it", async () => {
    // Anything that can write config.toml could name a program for the daemon to run: like a new
    // server, a new password_command waits for `chainmail policy confirm`.
    const marker = path.join(dir, "ran");
    const other = path.join(dir, "other.sh");
    fs.writeFileSync(other, `#!/bin/sh\ntouch "${marker}"\nexit 3\n`, { mode: 0o755 });
    fs.writeFileSync(home.configFile, config(`"${other} show mail"`));
    const t = new Date(Date.now() + 5000);
    fs.utimesSync(home.configFile, t, t);
    const status = (await client.call("policy.status", {})) as {
      accounts: Array<{ account: string; pending: boolean; changes: string[] }>;
    };
    expect(status.accounts[0]).toMatchObject({ account: "work", pending: true });
    expect(status.accounts[0]!.changes.join("\n")).toContain(
      `password_command ${JSON.stringify([script, PASSWORD])} →`,
    );
    client.close();
    await daemon.stop();
    daemon = await startDaemon({ home, log: () => undefined });
    client = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
    expect((await client.testAccount({ account: "work" })).imap.ok).toBe(true);
    expect(fs.existsSync(marker)).toBe(false);

    await client.call("policy.confirm", {});
    const err = await client
      .search({ query: "", accounts: ["work"], source: "server" })
      .catch((e: unknown) => e);
    expect(fs.existsSync(marker)).toBe(true);
    expect(isMailError(err) && err.reason).toBe("AUTH_REQUIRED");
    expect((err as Error).message).toContain(`(${other} show mail) failed (exit code 3)`);
    expect((err as { hint: string }).hint).toContain("prints the password on its first line");
    expect((await client.listAccounts()).accounts[0]!.auth).toBe("missing");
  });

  it("is refused beside [accounts.oauth], and must be a command", () => {
    const bad = (v: string) => {
      try {
        parseConfig(
          `[[accounts]]\nname = "a"\naddress = "a@b.c"\npassword_command = ${v}\n[accounts.imap]\nhost = "h"\n`,
        );
        return "";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(bad('""')).toContain("accounts[0].password_command must be a command");
    expect(bad("[]")).toContain("accounts[0].password_command must be a command");
    expect(bad("3")).toContain("accounts[0].password_command must be a command");
    expect(
      bad(
        '"pass show x"\n[accounts.oauth]\nclient_id = "x"\ntoken_endpoint = "https://t.example/t"\nauthorization_endpoint = "https://t.example/a"\nscopes = ["s"]',
      ),
    ).toContain("password_command cannot be used with [accounts.oauth]");
  });
});
