/**
 * The daemon's upload spool: files the MCP server read (with its own O_NOFOLLOW and regular-file
 * checks) and hands over in chunks, because one protocol line is bounded and the daemon need not
 * share a file system with its client. The spool is a 0700 directory under the state dir; each
 * upload is one 0600 file, capped at the message's 25 MiB, written in order, deleted once a compose
 * call used it or once it sat unused for UPLOAD_TTL_MS, and every spool file is removed at start.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { MailError } from "../errors.js";
import { ensurePrivateDir } from "../home.js";
import {
  MAX_ATTACHMENT_TOTAL,
  MAX_UPLOAD_SPOOL_BYTES,
  UPLOAD_CHUNK_BYTES,
  UPLOAD_TTL_MS,
} from "../limits.js";

export const UPLOAD_PREFIX = "upload:";

interface Entry {
  file: string;
  /** The path the client read it from: the attachment's name, and part of a derived key. */
  source: string;
  size: number;
  received: number;
  next: number;
  fd: number | undefined;
  hash: ReturnType<typeof createHash>;
  sha256: string | undefined;
  touched: number;
}

export interface Upload {
  source: string;
  content: Buffer;
  sha256: string;
}

const unknown = (id: string) =>
  new MailError(
    "NOT_FOUND",
    `no upload ${JSON.stringify(id.slice(0, 64))} (unknown, already used or expired)`,
    "Upload the file again.",
  );

export class UploadSpool {
  private readonly entries = new Map<string, Entry>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly dir: string,
    private readonly opts: { ttlMs?: number; now?: () => number } = {},
  ) {
    ensurePrivateDir(dir);
    // Uploads of an earlier run have no entry and no call that could use them.
    for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f), { force: true, recursive: true });
    this.timer = setInterval(() => this.sweep(), Math.min(60_000, this.ttl()));
    this.timer.unref();
  }

  private ttl = () => this.opts.ttlMs ?? UPLOAD_TTL_MS;
  private now = () => (this.opts.now ?? Date.now)();

  begin(source: string, size: number): { upload_id: string; chunk_bytes: number } {
    this.sweep();
    if (!path.isAbsolute(source)) throw new MailError("INVALID_ARGUMENT", "path must be an absolute path");
    if (size > MAX_ATTACHMENT_TOTAL)
      throw new MailError(
        "INVALID_ARGUMENT",
        `the file is larger than ${MAX_ATTACHMENT_TOTAL} bytes, the most one message carries`,
      );
    const reserved = [...this.entries.values()].reduce((n, e) => n + e.size, 0);
    if (reserved + size > MAX_UPLOAD_SPOOL_BYTES)
      throw new MailError(
        "CONFLICT",
        `the upload spool is full (${reserved} of ${MAX_UPLOAD_SPOOL_BYTES} bytes wait for compose calls)`,
        "Send or abandon the pending messages first; unused uploads expire.",
      );
    const id = `u${randomBytes(16).toString("hex")}`;
    const file = path.join(this.dir, id);
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    this.entries.set(id, {
      file,
      source,
      size,
      received: 0,
      next: 0,
      fd,
      hash: createHash("sha256"),
      sha256: undefined,
      touched: this.now(),
    });
    return { upload_id: id, chunk_bytes: UPLOAD_CHUNK_BYTES };
  }

  chunk(id: string, index: number, data: string): { upload_id: string; received: number } {
    const e = this.open(id);
    if (index !== e.next) {
      this.drop(id);
      throw new MailError(
        "INVALID_ARGUMENT",
        `chunk ${index} of upload ${id} is out of order (expected ${e.next}); the upload is abandoned`,
        "Upload the file again, its chunks in order.",
      );
    }
    const bytes = Buffer.from(data, "base64");
    if (bytes.length > UPLOAD_CHUNK_BYTES || e.received + bytes.length > e.size) {
      this.drop(id);
      throw new MailError(
        "INVALID_ARGUMENT",
        `upload ${id} got more bytes than the ${e.size} it declared; the upload is abandoned`,
      );
    }
    fs.writeSync(e.fd as number, bytes);
    e.hash.update(bytes);
    e.received += bytes.length;
    e.next++;
    e.touched = this.now();
    return { upload_id: id, received: e.received };
  }

  finish(id: string): { upload_id: string; size: number; sha256: string } {
    const e = this.open(id);
    if (e.received !== e.size) {
      this.drop(id);
      throw new MailError(
        "INVALID_ARGUMENT",
        `upload ${id} has ${e.received} of the ${e.size} bytes it declared; the upload is abandoned`,
      );
    }
    fs.closeSync(e.fd as number);
    e.fd = undefined;
    e.sha256 = e.hash.digest("hex");
    e.touched = this.now();
    return { upload_id: id, size: e.size, sha256: e.sha256 };
  }

  /** The path a finished upload was read from (for a derived idempotency key). */
  source(id: string): string {
    return this.done(id).source;
  }

  /** A finished upload's content; the upload is deleted (one compose call uses it). */
  take(id: string): Upload {
    const e = this.done(id);
    const content = fs.readFileSync(e.file);
    this.drop(id);
    return { source: e.source, content, sha256: e.sha256 as string };
  }

  /** Deletes uploads nobody used (or finished) within the TTL. */
  sweep(): void {
    const before = this.now() - this.ttl();
    for (const [id, e] of this.entries) if (e.touched < before) this.drop(id);
  }

  close(): void {
    clearInterval(this.timer);
    for (const id of [...this.entries.keys()]) this.drop(id);
  }

  pending(): number {
    return this.entries.size;
  }

  private open(id: string): Entry {
    const e = this.entries.get(id);
    if (!e) throw unknown(id);
    if (e.fd === undefined) throw new MailError("INVALID_ARGUMENT", `upload ${id} is already finished`);
    return e;
  }

  private done(id: string): Entry {
    this.sweep();
    const e = this.entries.get(id);
    if (!e) throw unknown(id);
    if (e.fd !== undefined) throw new MailError("INVALID_ARGUMENT", `upload ${id} is not finished`);
    return e;
  }

  /**
   * Forgets an upload and deletes its file. Never throws: it runs from the sweep's timer (a throw
   * there would end the daemon) and before other callers' uploads (which must not fail for this
   * one). A file that could not be deleted is gone at the daemon's next start (the constructor).
   */
  private drop(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    try {
      if (e.fd !== undefined) fs.closeSync(e.fd);
      fs.rmSync(e.file, { force: true });
    } catch {
      // (see above)
    }
  }
}
