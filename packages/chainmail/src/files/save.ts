/**
 * The file rules of download_attachment and save_raw_message: a new file of mode 0600 that never
 * replaces an existing one, a sanitized name that never starts with a dot, `name (2).ext` on a clash,
 * and a directory that is absolute, existing, owned by this user and writable by no other, reached
 * through real directories that no other user can change (ssh's StrictModes, applied to every
 * ancestor). The directory is never a dot-folder nor inside one (~/.ssh, ~/.config: a saved file
 * there could be a key or a config that something runs), except the default dir
 * (~/.cache/chainmail/attachments, chainmail's own), and never in the chainmail home's state,
 * secrets or runtime dirs, nor the dir of config.toml itself (a file saved there could become it).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { MailError } from "../errors.js";
import type { Home } from "../home.js";

export const MAX_NAME_BYTES = 200;

/**
 * Characters that show as nothing or reorder what follows: controls, format characters (zero-width
 * U+200B-U+200F, bidi U+202A-U+202E and U+2066-U+2069, U+2060-U+2064, U+FEFF, soft hyphen...), the
 * line and paragraph separators, fillers and variation selectors.
 */
const INVISIBLE =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each combining mark is removed on its own
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/gu;

/**
 * `s` without the dots and white space at its end, in one pass from the end: `/[.\s]+$/` backtracks
 * over every run of them that is not at the end, quadratic on a hostile attachment name.
 */
function trimEndDotsAndSpace(s: string): string {
  let end = s.length;
  while (end > 0 && /[.\s]/.test(s[end - 1] as string)) end--;
  return s.slice(0, end);
}

/** The longest start of `s`, whole code points, that takes at most `bytes` bytes of UTF-8. */
function prefixWithin(s: string, bytes: number): string {
  let used = 0;
  let units = 0;
  for (const cp of s) {
    used += Buffer.byteLength(cp);
    if (used > bytes) break;
    units += cp.length;
  }
  return s.slice(0, units);
}

/**
 * No separators, no leading dots, no invisible or bidi characters, bounded length. Linear in the
 * name's length: an attachment's name is the sender's (RFC 2231 lets it run to any length), and
 * cutting it a code point at a time, or trimming it by a regular expression, took 30 s of the
 * daemon's thread for a name of 40,000 characters.
 */
export function sanitizeFilename(name: string | undefined, fallback = "attachment"): string {
  let s = (name ?? "").normalize("NFC");
  s = s.replace(INVISIBLE, "");
  // Path segments become one name: "../../etc/x" -> "etc_x".
  s = s
    .split(/[/\\]+/)
    .filter((seg) => seg !== "" && seg !== "." && seg !== "..")
    .join("_");
  s = trimEndDotsAndSpace(s.replace(/^[.\s]+/, ""));
  s = s.replace(/\s+/g, " ");
  if (!s) s = fallback;
  if (Buffer.byteLength(s) > MAX_NAME_BYTES) {
    const ext = path.extname(s);
    const keepExt = ext.length > 1 && Buffer.byteLength(ext) <= 20 ? ext : "";
    const stem = prefixWithin(
      s.slice(0, s.length - keepExt.length),
      MAX_NAME_BYTES - Buffer.byteLength(keepExt),
    );
    s = trimEndDotsAndSpace(stem) + keepExt;
  }
  return s;
}

const bad = (dir: string, why: string, hint?: string) =>
  new MailError("INVALID_ARGUMENT", `dir ${JSON.stringify(dir)} ${why}`, hint);

/** Where no file is saved: inside the chainmail home's own dirs, and directly in config.toml's dir. */
export interface SaveForbidden {
  inside: string[];
  exact: string[];
}

