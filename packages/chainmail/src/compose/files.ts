/**
 * Reading the files a message attaches. Each is opened first and judged by what was opened (fstat
 * on the descriptor, its real path from /proc), so a path swapped for a symlink or a directory
 * between a check and the read cannot slip through. An attachment is a regular file under one of the
 * attach roots (`[files] attach_roots`; default the daemon user's home and the system temp dir) with
 * no dot-file or dot-folder below the root, and never one under /etc, /proc, /sys, /dev or the
 * chainmail home (config, state, secrets: also refused under another name, a hard link), whatever the
 * roots say: an injected message asking an agent to mail such files must not get them out.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FilesConfig } from "../config.js";
import { MailError } from "../errors.js";
import type { Home } from "../home.js";
import { MAX_ATTACHMENT_TOTAL } from "../limits.js";

export interface LoadedFile {
  filename: string;
  /** The path of what was opened, every symlink resolved: the one judged. */
  real?: string;
  content: Buffer;
  /** sha256 of the content, hex: part of a derived idempotency key. */
  sha256: string;
}

const bad = (what: string, why: string) => new MailError("INVALID_ARGUMENT", `${what} ${why}`);

/** The directories no attachment may come from, as real paths. */
export function privateRoots(dirs: string[]): string[] {
  return dirs.map((d) => {
    try {
      return fs.realpathSync(d);
    } catch {
      return path.resolve(d);
    }
  });
}

/** The chainmail home's parts no file may be sent from: state, secrets, runtime dir, config. */
export function homeRoots(home: Home): string[] {
  return privateRoots([
    home.stateDir,
    home.secretsDir,
    home.runtimeDir,
    home.configFile,
    ...(process.env["CHAINMAIL_HOME"] ? [process.env["CHAINMAIL_HOME"]] : []),
  ]);
}

const inside = (file: string, root: string) =>
  file === root || file.startsWith(root === path.sep ? root : `${root}${path.sep}`);

/** System dirs no attachment comes from, whatever attach_roots says. */
export const SYSTEM_DIRS = ["/etc", "/proc", "/sys", "/dev"];

/** What an attachment may be read from; `roots` null: no root rule (the client side, see below). */
export interface AttachRules {
  roots: string[] | null;
  /** The chainmail home's parts (homeRoots): refused, also as a hard link. */
  home: string[];
}

/** The default attach roots: the daemon user's home and the system temp dir. */
export const defaultAttachRoots = () => [os.homedir(), os.tmpdir()];

/** The daemon's rules, from config.toml's `[files]`. */
export function attachRules(home: Home, files: FilesConfig | undefined): AttachRules {
  return { roots: privateRoots(files?.attach_roots ?? defaultAttachRoots()), home: homeRoots(home) };
}

/**
 * Why a file at real path `real` may not be attached, or undefined when it may. The roots rule is
 * skipped when `rules.roots` is null: the MCP server reads uploads as its own user and sends the real
 * path, which the daemon judges against its roots (beginUpload).
 */
export function attachRefusal(real: string, rules: AttachRules): string | undefined {
  if (rules.home.some((root) => inside(real, root)))
    return "is inside the chainmail home (config, state and secrets are never sent)";
  const system = privateRoots(SYSTEM_DIRS).find((d) => inside(real, d));
  if (system) return `is under ${system}, whose files are never attached`;
  if (rules.roots === null) return undefined;
  const root = rules.roots.filter((r) => inside(real, r)).sort((a, b) => b.length - a.length)[0];
  if (root === undefined)
    return `is outside the dirs attachments may come from (${rules.roots.join(", ")}; [files] attach_roots in config.toml)`;
  const below = path.relative(root, real).split(path.sep);
  if (below.some((part) => part.startsWith(".")))
    return "is a dot-file or inside a dot-folder, which are never attached";
  return undefined;
}

/**
 * Whether the opened file is one of the home's own files under another name: a hard link made
 * outside the home (to a secret, say) has a real path of its own, so only its inode gives it away.
 * Looked for only when the file has more than one link.
 */
function linkedIntoHome(st: fs.Stats, roots: string[]): boolean {
  if (st.nlink < 2) return false;
  const same = (p: string, depth: number): boolean => {
    let s: fs.Stats;
    try {
      s = fs.lstatSync(p);
    } catch {
      return false;
    }
    if (s.isFile()) return s.dev === st.dev && s.ino === st.ino;
    if (!s.isDirectory() || depth > 4) return false;
    let names: string[];
    try {
      names = fs.readdirSync(p);
    } catch {
      return false;
    }
    return names.some((n) => same(path.join(p, n), depth + 1));
  };
  return roots.some((r) => same(r, 0));
}

export function loadFile(file: string, what: string, rules: AttachRules): LoadedFile {
  if (!path.isAbsolute(file)) throw bad(what, "must be an absolute path");
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw bad(what, "is a symbolic link; give the file's own path");
    if (code === "ENOENT")
      throw new MailError(
        "NOT_FOUND",
        `${what}: no such file`,
        "Check the path: it must be the absolute path of an existing file on the machine where the MCP server (or the chainmail command) runs, which may not be the machine the agent sees.",
      );
    if (code === "EACCES") throw bad(what, "cannot be read by the daemon");
    throw bad(what, `cannot be opened (${code ?? "error"})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw bad(what, "is not a regular file");
    let real = path.resolve(file);
    try {
      real = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      real = fs.realpathSync(file);
    }
    const why =
      attachRefusal(real, rules) ??
      (linkedIntoHome(st, rules.home)
        ? "is inside the chainmail home (config, state and secrets are never sent)"
        : undefined);
    if (why) throw bad(what, why);
    if (st.size > MAX_ATTACHMENT_TOTAL)
      throw bad(what, `is larger than ${MAX_ATTACHMENT_TOTAL} bytes, the most one message carries`);
    const content = fs.readFileSync(fd);
    return {
      filename: path.basename(file),
      real,
      content,
      sha256: createHash("sha256").update(content).digest("hex"),
    };
  } finally {
    fs.closeSync(fd);
  }
}

export function loadFiles(files: readonly string[], what: string, rules: AttachRules): LoadedFile[] {
  return files.map((f, i) => loadFile(f, `${what}[${i}]`, rules));
}

export function totalSize(files: Array<{ content: Buffer }>): number {
  return files.reduce((n, f) => n + f.content.length, 0);
}
