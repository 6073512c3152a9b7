/**
 * The file rules of download_attachment and save_raw_message: a new file of mode 0600 that never
 * replaces an existing one, a sanitized name, `name (2).ext` on a clash, and a directory that is
 * absolute, existing, owned by this user and writable by no other.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { MailError } from "../errors.js";

export const MAX_NAME_BYTES = 200;

/** No separators, no leading dots, no control or bidi characters, bounded length. */
export function sanitizeFilename(name: string | undefined, fallback = "attachment"): string {
  let s = (name ?? "").normalize("NFC");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  s = s.replace(/[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "");
  // Path segments become one name: "../../etc/x" -> "etc_x".
  s = s
    .split(/[/\\]+/)
    .filter((seg) => seg !== "" && seg !== "." && seg !== "..")
    .join("_");
  s = s.replace(/^[.\s]+/, "").replace(/[.\s]+$/, "");
  s = s.replace(/\s+/g, " ");
  if (!s) s = fallback;
  if (Buffer.byteLength(s) > MAX_NAME_BYTES) {
    const ext = path.extname(s);
    const keepExt = ext.length > 1 && Buffer.byteLength(ext) <= 20 ? ext : "";
    let stem = s.slice(0, s.length - keepExt.length);
    while (Buffer.byteLength(stem + keepExt) > MAX_NAME_BYTES) stem = [...stem].slice(0, -1).join("");
    s = stem.replace(/[.\s]+$/, "") + keepExt;
  }
  return s;
}

/** Checks a caller's dir; the default dir is created (0700) when missing. */
export function checkDir(dir: string | undefined, defaultDir: string): string {
  if (dir === undefined || dir === "") {
    fs.mkdirSync(defaultDir, { recursive: true, mode: 0o700 });
    dir = defaultDir;
  } else if (!path.isAbsolute(dir)) {
    throw new MailError("INVALID_ARGUMENT", `dir ${JSON.stringify(dir)} is not an absolute path`);
  }
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    throw new MailError(
      "INVALID_ARGUMENT",
      `dir ${JSON.stringify(dir)} does not exist`,
      "Pass an existing directory.",
    );
  }
  if (!st.isDirectory())
    throw new MailError("INVALID_ARGUMENT", `dir ${JSON.stringify(dir)} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new MailError("INVALID_ARGUMENT", `dir ${JSON.stringify(dir)} is not owned by this user`);
  }
  if ((st.mode & 0o022) !== 0) {
    throw new MailError(
      "INVALID_ARGUMENT",
      `dir ${JSON.stringify(dir)} is writable by other users`,
      "Use a directory only you can write to (chmod go-w).",
    );
  }
  return dir;
}

function candidate(name: string, n: number): string {
  if (n === 1) return name;
  const ext = path.extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem} (${n})${ext && ext !== name ? ext : ""}`;
}

/**
 * Writes the whole content to a private temp file, then hard-links it under the first free name:
 * link() never replaces, so no existing file is touched and no half-written file is ever visible.
 */
export function writeNewFile(dir: string, name: string, content: Buffer): string {
  const tmp = path.join(dir, `.chainmail-${crypto.randomBytes(8).toString("hex")}.part`);
  const fd = fs.openSync(
    tmp,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    for (let n = 1; n <= 1000; n++) {
      const target = path.join(dir, candidate(name, n));
      try {
        fs.linkSync(tmp, target);
        return target;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    throw new MailError("CONFLICT", `1000 files named like ${JSON.stringify(name)} already exist in ${dir}`);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