const realOr = (p: string) => {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

export function saveForbidden(home: Home, env: NodeJS.ProcessEnv = process.env): SaveForbidden {
  const base = env["CHAINMAIL_HOME"];
  return {
    inside: [home.stateDir, home.secretsDir, home.runtimeDir].map(realOr),
    exact: [path.dirname(home.configFile), ...(base ? [base] : [])].map(realOr),
  };
}

const within = (p: string, root: string) => p === root || p.startsWith(`${root}${path.sep}`);

/**
 * Checks a caller's dir; the default dir is created (0700) when missing. The dir must be a real
 * directory owned by this user and writable by no other; each of its ancestors must be a real
 * directory (no symlink) owned by this user or root and writable by no other, except a root-owned
 * sticky directory such as /tmp, whose entries other users cannot rename or remove. Returns the
 * normalized path, which is the one checked.
 */
export function checkDir(
  asked: string | undefined,
  defaultDir: string,
  forbidden: SaveForbidden = { inside: [], exact: [] },
): string {
  // (the default dir's missing parts are made one at a time by the walk below, each under a parent
  // it judged first: a recursive mkdir followed a symlink another user planted on the way)
  const create = asked === undefined || asked === "";
  const dir = create ? defaultDir : asked;
  if (!path.isAbsolute(dir)) throw bad(dir, "is not an absolute path");
  const target = path.resolve(dir);
  // The walk below refuses every symlink on the way, so `target` is the real path judged here.
  if (target !== path.resolve(defaultDir)) {
    const dot = target.split(path.sep).find((part) => part.startsWith("."));
    if (dot !== undefined)
      throw bad(
        dir,
        `is a dot-folder or inside one (${JSON.stringify(dot)}); nothing is saved there`,
        "Pass a folder whose path has no part starting with a dot, or leave dir out for the default.",
      );
    if (forbidden.inside.some((root) => within(target, root)) || forbidden.exact.includes(target))
      throw bad(
        dir,
        "is in the chainmail home (config, state, secrets, socket); nothing is saved there",
        "Pass another folder, or leave dir out for the default.",
      );
  }
  const uid = process.getuid?.();
  const parts = target.split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const at = path.sep + parts.slice(0, i).join(path.sep);
    const last = i === parts.length;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      if (create && i > 0) st = makePrivateDir(at);
      else
        throw bad(
          dir,
          last ? "does not exist" : `is under ${JSON.stringify(at)}, which does not exist`,
          "Pass an existing directory.",
        );
    }
    const where = last ? "" : `: its ancestor ${JSON.stringify(at)}`;
    if (st.isSymbolicLink()) throw bad(dir, `is reached through a symlink${where}`, "Pass the real path.");
    if (!st.isDirectory()) throw bad(dir, last ? "is not a directory" : `${where} is not a directory`);
    if (uid !== undefined && st.uid !== uid && (last || st.uid !== 0)) {
      throw bad(dir, last ? "is not owned by this user" : `is unsafe${where} is owned by another user`);
    }
    const sharedSticky = !last && st.uid === 0 && (st.mode & 0o1000) !== 0;
    if ((st.mode & 0o022) !== 0 && !sharedSticky) {
      throw bad(
        dir,
        last ? "is writable by other users" : `is unsafe${where} is writable by other users`,
        "Use a directory only you can write to (chmod go-w), under directories only you or root can write to.",
      );
    }
  }
  return target;
}

