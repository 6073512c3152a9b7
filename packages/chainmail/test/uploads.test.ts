/**
 * The daemon's upload spool over the real socket: a 0700 spool under the state dir, chunks in order
 * only, the declared size and the 25 MiB cap enforced, unknown and used uploads refused, expiry of
 * unused ones, an `upload` audit row per upload, and an upload named in a send arriving byte-equal
 * and deleted after use. The client-side checks (symlink, directory, chainmail home, oversize)
 * refuse before anything is uploaded.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uploadFile } from "../src/client/upload.js";
import { MAX_ATTACHMENT_TOTAL } from "../src/limits.js";
import { type SendEnv, startSendEnv } from "../src/testing/index.js";
import { UploadSpool } from "../src/uploads/spool.js";

let env: SendEnv;
let dir: string;
const spoolDir = () => path.join(env.home.stateDir, "uploads");

beforeAll(async () => {
  env = await startSendEnv();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-upl-"));
}, 60_000);

afterAll(async () => {
  await env?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const begin = (size: number) => env.client.call("upload.begin", { path: path.join(dir, "f.bin"), size });
const chunk = (upload_id: string, index: number, data: Buffer) =>
  env.client.call("upload.chunk", { upload_id, index, data: data.toString("base64") });

describe("the upload spool", () => {
  it("is a 0700 directory under the state dir", () => {
    expect(fs.statSync(spoolDir()).mode & 0o777).toBe(0o700);
  });

  it("takes chunks in order, audits the upload, and a send that names it carries it byte-equal, then deletes it", async () => {
    const bytes = randomBytes(3000);
    const { upload_id } = await begin(bytes.length);
    expect(fs.statSync(path.join(spoolDir(), upload_id)).mode & 0o777).toBe(0o600);
    await chunk(upload_id, 0, bytes.subarray(0, 1000));
    await chunk(upload_id, 1, bytes.subarray(1000));
    const done = await env.client.call("upload.finish", { upload_id });
    expect(done.size).toBe(3000);
    expect((await env.client.readAudit({ action: "upload" })).rows[0]).toMatchObject({
      decision: "allowed",
      summary: `${upload_id}: 3000 bytes`,
    });
    const res = await env.client.call("send", {
      account: "work",
      to: ["bob@example.com"],
      subject: "upload",
      attachments: [`upload:${upload_id}`],
    });
    expect(res.status).toBe("sent");
    const m = await simpleParser(env.relay.received.at(-1)!.raw);
    expect(m.attachments[0]?.filename).toBe("f.bin");
    expect(Buffer.compare(m.attachments[0]!.content, bytes)).toBe(0);
    expect(fs.readdirSync(spoolDir())).toEqual([]);
    // Used once: naming it again is refused.
    await expect(
      env.client.call("send", {
        account: "work",
        to: ["bob@example.com"],
        subject: "again",
        attachments: [`upload:${upload_id}`],
      }),
    ).rejects.toMatchObject({ reason: "NOT_FOUND" });
  });

  it("abandons an upload whose chunk comes out of order", async () => {
    const { upload_id } = await begin(10);
    await expect(chunk(upload_id, 1, Buffer.alloc(5))).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("out of order (expected 0)"),
    });
    await expect(env.client.call("upload.finish", { upload_id })).rejects.toMatchObject({
      reason: "NOT_FOUND",
    });
    expect(fs.readdirSync(spoolDir())).toEqual([]);
  });

  it("refuses an unknown upload id, in a chunk and in a send", async () => {
    await expect(chunk("u0000", 0, Buffer.alloc(1))).rejects.toMatchObject({ reason: "NOT_FOUND" });
    await expect(
      env.client.call("send", {
        account: "work",
        to: ["bob@example.com"],
        subject: "x",
        attachments: ["upload:u0000"],
      }),
    ).rejects.toMatchObject({ reason: "NOT_FOUND" });
  });

  it("refuses more than 25 MiB, more bytes than declared, and an unfinished upload", async () => {
    await expect(begin(MAX_ATTACHMENT_TOTAL + 1)).rejects.toMatchObject({ reason: "INVALID_ARGUMENT" });
    const { upload_id } = await begin(4);
    await expect(chunk(upload_id, 0, Buffer.alloc(5))).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("more bytes than the 4 it declared"),
    });
    const short = await begin(4);
    await chunk(short.upload_id, 0, Buffer.alloc(2));
    await expect(
      env.client.call("send", {
        account: "work",
        to: ["bob@example.com"],
        subject: "x",
        attachments: [`upload:${short.upload_id}`],
      }),
    ).rejects.toMatchObject({ reason: "INVALID_ARGUMENT", message: expect.stringContaining("not finished") });
    await expect(env.client.call("upload.finish", { upload_id: short.upload_id })).rejects.toMatchObject({
      reason: "INVALID_ARGUMENT",
      message: expect.stringContaining("has 2 of the 4 bytes"),
    });
    expect(fs.readdirSync(spoolDir())).toEqual([]);
  });

  it("deletes an upload nobody used once it expires, and spool files of an earlier run at start", () => {
    let now = 1_000_000;
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "cm-spool-"));
    fs.writeFileSync(path.join(d, "uleftover"), "x");
    const spool = new UploadSpool(d, { ttlMs: 1000, now: () => now });
    try {
      expect(fs.readdirSync(d)).toEqual([]);
      const { upload_id } = spool.begin("/tmp/a", 1);
      spool.chunk(upload_id, 0, Buffer.from("a").toString("base64"));
      spool.finish(upload_id);
      now += 999;
      expect(spool.source(upload_id)).toBe("/tmp/a");
      now += 1002;
      expect(() => spool.take(upload_id)).toThrow(/unknown, already used or expired/);
      expect(fs.readdirSync(d)).toEqual([]);
    } finally {
      spool.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
  it("an expired upload whose file cannot be deleted is forgotten, and fails nobody else's upload", () => {
    let now = 1_000_000;
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "cm-spool-"));
    const spool = new UploadSpool(d, { ttlMs: 1000, now: () => now });
    try {
      const { upload_id } = spool.begin("/tmp/a", 1);
      // Its file replaced by a directory with something in it: deleting it fails
      const file = path.join(d, upload_id);
      fs.rmSync(file);
      fs.mkdirSync(file);
      fs.writeFileSync(path.join(file, "x"), "x");
      now += 2000;
      const next = spool.begin("/tmp/b", 1);
      expect(spool.pending()).toBe(1);
      expect(() => spool.chunk(upload_id, 0, "YQ==")).toThrow(/unknown, already used or expired/);
      spool.chunk(next.upload_id, 0, Buffer.from("b").toString("base64"));
      expect(spool.finish(next.upload_id).size).toBe(1);
    } finally {
      spool.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("the client's checks before an upload", () => {
  it("refuses a symlink, a directory, a file in the chainmail home (also by a hard link) and an oversize file", async () => {
    const before = (await env.client.readAudit({ action: "upload" })).rows.length;
    fs.writeFileSync(path.join(dir, "real.txt"), "x");
    fs.symlinkSync(path.join(dir, "real.txt"), path.join(dir, "link.txt"));
    const big = path.join(dir, "big.bin");
    fs.writeFileSync(big, "");
    fs.truncateSync(big, MAX_ATTACHMENT_TOTAL + 1);
    const up = (f: string) => uploadFile(env.client, f, "attachments[0]", env.home);
    await expect(up(path.join(dir, "link.txt"))).rejects.toThrow(/symbolic link/);
    await expect(up(dir)).rejects.toThrow(/not a regular file/);
    await expect(up(env.home.configFile)).rejects.toThrow(/inside the chainmail home/);
    await expect(up(path.join(env.home.secretsDir, "work.secret"))).rejects.toThrow(
      /inside the chainmail home/,
    );
    const hard = path.join(dir, "hard.txt");
    fs.linkSync(path.join(env.home.secretsDir, "work.secret"), hard);
    await expect(up(hard)).rejects.toThrow(/inside the chainmail home/);
    await expect(up(big)).rejects.toThrow(/larger than/);
    expect((await env.client.readAudit({ action: "upload" })).rows.length).toBe(before);
  });
});
