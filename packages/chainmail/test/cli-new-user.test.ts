/**
 * The command line as a new user meets it (issue 31, point 8): --version; readable text by default
 * and JSON with --json; an exit status that says when the command did not do what it was asked; a
 * first run without config.toml that says where it goes; an invalid edit of config.toml shown by
 * `accounts` and `policy status` until it is fixed. The built bin against a real Dovecot.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noConfigText } from "../src/cli/first-run.js";
import { DaemonClient } from "../src/client/index.js";
import { loadConfig } from "../src/config.js";
import { type Daemon, startDaemon } from "../src/daemon/server.js";
import { REASONS } from "../src/errors.js";
import { resolveHome } from "../src/home.js";
import { setSecret } from "../src/secrets.js";
import { buildMessage } from "../src/testing/corpus.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";
import { configToml } from "../src/testing/mailenv.js";
import { freePort } from "../src/testing/smtp.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
const VERSION = (JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")) as { version: string })
  .version;

let dv: Dovecot;
const homes: string[] = [];
const daemons: Daemon[] = [];

/** Runs the bin without blocking this process, whose daemon answers it. */
function run(home: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, CHAINMAIL_HOME: home, XDG_CACHE_HOME: path.join(home, "cache") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const isJson = (s: string) => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

/** A home with this config.toml (none when null), both passwords stored, and a daemon in this process. */
async function homeWith(config: string | null): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-newuser-"));
  homes.push(dir);
  const home = resolveHome(dir, { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") });
  if (config !== null) fs.writeFileSync(home.configFile, config);
  setSecret(home.secretsDir, "work", "alice-secret-pw");
  setSecret(home.secretsDir, "home", "bob-secret-pw");
  daemons.push(await startDaemon({ home, log: () => undefined }));
  if (config !== null) {
    // A first start holds the accounts' server settings and policies until the owner confirms them once.
    const owner = new DaemonClient({ socketPath: home.socketPath, client: "cli" });
    await owner.call("policy.confirm", {});
    owner.close();
  }
  return dir;
}

let good: string;
let ref: string;

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  dv = await startDovecot({
    users: [
      { name: "alice", password: "alice-secret-pw" },
      { name: "bob", password: "bob-secret-pw" },
    ],
  });
  await dv.appendMessage(
    "alice",
    "INBOX",
    buildMessage({
      from: "Carol <carol@example.org>",
      to: ["alice@example.com"],
      // An escape sequence a terminal would act on (red text), in a stranger's subject.
      subject: "Quarterly \u001b[31mnumbers\u001b[0m",
      date: new Date("2026-11-30T10:00:00Z"),
      messageId: "<q-1@example.org>",
      text: "The numbers are in.\n",
    }),
  );
  good = await homeWith(configToml(dv, {}));
  const found = JSON.parse(
    (await run(good, ["--json", "search", "subject:quarterly", "--account", "work"])).out,
  ) as {
    rows: Array<{ ref: string }>;
  };
  ref = found.rows[0]!.ref;
});

afterAll(async () => {
  for (const d of daemons) await d.stop();
  await dv?.stop();
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
});

describe("chainmail --version", () => {
  it("prints the package's version, as text and as JSON", async () => {
    const r = await run(good, ["--version"]);
    expect(r).toMatchObject({ code: 0, out: `chainmail ${VERSION}\n` });
    expect(JSON.parse((await run(good, ["--json", "--version"])).out)).toEqual({ version: VERSION });
  });
});

describe("readable text by default, JSON with --json", () => {
  it("folders, get, thread and test print text; --json prints the daemon's JSON", async () => {
    for (const args of [["folders"], ["get", ref], ["thread", ref], ["test", "work"]]) {
      const text = await run(good, args);
      expect(isJson(text.out), `${args.join(" ")}: ${text.out}`).toBe(false);
      expect(isJson((await run(good, ["--json", ...args])).out), args.join(" ")).toBe(true);
    }
    const folders = (await run(good, ["folders", "--account", "work"])).out;
    expect(folders).toMatch(/^work\tINBOX\tinbox\t1 message\(s\)\t1 unseen$/m);
    const got = (await run(good, ["get", ref])).out;
    expect(got).toContain("from: Carol <carol@example.org>");
    expect(got).toContain("The numbers are in.");
    expect((await run(good, ["thread", ref])).out).toMatch(/^thread .*: 1 message\(s\)/);
  });

  it("never hands a terminal the control characters in mail text", async () => {
    const got = (await run(good, ["get", ref])).out;
    expect(got).toContain("subject: Quarterly [31mnumbers[0m");
    expect(got).not.toContain("\u001b");
    // JSON keeps the text exactly, escaped.
    expect((await run(good, ["--json", "get", ref])).out).toContain("\\u001b[31m");
  });

  it("the send commands print their result as text (a reply saved as a draft)", async () => {
    const r = await run(good, ["reply", ref, "--draft", "--body", "Thanks."]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^status: draft\ndraft_ref: \S+\n?$/);
  });
});

