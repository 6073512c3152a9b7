/**
 * A throwaway Dovecot for tests: a generated config in a temp dir, IMAP on 127.0.0.1 and a free high
 * port, plaintext auth with {PLAIN} passwords from a passwd-file, maildir homes inside the temp dir and
 * the special-use folders Drafts/Sent/Trash/Archive/Junk auto-created. Started with `dovecot -F` in its
 * own process group and stopped by killing that group, so no daemon outlives the test run.
 *
 * Works as root (mail is owned by the `dovecot` system user, since Dovecot refuses mail access as UID 0)
 * and as an ordinary user (everything runs as that user).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ImapFlow } from "imapflow";

export interface DovecotUser {
  name: string;
  password: string;
}

export interface AppendResult {
  uid: number;
  uidValidity: number;
}

export interface Dovecot {
  host: string;
  port: number;
  /** With `ssl`: the implicit-TLS (imaps) listener's port; 0 without. */
  tlsPort: number;
  users: DovecotUser[];
  /** The temp dir holding the config, the log and every user's Maildir. */
  dir: string;
  /** Appends one message by IMAP APPEND; the folder must exist (INBOX and the special-use ones do). */
  appendMessage(
    user: string,
    folder: string,
    rfc822: string | Buffer,
    flags?: string[],
  ): Promise<AppendResult>;
  /** Appends many messages over one connection, in order. */
  appendMessages(
    user: string,
    folder: string,
    messages: Array<{ raw: string | Buffer; flags?: string[] }>,
  ): Promise<AppendResult[]>;
  /** A logged-in imapflow client for direct checks; the caller logs out. */
  connect(user: string): Promise<ImapFlow>;
  /** How many messages a folder of `user` holds (STATUS MESSAGES); throws when it has no such folder. */
  messageCount(user: string, folder: string): Promise<number>;
  /** Runs doveadm against this instance (e.g. `["mailbox", "status", "-u", "alice", "all", "INBOX"]`). */
  doveadm(args: string[]): string;
  /**
   * How many IMAP connections `user` has logged in right now (`doveadm who`). A logout can take a
   * few milliseconds to leave the count, so a test waiting for it to fall should poll.
   */
  sessionCount(user: string): number;
  /**
   * Replaces the owner's rights on one of `user`'s folders, in dovecot-acl letters ("lr": lookup and
   * read only). Needs ACL_CONFIG in the config; applies from the next command on.
   */
  setAcl(user: string, folder: string, rights: string): void;
  /** The Dovecot log so far (useful when a test fails). */
  log(): string;
  stop(): Promise<void>;
}

/** dovecot.conf lines for the ACL plugin, reading each folder's rights from its dovecot-acl file. */
export const ACL_CONFIG = `
mail_plugins = $mail_plugins acl
protocol imap {
  mail_plugins = $mail_plugins imap_acl
}
plugin {
  acl = vfile:cache_secs=0
}
`;

/** Dovecot 2.3's own capability list after login. */
const DOVECOT_CAPABILITIES =
  "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT SORT=DISPLAY THREAD=REFERENCES THREAD=REFS THREAD=ORDEREDSUBJECT MULTIAPPEND URL-PARTIAL CATENATE UNSELECT CHILDREN NAMESPACE UIDPLUS LIST-EXTENDED I18NLEVEL=1 CONDSTORE QRESYNC ESEARCH ESORT SEARCHRES WITHIN CONTEXT=SEARCH LIST-STATUS BINARY MOVE SNIPPET=FUZZY PREVIEW=FUZZY PREVIEW STATUS=SIZE SAVEDATE LITERAL+ NOTIFY SPECIAL-USE";

/** dovecot.conf lines that advertise Dovecot's own capabilities less the names given (a server without UIDPLUS, MOVE, ...). */
export function capabilitiesWithout(...names: string[]): string {
  const kept = DOVECOT_CAPABILITIES.split(" ").filter((c) => !names.includes(c));
  return `protocol imap {\n  imap_capability = ${kept.join(" ")}\n}\n`;
}