/** Makes `at` (its parent exists and was judged) 0700, and what is there now. */
function makePrivateDir(at: string): fs.Stats {
  try {
    fs.mkdirSync(at, { mode: 0o700 });
  } catch (err) {
    // (made meanwhile by another save of ours: judged below as any existing dir)
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return fs.lstatSync(at);
}

function candidate(name: string, n: number): string {
  if (n === 1) return name;
  const ext = path.extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem} (${n})${ext && ext !== name ? ext : ""}`;
}

/** Our temp files: `.chainmail-` + 16 hex digits + `.part`. */
const PART_RE = /^\.chainmail-[0-9a-f]{16}\.part$/;
/** A temp file older than this was left by a crash: a save writes its file in one go. */
export const STALE_PART_MS = 60 * 60 * 1000;

/** Removes temp files of ours older than STALE_PART_MS (regular files owned by this user only). */
export function removeStaleParts(dir: string, now = Date.now()): number {
  let removed = 0;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    if (!PART_RE.test(name)) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.lstatSync(file);
      if (!st.isFile() || (uid !== undefined && st.uid !== uid) || now - st.mtimeMs < STALE_PART_MS) continue;
      fs.unlinkSync(file);
      removed++;
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed;
}

/** link() errors of a filesystem without hard links (FAT, exFAT, some FUSE and SMB mounts). */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK", "EXDEV"]);

const EXCLUSIVE =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;

/**
 * Copies `from` to a new `file` (never an existing one: EEXIST), as a filesystem without hard links
 * needs; false on EEXIST. A copy that fails halfway leaves no file behind.
 */
function copyExclusive(from: string, file: string): boolean {
  try {
    // COPYFILE_EXCL: refused when the name exists, as a link (even a dangling one) too
    fs.copyFileSync(from, file, fs.constants.COPYFILE_EXCL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    fs.rmSync(file, { force: true });
    throw err;
  }
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

export interface WriteOptions {
  /** The hard-link call; tests pass one that fails as a filesystem without hard links does. */
  link?: (existing: string, target: string) => void;
}

/**
 * A new file's content on its way in: a private temp file in the target dir, written as it comes
 * (a download streams into it, so a large attachment never sits in memory whole), then given its
 * name by `placePart`, or removed by `discardPart`.
 */
export interface PartFile {
  readonly path: string;
  fd: number | undefined;
  size: number;
}

/** Opens a new temp file in `dir`; stale temp files of earlier crashes there are removed first. */
export function openPart(dir: string): PartFile {
  removeStaleParts(dir);
  const file = path.join(dir, `.chainmail-${crypto.randomBytes(8).toString("hex")}.part`);
  try {
    return { path: file, fd: fs.openSync(file, EXCLUSIVE, 0o600), size: 0 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST")
      throw new MailError("CONFLICT", "a temp file name clashed; try again");
    throw err;
  }
}

export function appendPart(part: PartFile, chunk: Buffer): void {
  if (part.fd === undefined) throw new Error("the temp file is closed");
  fs.writeSync(part.fd, chunk);
  part.size += chunk.length;
}

/** Closes and removes a temp file that is not to become a file (a failed or repeated download). */
export function discardPart(part: PartFile): void {
  if (part.fd !== undefined) {
    try {
      fs.closeSync(part.fd);
    } catch {
      // (closed already)
    }
    part.fd = undefined;
  }
  fs.rmSync(part.path, { force: true });
}

/**
 * Gives a written temp file its name under the first free one (`name`, `name (2)`...): a hard link,
 * which never replaces, so no existing file is touched and no half-written file is ever visible; on
 * a filesystem without hard links a copy that never replaces either. The temp file is removed in
 * any case. Returns the file's path.
 */
export function placePart(part: PartFile, name: string, options: WriteOptions = {}): string {
  const link = options.link ?? fs.linkSync;
  const dir = path.dirname(part.path);
  try {
    if (part.fd === undefined) throw new Error("the temp file is closed");
    fs.fsyncSync(part.fd);
    fs.closeSync(part.fd);
    part.fd = undefined;
    let direct = false;
    for (let n = 1; n <= 1000; n++) {
      const target = path.join(dir, candidate(name, n));
      if (!direct) {
        try {
          link(part.path, target);
          return target;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? "";
          if (code === "EEXIST") continue;
          if (!NO_HARD_LINKS.has(code)) throw err;
          direct = true;
        }
      }
      if (copyExclusive(part.path, target)) return target;
    }
    throw new MailError(
      "CONFLICT",
      `1000 files named like the attachment already exist in ${dir}; its file name is in detail`,
      "Save it in another folder, or clear out the old copies first.",
      `file name: ${name}`,
    );
  } finally {
    discardPart(part);
  }
}

/** Writes `content` to a new file named like `name` in `dir` (`openPart`, then `placePart`). */
export function writeNewFile(dir: string, name: string, content: Buffer, options: WriteOptions = {}): string {
  const part = openPart(dir);
  try {
    appendPart(part, content);
  } catch (err) {
    discardPart(part);
    throw err;
  }
  return placePart(part, name, options);
}
