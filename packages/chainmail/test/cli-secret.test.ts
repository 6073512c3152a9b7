/**
 * `chainmail secret set` through the built CLI: at a terminal (a real pty, from `script`) it asks
 * without echo; it refuses accounts that are not in config.toml or do not use a stored password.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REASONS } from "../src/errors.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let home: string;

const CONFIG = `
[[accounts]]
name = "work"
address = "a@example.com"
[accounts.imap]
host = "imap.example.com"

[[accounts]]
name = "cloud"
provider = "microsoft"
address = "c@example.com"
[accounts.imap]
host = "outlook.office365.com"
[accounts.oauth]
client_id = "x"

[[accounts]]
name = "vault"
address = "v@example.com"
password_command = ["pass", "show", "mail/vault"]
[accounts.imap]
host = "imap.example.com"
`;

function run(args: string[], input: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, CHAINMAIL_HOME: home },
    input,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  home = fs.mkdtempSync(path.join(os.tmpdir(), "cm-secret-"));
  fs.writeFileSync(path.join(home, "config.toml"), CONFIG);
});
afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

describe("chainmail secret set", () => {
  it("asks at a terminal without echoing what is typed", async () => {
    // `script` gives the CLI a real pseudo-terminal; what the terminal shows comes back on stdout.
    const child = spawn("script", ["-qec", `${process.execPath} ${CLI} secret set work`, "/dev/null"], {
      env: { ...process.env, CHAINMAIL_HOME: home },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let typed = false;
    child.stdout.on("data", (d: Buffer) => {
      screen += d.toString();
      if (!typed && screen.includes("Password for work:")) {
        typed = true;
        // "typo", a backspace, then the rest: the stored password is "s3cret-pw".
        child.stdin.write("s3cx\u007fret-pw\r");
      }
    });
    // "close": after the exit and the last output.
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(0);
    expect(screen).toContain("stored the password of work");
    expect(screen).not.toContain("s3c");
    const file = path.join(home, "secrets", "work.secret");
    expect(fs.readFileSync(file, "utf8")).toBe("s3cret-pw");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it("reads stdin when it is not a terminal", () => {
    expect(run(["secret", "set", "work"], "from-a-pipe\n").code).toBe(0);
    expect(fs.readFileSync(path.join(home, "secrets", "work.secret"), "utf8")).toBe("from-a-pipe");
  });

  it("refuses an account not in config.toml, an OAuth2 one and one with password_command", () => {
    const unknown = run(["secret", "set", "wrok"], "pw\n");
    expect(unknown.code).toBe(REASONS.NOT_FOUND.exitCode);
    expect(unknown.err).toContain('no account named "wrok"');
    expect(fs.existsSync(path.join(home, "secrets", "wrok.secret"))).toBe(false);
    const oauth = run(["secret", "set", "cloud"], "pw\n");
    expect(oauth.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect(oauth.err).toContain("chainmail auth login cloud");
    const command = run(["secret", "set", "vault"], "pw\n");
    expect(command.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect(command.err).toContain("password_command");
    expect(fs.existsSync(path.join(home, "secrets", "cloud.secret"))).toBe(false);
    expect(fs.existsSync(path.join(home, "secrets", "vault.secret"))).toBe(false);
  });
});