export interface StartOptions {
  users: DovecotUser[];
  /** Extra lines appended to the generated dovecot.conf. */
  extraConfig?: string;
  /**
   * Also log in with OAuth2 bearer tokens (XOAUTH2, OAUTHBEARER), validated by Dovecot's oauth2
   * passdb against this RFC 7662 introspection URL (a test authorization server: ./oauth-server.ts),
   * whose answer names the user in `username`. Passwords keep working beside it.
   */
  oauth2?: { introspectionUrl: string };
  /**
   * TLS with this certificate and key (PEM files): `ssl = required`, so a client must STARTTLS on
   * `port` before it logs in, or use the implicit-TLS listener on `tlsPort`.
   */
  ssl?: { certFile: string; keyFile: string };
  /**
   * Dovecot's `mail_location` instead of each user's `~/Maildir` (e.g. `maildir:/data/Maildir:LAYOUT=fs:
   * INDEX=/data/index:CONTROL=/data/control`): the scale benchmark serves a Maildir it generated once
   * in place, its indexes elsewhere, rather than copying gigabytes into the temp dir.
   */
  mailLocation?: string;
}

const DOVECOT = fs.existsSync("/usr/sbin/dovecot") ? "/usr/sbin/dovecot" : "dovecot";
const DOVEADM = fs.existsSync("/usr/bin/doveadm") ? "/usr/bin/doveadm" : "doveadm";
const running = new Set<ChildProcess>();

