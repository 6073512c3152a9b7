import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { REASONS } from "../src/errors.js";
import type { ProbeResult } from "../src/providers/probe.js";
import {
  clientConfig,
  type DnsServer,
  type HttpServer,
  startDns,
  startHttp,
} from "./support/probe-servers.js";

// `chainmail accounts probe` end to end: the built bin, spawned, pointed at a local DNS server (--dns)
// and a local HTTP server (CHAINMAIL_PROBE_HTTP_BASE); no daemon runs, and nothing reaches the internet.
const pkg = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(pkg, "dist", "bin", "chainmail.js");
let dns: DnsServer;
let refusing: DnsServer;
let web: HttpServer;
let home: string;

/** What the bin prints with --json: a probe's result, or an error. */
type Printed = ProbeResult & {
  found: boolean;
  error: { reason: string; message: string };
  account: string;
  config_file: string;
  created: boolean;
  next: string[];
};

/** Runs the bin without blocking the event loop (the DNS and HTTP servers answer from this process). */
function run(
  args: string[],
): Promise<{ code: number | null; out: string; err: string; json: () => Printed }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, CHAINMAIL_HOME: home, CHAINMAIL_PROBE_HTTP_BASE: web.base },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => resolve({ code, out, err, json: () => JSON.parse(out) }));
  });
}

beforeAll(async () => {
  if (!fs.existsSync(CLI)) execFileSync("npx", ["tsup"], { cwd: pkg, stdio: "ignore" });
  home = fs.mkdtempSync(path.join(os.tmpdir(), "cm-probe-"));
  dns = await startDns({
    "_imaps._tcp.srv.test": { SRV: [{ priority: 0, weight: 1, port: 993, target: "imap.srv.test" }] },
    "_submissions._tcp.srv.test": { SRV: [{ priority: 0, weight: 1, port: 465, target: "smtp.srv.test" }] },
    "corp.test": { MX: [{ preference: 0, exchange: "corp-test.mail.protection.outlook.com" }] },
  });
  refusing = await startDns({}, "refuse");
  web = await startHttp({
    "/autoconfig.auto.test/mail/config-v1.1.xml": clientConfig(
      [{ host: "imap.auto.test", port: 993, socket: "SSL" }],
      [{ host: "smtp.auto.test", port: 587, socket: "STARTTLS" }],
    ),
  });
});

