/**
 * `chainmail accounts add` at a real terminal (issue 33 point 3): it asks for the password of a new
 * password account at once, without echo, and stores it (0600), so the owner leaves with a working
 * entry; a Microsoft account (OAuth2 only) gets its [accounts.oauth] table and the sign-in as a step
 * after the owner confirms its server settings. The built CLI runs under util-linux `script`.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { startMailEnv } from "../src/testing/index.js";
import { CLI, shownCode } from "./support/tty.js";

let home: string;
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "cm-add-tty-"));
});
afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs the CLI on a pseudo-terminal; types each answer once its prompt has been printed, in turn. */
function inTerminal(
  args: string[],
  prompt: RegExp,
  line: string,
  more: Array<[RegExp, (out: string) => string]> = [],
  chainmailHome = home,
): Promise<{ code: number | null; out: string }> {
  const cmd = [process.execPath, CLI, ...args].map(quote).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qefc", cmd, "/dev/null"], {
      env: { ...process.env, CHAINMAIL_HOME: chainmailHome },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    const answers: Array<[RegExp, (out: string) => string]> = [[prompt, () => line], ...more];
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const seen = (b: Buffer) => {
      out += b.toString("utf8");
      const next = answers[0];
      if (next === undefined || !next[0].test(out)) return;
      answers.shift();
      child.stdin.write(`${next[1](out)}\r`);
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe("accounts add at a terminal", () => {
  it("asks for the password of a password account and stores it, without echoing it", async () => {
    const r = await inTerminal(
      ["accounts", "add", "me@fastmail.com", "--offline", "--name", "fm"],
      /Password for fm: /,
      "app-pass-1234",
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toContain("app-pass-1234");
    const secret = path.join(home, "secrets", "fm.secret");
    expect(fs.readFileSync(secret, "utf8")).toBe("app-pass-1234");
    expect(fs.statSync(secret).mode & 0o777).toBe(0o600);
    // the password step is done: what is left is the daemon, the owner's confirmation and the test
    expect(r.out).not.toContain("chainmail secret set fm");
    expect(r.out).toMatch(/chainmail policy confirm +# confirm/);
    expect(r.out).toMatch(/chainmail test fm +# log in/);
    expect(loadConfig(path.join(home, "config.toml")).accounts.map((a) => a.name)).toEqual(["fm"]);
  });

  it("writes [accounts.oauth] for Microsoft and leaves the sign-in for after the confirmation", async () => {
    const r = await inTerminal(
      ["accounts", "add", "me@outlook.com", "--offline", "--name", "ms"],
      /never printed/,
      "",
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toContain("Password for");
    expect(r.out).toContain("[accounts.oauth]");
    const steps = r.out.slice(r.out.indexOf("next:"));
    expect(steps.indexOf("chainmail policy confirm")).toBeLessThan(steps.indexOf("chainmail auth login ms"));
    const ms = loadConfig(path.join(home, "config.toml")).accounts.find((a) => a.name === "ms");
    expect(ms?.provider).toBe("microsoft");
    expect(ms?.oauth?.token_endpoint).toBe("https://login.microsoftonline.com/common/oauth2/v2.0/token");
    expect(fs.existsSync(path.join(home, "secrets", "ms.secret"))).toBe(false);
  });
});

describe("accounts add at a terminal with the daemon running", () => {
  it("stores the password, confirms the new server settings by the code shown, and tests the account", async () => {
    const env = await startMailEnv();
    try {
      const r = await inTerminal(
        [
          "accounts",
          "add",
          "carol@example.com",
          "--name",
          "carol",
          "--username",
          "carol",
          "--imap-host",
          "127.0.0.1",
          "--imap-port",
          String(env.dv.port),
          "--imap-tls",
          "none",
          "--no-smtp",
        ],
        /Password for carol: /,
        "carol-secret-pw",
        [[/type this code: [A-Z0-9]+/, (out) => shownCode(out) ?? ""]],
        env.dir,
      );
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/carol \(digest [0-9a-f]+\)/);
      // the test ran through the daemon: IMAP logged in with the password just typed
      expect(r.out).toMatch(/IMAP\s+ok/i);
      expect(r.out).not.toContain("next:");
      const { accounts } = await env.client.call("accounts.list", {});
      expect(accounts.find((a) => a.name === "carol")).toMatchObject({ confirmation_pending: false });
    } finally {
      await env.stop();
    }
  }, 60_000);
});