describe("exit status", () => {
  it("test exits with the failing login's reason; 0 when every configured login works", async () => {
    const ok = await run(good, ["test", "work"]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^imap\tok$/m);
    expect(ok.out).toMatch(/^smtp\tskipped/m);
    const dead = await homeWith(
      configToml(dv, { work: { port: await freePort() }, smtpPort: await freePort() }),
    );
    const r = await run(dead, ["test", "work"]);
    expect(r.code).toBe(REASONS.SERVER_UNAVAILABLE.exitCode);
    expect(r.out).toMatch(/^imap\tfailed: SERVER_UNAVAILABLE/m);
    expect(r.out).toMatch(/^smtp\tfailed: SERVER_UNAVAILABLE/m);
    const json = await run(dead, ["--json", "test", "work"]);
    expect(json.code).toBe(REASONS.SERVER_UNAVAILABLE.exitCode);
    expect(JSON.parse(json.out)).toMatchObject({ imap: { ok: false }, smtp: { ok: false } });
  });

  it("folders exits with the reason when every account failed, and 0 when one answered", async () => {
    const port = await freePort();
    const bothDead = await homeWith(
      configToml(dv, { work: { port } }).replaceAll(`port = ${dv.port}`, `port = ${port}`),
    );
    const r = await run(bothDead, ["folders"]);
    expect(r.code).toBe(REASONS.SERVER_UNAVAILABLE.exitCode);
    expect(r.out).toMatch(/^work\terror: SERVER_UNAVAILABLE/m);
    expect(r.out).toMatch(/^home\terror: SERVER_UNAVAILABLE/m);
    const oneDead = await homeWith(configToml(dv, { work: { port } }));
    const partly = await run(oneDead, ["folders"]);
    expect(partly.code).toBe(0);
    expect(partly.out).toMatch(/^home\tINBOX/m);
    expect(partly.out).toMatch(/^work\terror: SERVER_UNAVAILABLE/m);
  });
});

describe("a first run without config.toml", () => {
  it("the daemon and accounts say where config.toml goes and how to add an account", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-noconfig-"));
    homes.push(dir);
    const configFile = path.join(dir, "config.toml");
    let daemon: ChildProcess | undefined;
    try {
      daemon = spawn(process.execPath, [CLI, "daemon"], {
        env: { ...process.env, CHAINMAIL_HOME: dir, XDG_CACHE_HOME: path.join(dir, "cache") },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      daemon.stderr!.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      for (let i = 0; i < 200 && !stderr.includes("chainmail accounts"); i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(stderr).toContain(`no config file at ${configFile}`);
      expect(stderr).toContain("[[accounts]]");
      expect(stderr).toContain("chainmail secret set");
      const r = await run(dir, ["accounts"]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`no config file at ${configFile}`);
      expect(r.out).toContain("[[accounts]]");
      expect(JSON.parse((await run(dir, ["--json", "accounts"])).out)).toEqual({ accounts: [] });
      expect(r.out).toContain("chainmail accounts add you@example.com");
      // Listings across accounts say why they are empty, not only that they are
      const none = `No accounts are configured in ${configFile}: \`chainmail accounts add you@example.com\` adds one`;
      for (const args of [["folders"], ["search", "invoice"], ["cache", "status"], ["auth", "status"]]) {
        const listed = await run(dir, args);
        expect(listed.code, args.join(" ")).toBe(0);
        expect(listed.out, args.join(" ")).toContain(none);
      }
      expect((await run(dir, ["search", "invoice"])).out).toMatch(/^0 match\(es\)\n/);
      // (the JSON is the daemon's answer as it is)
      expect(JSON.parse((await run(dir, ["--json", "folders"])).out)).toEqual({ accounts: [], partial: [] });
    } finally {
      daemon?.kill("SIGTERM");
    }
  });

  it("the example it shows is a config that loads, with one account", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-example-"));
    homes.push(dir);
    const file = path.join(dir, "config.toml");
    const example = noConfigText(file)
      .split("\n")
      .filter((l) => l.startsWith("  "))
      .map((l) => l.slice(2))
      .join("\n");
    fs.writeFileSync(file, example);
    expect(loadConfig(file).accounts.map((a) => a.name)).toEqual(["work"]);
  });
});

describe("an invalid edit of config.toml", () => {
  it("shows in accounts and policy status until it is fixed, while the daemon runs on the last good config", async () => {
    const dir = await homeWith(configToml(dv, {}));
    const configFile = path.join(dir, "config.toml");
    const valid = fs.readFileSync(configFile, "utf8");
    expect((await run(dir, ["accounts"])).out).not.toContain("config error");
    fs.writeFileSync(configFile, `${valid}\n[[accounts]]\nname = \n`);
    fs.utimesSync(configFile, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    const accounts = await run(dir, ["accounts"]);
    expect(accounts.code).toBe(0);
    expect(accounts.out).toMatch(/^work\t/m);
    expect(accounts.out).toContain(`config error since `);
    expect(accounts.out).toContain(configFile);
    const json = JSON.parse((await run(dir, ["--json", "accounts"])).out) as {
      accounts: unknown[];
      config_error?: { file: string; message: string; since: string };
    };
    expect(json.accounts).toHaveLength(2);
    expect(json.config_error).toMatchObject({ file: configFile });
    expect(json.config_error!.message.length).toBeGreaterThan(0);
    const policy = await run(dir, ["policy", "status"]);
    expect(policy.out).toContain("config error since ");
    expect(JSON.parse((await run(dir, ["--json", "policy", "status"])).out).config_error).toEqual(
      json.config_error,
    );
    // Still there on the next call, with the same start.
    expect(JSON.parse((await run(dir, ["--json", "accounts"])).out).config_error).toEqual(json.config_error);

    fs.writeFileSync(configFile, valid);
    fs.utimesSync(configFile, new Date(Date.now() + 10000), new Date(Date.now() + 10000));
    expect(JSON.parse((await run(dir, ["--json", "accounts"])).out).config_error).toBeUndefined();
    expect((await run(dir, ["policy", "status"])).out).not.toContain("config error");
  });
});