afterAll(async () => {
  await dns?.close();
  await refusing?.close();
  await web?.close();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe("chainmail accounts probe", () => {
  it("answers a preset domain with --json, without a daemon and without a look-up", async () => {
    const before = dns.asked.length + web.asked.length;
    const r = await run(["accounts", "probe", "me@gmail.com", "--json", "--dns", dns.address]);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      address: "me@gmail.com",
      domain: "gmail.com",
      provider: "google",
      imap: { host: "imap.gmail.com", port: 993, tls: "tls", source: "preset" },
      smtp: { host: "smtp.gmail.com", port: 465, tls: "tls", source: "preset" },
      username: "me@gmail.com",
      note: expect.stringContaining("app password"),
      steps: [
        {
          source: "preset",
          query: "gmail.com",
          status: "found",
          provider: "google",
          imap: expect.any(Object),
          smtp: expect.any(Object),
        },
      ],
      found: true,
    });
    expect(dns.asked.length + web.asked.length).toBe(before);
  });

  it("prints what it found and from where", async () => {
    const srv = await run(["accounts", "probe", "me@srv.test", "--dns", dns.address]);
    expect(srv.code).toBe(0);
    expect(srv.out).toContain("me@srv.test: provider imap");
    expect(srv.out).toMatch(/imap\timap\.srv\.test:993 tls\t\(from DNS SRV\)/);
    expect(srv.out).toMatch(/smtp\tsmtp\.srv\.test:465 tls\t\(from DNS SRV\)/);
    const auto = await run(["--json", "accounts", "probe", "jo@auto.test", "--dns", dns.address]);
    expect(auto.code).toBe(0);
    expect(auto.json().imap).toEqual({ host: "imap.auto.test", port: 993, tls: "tls", source: "autoconfig" });
    expect(web.asked).toContain("/autoconfig.auto.test/mail/config-v1.1.xml");
    const corp = await run(["accounts", "probe", "ceo@corp.test", "--json", "--dns", dns.address]);
    expect(corp.json()).toMatchObject({
      provider: "microsoft",
      imap: { host: "outlook.office365.com", source: "mx" },
    });
  });

  it("exits NOT_FOUND when nothing is found, saying which look-ups failed", async () => {
    const r = await run(["accounts", "probe", "me@nowhere.test", "--json", "--dns", refusing.address]);
    expect(r.code).toBe(REASONS.NOT_FOUND.exitCode);
    const j = r.json();
    expect(j.found).toBe(false);
    expect(j.imap).toBeNull();
    expect(j.steps.find((s) => s.source === "mx")).toMatchObject({
      status: "failed",
      detail: "EREFUSED",
    });
    const text = await run(["accounts", "probe", "me@nowhere.test", "--dns", refusing.address]);
    expect(text.code).toBe(REASONS.NOT_FOUND.exitCode);
    expect(text.out).toContain("MX records\tnowhere.test\tfailed (EREFUSED)");
    expect(text.out).toContain("no IMAP server found for nowhere.test");
    const offline = await run([
      "accounts",
      "probe",
      "me@nowhere.test",
      "--offline",
      "--dns",
      refusing.address,
    ]);
    expect(offline.code).toBe(REASONS.NOT_FOUND.exitCode);
    expect(offline.out).toContain("skipped (network look-ups off)");
  });

  it("gives up on a DNS server that never answers within its few seconds, and exits", async () => {
    const silent = await startDns({}, "silent");
    try {
      const t0 = Date.now();
      const r = await run(["accounts", "probe", "me@unknown.test", "--json", "--dns", silent.address]);
      // The probe's deadline is 4 s for every look-up together; the rest is the process's start.
      expect(Date.now() - t0).toBeLessThan(8000);
      expect(r.code).toBe(REASONS.NOT_FOUND.exitCode);
      expect(r.json().steps.find((s) => s.source === "mx")).toMatchObject({
        status: "failed",
        detail: "ETIMEOUT",
      });
      expect(silent.asked).toContain("MX unknown.test");
    } finally {
      await silent.close();
    }
  });

  it("refuses an unknown subcommand, a missing or bad address and probe flags on the list", async () => {
    for (const args of [
      ["accounts", "frob"],
      ["accounts", "probe"],
      ["accounts", "probe", "a@b.test", "c@d.test"],
      ["accounts", "probe", "not-an-address"],
      ["accounts", "list", "extra"],
      ["accounts", "--offline"],
      ["accounts", "probe", "a@b.test", "--colour"],
      ["accounts", "probe", "a@b.test", "--dns", "not-an-ip"],
    ]) {
      const r = await run([...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(REASONS.INVALID_ARGUMENT.exitCode);
      expect(r.json().error.reason).toBe("INVALID_ARGUMENT");
    }
    const text = await run(["accounts", "frob"]);
    expect(text.err).toContain("usage: chainmail accounts [list] | accounts probe ADDRESS");
  });

  it("still sends the list to the daemon", async () => {
    const r = await run(["accounts", "--json"]);
    expect(r.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
    const list = await run(["accounts", "list", "--json"]);
    expect(list.code).toBe(REASONS.DAEMON_UNAVAILABLE.exitCode);
  });
});

describe("chainmail accounts add", () => {
  const config = () => path.join(home, "config.toml");

  it("writes an entry with flags only (no terminal), creating config.toml, and the config loads", async () => {
    fs.rmSync(config(), { force: true });
    const r = await run(["accounts", "add", "me@gmail.com", "--json", "--dns", dns.address]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      account: "gmail",
      config_file: config(),
      created: true,
      provider: "google",
      imap: { host: "imap.gmail.com", port: 993, tls: "tls" },
      next: [
        "chainmail secret set gmail",
        "chainmail daemon &",
        "chainmail policy confirm",
        "chainmail test gmail",
      ],
      password_stored: false,
    });
    const srv = await run([
      "accounts",
      "add",
      "jo@srv.test",
      "--name",
      "work",
      "--username",
      "jo",
      "--dns",
      dns.address,
    ]);
    expect(srv.code).toBe(0);
    expect(srv.out).toContain(`added to ${config()}`);
    expect(srv.out).toContain("[accounts.imap]  # from DNS SRV");
    expect(srv.out).toMatch(/chainmail secret set work +# the password/);
    const c = loadConfig(config());
    expect(c.accounts.map((a) => [a.name, a.provider, a.username, a.imap, a.smtp])).toEqual([
      [
        "gmail",
        "google",
        "me@gmail.com",
        { host: "imap.gmail.com", port: 993, tls: "tls" },
        { host: "smtp.gmail.com", port: 465, tls: "tls" },
      ],
      [
        "work",
        "imap",
        "jo",
        { host: "imap.srv.test", port: 993, tls: "tls" },
        { host: "smtp.srv.test", port: 465, tls: "tls" },
      ],
    ]);
  });

  it("names the flags for what it could not find, and writes nothing", async () => {
    const before = fs.readFileSync(config(), "utf8");
    const taken = await run(["accounts", "add", "you@gmail.com", "--json", "--offline"]);
    expect(taken.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect(taken.json().error.message).toContain("--name NAME");
    const unknown = await run(["accounts", "add", "me@nowhere.test", "--json", "--dns", refusing.address]);
    expect(unknown.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
    expect(unknown.json().error.message).toContain("--imap-host HOST");
    expect(unknown.json().error.message).toContain("--no-smtp");
    expect(unknown.json().error.message).toContain("chainmail accounts probe me@nowhere.test");
    const dup = await run([
      "accounts",
      "add",
      "x@y.test",
      "--offline",
      "--name",
      "work",
      "--imap-host",
      "h.y.test",
      "--no-smtp",
      "--json",
    ]);
    expect(dup.code).toBe(REASONS.CONFLICT.exitCode);
    expect(fs.readFileSync(config(), "utf8")).toBe(before);
    const nosmtp = await run([
      "accounts",
      "add",
      "me@nowhere.test",
      "--offline",
      "--imap-host",
      "imap.nowhere.test",
      "--imap-tls",
      "starttls",
      "--no-smtp",
    ]);
    expect(nosmtp.code).toBe(0);
    const added = loadConfig(config()).accounts.find((a) => a.name === "nowhere")!;
    expect(added.imap).toEqual({ host: "imap.nowhere.test", port: 143, tls: "starttls" });
    expect(added.smtp).toBeUndefined();
  });

  it("refuses to add to a config.toml that does not load", async () => {
    fs.writeFileSync(config(), "[[accounts]]\nname = 1\n");
    const r = await run(["accounts", "add", "me@gmail.com", "--json"]);
    expect(r.code).toBe(REASONS.CONFIG_INVALID.exitCode);
    expect(fs.readFileSync(config(), "utf8")).toBe("[[accounts]]\nname = 1\n");
    const probeOnly = await run(["accounts", "probe", "me@gmail.com", "--name", "x", "--json"]);
    expect(probeOnly.code).toBe(REASONS.INVALID_ARGUMENT.exitCode);
  });
});
