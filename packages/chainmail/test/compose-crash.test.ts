/**
 * Sends under crashes: the built daemon runs as its own process and kills itself with SIGKILL at
 * each step of a send (CHAINMAIL_TEST_CRASH_AT), then a new daemon gets the same call again. The
 * SMTP server (relaying into Dovecot over LMTP) must never receive a message twice. The CLI's
 * outbox commands settle the sends whose outcome the daemon could not know.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaemonClient } from "../src/client/index.js";
import { REASONS } from "../src/errors.js";
import { setSecret } from "../src/secrets.js";
import { waitForDaemon } from "../src/testing/daemon-ready.js";
import { type Dovecot, startDovecot } from "../src/testing/dovecot.js";
import { configToml } from "../src/testing/mailenv.js";
import { freePort, lmtpConfig, type SmtpRelay, startSmtpRelay } from "../src/testing/smtp.js";

const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let dv: Dovecot;
let relay: SmtpRelay;
let home: string;
let daemon: ChildProcess | undefined;

const sock = () => path.join(home, "run", "chainmail.sock");

async function startDaemon(crashAt?: string): Promise<void> {
  if (fs.existsSync(sock())) fs.rmSync(sock());
  const env: NodeJS.ProcessEnv = { ...process.env, CHAINMAIL_HOME: home };
  if (crashAt) env["CHAINMAIL_TEST_CRASH_AT"] = crashAt;
  else delete env["CHAINMAIL_TEST_CRASH_AT"];
  const d = spawn(process.execPath, [CLI, "daemon"], { env, stdio: ["ignore", "ignore", "ignore"] });
  daemon = d;
  await waitForDaemon(sock(), { child: d });
}

async function stopDaemon(): Promise<void> {
  const d = daemon;
  if (!d || d.exitCode !== null || d.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    d.once("exit", () => resolve());
    d.kill("SIGTERM");
  });
}

async function call<T>(fn: (c: DaemonClient) => Promise<T>): Promise<T> {
  const c = new DaemonClient({ socketPath: sock(), client: "mcp" });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

function cli(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, "--json", ...args], {
    env: { ...process.env, CHAINMAIL_HOME: home },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout, json: () => JSON.parse(r.stdout) };
}

/** The CLI without blocking this process, which runs the SMTP server the daemon sends to. */
function cliAsync(args: string[]): Promise<{ code: number | null; out: string; json: () => unknown }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--json", ...args], {
      env: { ...process.env, CHAINMAIL_HOME: home },
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
    });
    child.on("exit", (code) => resolve({ code, out, json: () => JSON.parse(out) as unknown }));
  });
}

const delivered = (subject: string) =>
  relay.received.filter((m) => m.raw.toString("latin1").includes(`Subject: ${subject}\r\n`)).length;

const params = (subject: string) => ({
  account: "work",
  to: ["bob@example.com"],
  subject,
  body: "once only",
});

beforeAll(async () => {
  const lmtpPort = await freePort();
  relay = await startSmtpRelay({ lmtpPort, users: [{ name: "alice", password: "alice-secret-pw" }] });
  dv = await startDovecot({
    users: [
      { name: "alice", password: "alice-secret-pw" },
      { name: "bob", password: "bob-secret-pw" },
    ],
    extraConfig: lmtpConfig(lmtpPort),
  });
  home = fs.mkdtempSync(path.join(os.tmpdir(), "cm-crash-"));
  fs.writeFileSync(path.join(home, "config.toml"), configToml(dv, { smtpPort: relay.port }));
  setSecret(path.join(home, "secrets"), "work", "alice-secret-pw");
  // A first start leaves config.toml's policy unconfirmed: the owner confirms it once.
  await startDaemon();
  const owner = new DaemonClient({ socketPath: sock(), client: "cli" });
  await owner.call("policy.confirm", {}).finally(() => owner.close());
  await stopDaemon();
}, 60_000);

