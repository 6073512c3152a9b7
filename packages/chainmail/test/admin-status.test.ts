/**
 * `chainmail admin status` against a real Dovecot: the daemon's version and uptime, each account's
 * auth and connection state as its calls left them, the cache and its sizes, a widening waiting for
 * `policy confirm`, a send whose outcome is unknown, and a broken config.toml edit shown until it is
 * fixed. Only the CLI client may ask.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { outboxOf } from "../src/outbox/index.js";
import { setSecret } from "../src/secrets.js";
import { StateDb } from "../src/store/state.js";
import { type MailEnv, startMailEnv } from "../src/testing/index.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
const version = (JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")) as { version: string })
  .version;
let env: MailEnv;

const status = () => env.client.call("admin.status", {});

function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--home", env.dir, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString("utf8");
    });
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  env = await startMailEnv({
    extra: [
      { name: "wrongpw", user: "carol" },
      { name: "nopw", user: "carol" },
    ],
  });
  setSecret(env.home.secretsDir, "wrongpw", "not-carols-password");
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

describe("admin status", () => {
  it("reports the daemon, each account's auth and connection as its calls left them, and the sizes", async () => {
    const before = await status();
    expect(before.daemon.version).toBe(version);
    expect(before.daemon.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(before.daemon.started!)).toBeLessThanOrEqual(Date.now());
    expect(before.accounts.map((a) => [a.account, a.auth])).toEqual([
      ["work", "unknown"],
      ["home", "unknown"],
      ["wrongpw", "unknown"],
      ["nopw", "missing"],
    ]);
    await env.client.call("folders.list", { accounts: ["work"] });
    await env.client.call("folders.list", { accounts: ["wrongpw"] }).catch(() => undefined);
    const after = await status();
    const of = (name: string) => after.accounts.find((a) => a.account === name)!;
    expect(of("work").connection).toEqual({ state: "open", last_error: null });
    expect(of("home").connection.state).toBe("none");
    expect(of("wrongpw").auth).toBe("rejected");
    expect(of("wrongpw").connection).toMatchObject({
      state: "none",
      last_error: { reason: "AUTH_REJECTED" },
    });
    expect(of("work").cache).toMatchObject({ state: expect.any(String), watching: [] });
    expect(after.sizes.state_db_bytes).toBeGreaterThan(0);
    expect(after.sizes.state_db_bytes).toBeGreaterThanOrEqual(fs.statSync(env.home.dbFile).size);
    expect(after.config_error).toBeNull();
    expect(after.pending_confirmations).toEqual([]);
    expect(after.unconfirmed_sends).toEqual([]);
  });

  it("shows a widening waiting for confirmation and a send whose outcome is unknown", async () => {
    env.writeConfig({ work: { allow_expunge: true }, extra: [] });
    const db = new StateDb(env.home.dbFile);
    try {
      outboxOf(db).store.begin({
        key: "k-unknown-1",
        account: "work",
        tool: "send_email",
        message_id: "<unknown-1@example.com>",
        status: "pending",
        created: new Date().toISOString(),
      });
    } finally {
      db.close();
    }
    const s = await status();
    expect(s.pending_confirmations).toEqual([
      { account: "work", digest: expect.stringMatching(/^[0-9a-f]{12}$/), changes: expect.any(Array) },
    ]);
    expect(s.unconfirmed_sends).toEqual([
      expect.objectContaining({ key: "k-unknown-1", account: "work", message_id: "<unknown-1@example.com>" }),
    ]);
  });

  it("shows a broken config.toml edit until it is fixed, while the daemon keeps the config before it", async () => {
    fs.writeFileSync(env.home.configFile, "[[accounts]\nname = ");
    const t = new Date(Date.now() + 200_000);
    fs.utimesSync(env.home.configFile, t, t);
    const broken = await status();
    expect(broken.config_error).toMatchObject({
      file: expect.any(String),
      message: expect.any(String),
      since: expect.any(String),
    });
    expect(broken.accounts.map((a) => a.account)).toContain("work");
    const r = await cli(["admin", "status"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^daemon \S+\tpid \d+/);
    expect(r.out).toContain("config.toml: the last reload failed");
    expect(r.out).toMatch(/^work\tauth (ok|unknown)\tconnection /m);
    expect(r.out).toContain("k-unknown-1");
    env.writeConfig({ extra: [] });
    expect((await status()).config_error).toBeNull();
    const json = await cli(["admin", "status", "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({ daemon: { version }, config_error: null });
  });

  it("is refused to an MCP client", async () => {
    const mcp = new DaemonClient({ socketPath: env.home.socketPath, client: "mcp" });
    try {
      await expect(mcp.call("admin.status", {})).rejects.toMatchObject({ reason: "POLICY_DENIED" });
    } finally {
      mcp.close();
    }
  });
});