process.once("exit", () => {
  for (const child of running) killGroup(child, "SIGKILL");
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Written into each Dovecot's dir: the test process that owns it and the Dovecot master's pid. A run
 * killed with SIGKILL never reaches its exit handler, so its Dovecots would keep their ports and temp
 * dirs for good; each start first reaps those whose owner is gone.
 */
const OWNER_FILE = "owner.json";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Stops the Dovecots of test processes that died without stopping them; returns how many. */
export function reapOrphanedDovecots(): number {
  let reaped = 0;
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (!name.startsWith("chainmail-dovecot-")) continue;
    const dir = path.join(os.tmpdir(), name);
    let owner: { owner: number; master: number };
    try {
      owner = JSON.parse(fs.readFileSync(path.join(dir, OWNER_FILE), "utf8")) as typeof owner;
    } catch {
      continue; // still starting, or not one of ours
    }
    if (alive(owner.owner)) continue;
    try {
      process.kill(-owner.master, "SIGKILL");
    } catch {
      // already gone
    }
    fs.rmSync(dir, { recursive: true, force: true });
    reaped++;
  }
  return reaped;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  const line = fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return undefined;
  const parts = line.split(":");
  return { uid: Number(parts[2]), gid: Number(parts[3]) };
}

interface Identity {
  mailUid: number;
  mailGid: number;
  internalUser: string;
  loginUser: string;
}

function identity(): Identity {
  const uid = process.getuid?.() ?? 0;
  if (uid !== 0) {
    const me = os.userInfo().username;
    return { mailUid: uid, mailGid: process.getgid?.() ?? uid, internalUser: me, loginUser: me };
  }
  // Dovecot refuses mail access as UID 0, so as root the mail belongs to an unprivileged system user.
  const mailUser = lookupUser("dovecot") ?? lookupUser("nobody");
  if (!mailUser) throw new Error("no unprivileged user (dovecot or nobody) to own test mail");
  const internal = lookupUser("dovecot") ? "dovecot" : "root";
  const login = lookupUser("dovenull") ? "dovenull" : internal;
  return { mailUid: mailUser.uid, mailGid: mailUser.gid, internalUser: internal, loginUser: login };
}

function oauth2Passdb(dir: string, oauth2: StartOptions["oauth2"]): string {
  if (!oauth2) return "";
  return `passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${dir}/dovecot-oauth2.conf.ext
}
`;
}

function configText(
  dir: string,
  port: number,
  id: Identity,
  extra: string,
  oauth2?: StartOptions["oauth2"],
  ssl?: { certFile: string; keyFile: string; tlsPort: number },
  mailLocation = "maildir:~/Maildir:LAYOUT=fs",
): string {
  return `# generated by chainmail's test harness
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
instance_name = chainmail-test-${path.basename(dir)}
listen = 127.0.0.1
protocols = imap
${ssl ? `ssl = required\nssl_cert = <${ssl.certFile}\nssl_key = <${ssl.keyFile}` : "ssl = no"}
disable_plaintext_auth = no
auth_mechanisms = plain login${oauth2 ? " xoauth2 oauthbearer" : ""}
auth_failure_delay = 0
default_internal_user = ${id.internalUser}
default_login_user = ${id.loginUser}
first_valid_uid = ${Math.min(id.mailUid, 500)}
first_valid_gid = 0
mail_uid = ${id.mailUid}
mail_gid = ${id.mailGid}
mail_location = ${mailLocation}
mail_privileged_group =
protocol imap {
  mail_max_userip_connections = 100
}
${oauth2Passdb(dir, oauth2)}passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%u ${dir}/passwd
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Drafts {
    special_use = \\Drafts
    auto = subscribe
  }
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
  mailbox Trash {
    special_use = \\Trash
    auto = subscribe
  }
  mailbox Archive {
    special_use = \\Archive
    auto = subscribe
  }
  mailbox Junk {
    special_use = \\Junk
    auto = subscribe
  }
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    ${ssl ? `address = 127.0.0.1\n    port = ${ssl.tlsPort}\n    ssl = yes` : "port = 0"}
  }
}
service auth {
  chroot =
}
service anvil {
  chroot =
}
service stats {
  chroot =
}
${extra}
`;
}

async function waitForGreeting(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`dovecot exited with code ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, "127.0.0.1");
      let buf = "";
      const done = (v: boolean) => {
        sock.destroy();
        resolve(v);
      };
      sock.setTimeout(1000, () => done(false));
      sock.on("error", () => done(false));
      sock.on("data", (d) => {
        buf += d.toString();
        if (buf.includes("\r\n")) done(buf.startsWith("* OK"));
      });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("dovecot did not greet in time");
}

function waitExit(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

export async function startDovecot(options: StartOptions): Promise<Dovecot> {
  if (options.users.length === 0) throw new Error("startDovecot needs at least one user");
  for (const u of options.users) {
    if (!/^[A-Za-z0-9._-]+$/.test(u.name) || /[:\n]/.test(u.password)) {
      throw new Error(`unsupported test user ${JSON.stringify(u.name)}`);
    }
  }
  reapOrphanedDovecots();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chainmail-dovecot-"));
  fs.chmodSync(dir, 0o755);
  const id = identity();
  for (const sub of ["run", "state", "home"]) fs.mkdirSync(path.join(dir, sub), { mode: 0o755 });
  const passwd: string[] = [];
  for (const u of options.users) {
    const home = path.join(dir, "home", u.name);
    fs.mkdirSync(home, { mode: 0o700 });
    fs.chownSync(home, id.mailUid, id.mailGid);
    passwd.push(`${u.name}:{PLAIN}${u.password}:${id.mailUid}:${id.mailGid}::${home}::`);
  }
  fs.writeFileSync(path.join(dir, "passwd"), `${passwd.join("\n")}\n`, { mode: 0o644 });
  if (options.oauth2)
    fs.writeFileSync(
      path.join(dir, "dovecot-oauth2.conf.ext"),
      `introspection_url = ${options.oauth2.introspectionUrl}\nintrospection_mode = post\nusername_attribute = username\n`,
      { mode: 0o644 },
    );
  const conf = path.join(dir, "dovecot.conf");

  let child: ChildProcess | undefined;
  let port = 0;
  let tlsPort = 0;
  let lastError: unknown;
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort();
    tlsPort = options.ssl ? await freePort() : 0;
    const ssl = options.ssl && { ...options.ssl, tlsPort };
    fs.writeFileSync(
      conf,
      configText(dir, port, id, options.extraConfig ?? "", options.oauth2, ssl, options.mailLocation),
    );
    const c = spawn(DOVECOT, ["-F", "-c", conf], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    c.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    c.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    running.add(c);
    c.once("exit", () => running.delete(c));
    if (c.pid !== undefined)
      fs.writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify({ owner: process.pid, master: c.pid }));
    try {
      await waitForGreeting(port, c, 10_000);
      child = c;
    } catch (err) {
      killGroup(c, "SIGKILL");
      await waitExit(c, 2000);
      const logFile = path.join(dir, "dovecot.log");
      const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "";
      lastError = new Error(`${(err as Error).message}\n${output}\n${log}`);
    }
  }
  if (!child) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw lastError instanceof Error ? lastError : new Error("dovecot failed to start");
  }
  const proc = child;
  const host = "127.0.0.1";
  const users = options.users.map((u) => ({ ...u }));

  const connect = async (user: string): Promise<ImapFlow> => {
    const u = users.find((x) => x.name === user);
    if (!u) throw new Error(`unknown test user ${user}`);
    const client = new ImapFlow({
      host,
      port,
      secure: false,
      // The harness's own connections trust the test certificate: they set up, they test nothing.
      ...(options.ssl ? { doSTARTTLS: true, tls: { rejectUnauthorized: false } } : { doSTARTTLS: false }),
      auth: { user: u.name, pass: u.password },
      logger: false,
    });
    await client.connect();
    return client;
  };

  const appendMessages: Dovecot["appendMessages"] = async (user, folder, messages) => {
    const client = await connect(user);
    try {
      const out: AppendResult[] = [];
      for (const m of messages) {
        const res = await client.append(folder, m.raw, m.flags ?? []);
        if (!res || res.uid === undefined || res.uidValidity === undefined) {
          throw new Error(`APPEND to ${folder} returned no UID`);
        }
        out.push({ uid: res.uid, uidValidity: Number(res.uidValidity) });
      }
      return out;
    } finally {
      await client.logout().catch(() => undefined);
    }
  };

  const messageCount: Dovecot["messageCount"] = async (user, folder) => {
    const client = await connect(user);
    try {
      const s = await client.status(folder, { messages: true });
      if (!s || s.messages === undefined) throw new Error(`${user} has no folder ${folder}`);
      return s.messages;
    } finally {
      await client.logout().catch(() => undefined);
    }
  };

  const doveadm: Dovecot["doveadm"] = (args) =>
    execFileSync(DOVEADM, ["-c", conf, ...args], { encoding: "utf8" });

  // `who -1` prints a header line, then one line per connection starting with its user name.
  const sessionCount: Dovecot["sessionCount"] = (user) =>
    doveadm(["who", "-1", user])
      .split("\n")
      .filter((line) => line.split(/\s+/)[0] === user).length;

  const setAcl: Dovecot["setAcl"] = (user, folder, rights) => {
    if (!users.some((u) => u.name === user)) throw new Error(`unknown test user ${user}`);
    // maildir LAYOUT=fs: INBOX is the Maildir itself, every other folder a directory below it.
    const maildir = path.join(dir, "home", user, "Maildir");
    const folderDir = folder.toUpperCase() === "INBOX" ? maildir : path.join(maildir, ...folder.split("/"));
    if (!fs.existsSync(folderDir)) throw new Error(`${user} has no folder ${folder}`);
    fs.writeFileSync(path.join(folderDir, "dovecot-acl"), `owner ${rights}\n`);
  };

  return {
    host,
    port,
    tlsPort,
    users,
    dir,
    connect,
    messageCount,
    sessionCount,
    setAcl,
    appendMessages,
    appendMessage: async (user, folder, raw, flags) => {
      const [res] = await appendMessages(user, folder, [{ raw, flags: flags ?? [] }]);
      return res!;
    },
    doveadm,
    log: () => {
      const f = path.join(dir, "dovecot.log");
      return fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "";
    },
    stop: async () => {
      killGroup(proc, "SIGTERM");
      await waitExit(proc, 3000);
      if (proc.exitCode === null && proc.signalCode === null) {
        killGroup(proc, "SIGKILL");
        await waitExit(proc, 2000);
      }
      // Children of the master may linger a moment after it exits; kill whatever is left in the group.
      killGroup(proc, "SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