afterAll(async () => {
  if (daemon && daemon.exitCode === null) daemon.kill("SIGKILL");
  await dv?.stop();
  await relay?.stop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

/** Sends once with the daemon set to die at `step`; the call fails as the daemon goes away. */
async function crashAt(step: string, subject: string): Promise<void> {
  await startDaemon(step);
  await expect(call((c) => c.call("send", params(subject)))).rejects.toMatchObject({
    reason: expect.stringMatching(/DAEMON_UNAVAILABLE|INTERNAL/),
  });
  await new Promise<void>((resolve) => {
    if (daemon?.exitCode !== null || daemon?.signalCode !== null) resolve();
    else daemon.once("exit", () => resolve());
  });
  expect(daemon?.signalCode).toBe("SIGKILL");
  await startDaemon();
}

describe("a send killed at each step", () => {
  it("before SMTP (intent committed): nothing sent; the retry is SEND_UNCONFIRMED until the owner releases it", async () => {
    await crashAt("intent", "crash intent");
    expect(delivered("crash intent")).toBe(0);
    const err = await call((c) => c.call("send", params("crash intent"))).catch((e: unknown) => e);
    expect(err).toMatchObject({
      reason: "SEND_UNCONFIRMED",
      hint: expect.stringContaining("chainmail outbox"),
    });
    const list = cli(["outbox", "list"]);
    const row = list.json().rows.find((r: { status: string }) => r.status === "pending");
    expect(row.key).toMatch(/^d1\./);
    expect(cli(["outbox", "release", row.key]).code).toBe(0);
    expect((await call((c) => c.call("send", params("crash intent")))).status).toBe("sent");
    expect(delivered("crash intent")).toBe(1);
    await stopDaemon();
  });

  it("after the server accepted, before it was recorded: the retry never sends again; the owner confirms it", async () => {
    await crashAt("accepted", "crash accepted");
    expect(delivered("crash accepted")).toBe(1);
    const err = await call((c) => c.call("send", params("crash accepted"))).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: "SEND_UNCONFIRMED" });
    expect(REASONS.SEND_UNCONFIRMED.exitCode).toBe(13);
    const key = cli(["outbox", "list"])
      .json()
      .rows.find((r: { status: string }) => r.status === "pending").key;
    // The outbox commands are the owner's: an MCP client cannot settle a send.
    await expect(call((c) => c.call("outbox.confirm", { key }))).rejects.toMatchObject({
      reason: "POLICY_DENIED",
    });
    expect(cli(["outbox", "confirm", key]).code).toBe(0);
    expect(await call((c) => c.call("send", params("crash accepted")))).toMatchObject({
      status: "duplicate",
    });
    expect(delivered("crash accepted")).toBe(1);
    await stopDaemon();
  });

  it("after the server accepted, with the message in Sent: the next daemon finds its Message-ID and records it sent", async () => {
    await crashAt("accepted", "crash found");
    expect(delivered("crash found")).toBe(1);
    await stopDaemon();
    // A server that files Sent copies itself (as Gmail does) has the message in Sent already.
    const raw = relay.received.find((m) =>
      m.raw.toString("latin1").includes("Subject: crash found\r\n"),
    )!.raw;
    await dv.appendMessage("alice", "Sent", raw);
    await startDaemon();
    let res = await call((c) => c.call("send", params("crash found"))).catch((e: unknown) => e);
    for (let i = 0; i < 40 && (res as { reason?: string }).reason === "SEND_UNCONFIRMED"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await call((c) => c.call("send", params("crash found"))).catch((e: unknown) => e);
    }
    expect(res).toMatchObject({ status: "duplicate", original_status: "sent" });
    expect(delivered("crash found")).toBe(1);
    await stopDaemon();
  });

  it.each(["recorded", "sent-copy"])(
    "after the outcome was recorded (%s): the retry is a duplicate",
    async (step) => {
      const subject = `crash ${step}`;
      await crashAt(step, subject);
      expect(await call((c) => c.call("send", params(subject)))).toMatchObject({ status: "duplicate" });
      expect(delivered(subject)).toBe(1);
      await stopDaemon();
    },
  );

  it("the CLI sends with --text and --html-file, and a repeat answers duplicate", async () => {
    await startDaemon();
    const html = path.join(home, "body.html");
    fs.writeFileSync(html, "<p>From a <b>file</b></p>");
    const args = [
      "send",
      "work",
      "--to",
      "bob@example.com",
      "--subject",
      "via cli",
      "--text",
      "--body",
      "plain *cli*",
    ];
    const r = await cliAsync(args);
    expect(r.code, r.out).toBe(0);
    expect(r.json()).toMatchObject({ status: "sent", idempotency_key: expect.stringMatching(/^d1\./) });
    expect((await cliAsync(args)).json()).toMatchObject({ status: "duplicate" });
    expect(delivered("via cli")).toBe(1);
    const h = await cliAsync([
      "send",
      "work",
      "--to",
      "bob@example.com",
      "--subject",
      "via cli html",
      "--html-file",
      html,
    ]);
    expect(h.code, h.out).toBe(0);
    const raw = relay.received.find((m) => m.raw.toString("latin1").includes("Subject: via cli html\r\n"))!;
    expect(raw.raw.toString("latin1")).toContain("text/html");
    expect((await cliAsync(["send", "work", "--subject", "x", "--text", "--html-file", html])).code).toBe(
      REASONS.INVALID_ARGUMENT.exitCode,
    );
    await stopDaemon();
  });
});
