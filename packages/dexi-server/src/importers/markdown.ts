import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, extname, join, relative, sep } from "node:path";
import { parse as parseYaml } from "yaml";
import { type ImportItem, parseDate, withTags } from "./types.js";

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Every Markdown file under a folder (an Obsidian vault): hidden folders (.obsidian, .git, .trash) skipped. */
export function* markdownFiles(root: string): Generator<string> {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? 1 : -1));
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile() && /\.(md|markdown)$/i.test(e.name)) yield p;
    }
  }
}

/**
 * One Markdown note: title from front matter `title` (else the file name), folder from the path inside
 * the vault (`Projects/Alpha/x.md` -> folder "Projects/Alpha", root files unfiled), front-matter `tags`
 * added as hashtags, created from front matter `created`/`date` (else the file's mtime).
 */
export function markdownItem(root: string, file: string): ImportItem {
  const raw = readFileSync(file, "utf8").replace(/^\uFEFF/, "");
  let body = raw;
  let meta: Record<string, unknown> = {};
  const fm = FRONT_MATTER.exec(raw);
  if (fm) {
    try {
      const parsed = parseYaml(fm[1]!) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        meta = parsed as Record<string, unknown>;
      body = raw.slice(fm[0].length);
    } catch {
      // Not YAML after all: keep the file as it is.
    }
  }
  const rel = relative(root, file);
  const dir = rel.includes(sep) ? rel.slice(0, rel.lastIndexOf(sep)).split(sep).join("/") : null;
  const tags = meta["tags"];
  const tagList = Array.isArray(tags)
    ? tags.map(String)
    : typeof tags === "string"
      ? tags.split(/[,\s]+/)
      : [];
  const title =
    typeof meta["title"] === "string" && meta["title"].trim()
      ? meta["title"].trim()
      : basename(file, extname(file));
  return {
    key: `md:${realpathSync(file)}`,
    title: title.slice(0, 500),
    body: withTags(body.trim(), tagList),
    source: "note",
    sourceUrl: null,
    folder: dir,
    // Whole milliseconds, as every stored time: a file system's mtime has a fraction, which an
    // integer column of PostgreSQL refuses.
    createdMs: parseDate(meta["created"] ?? meta["date"]) ?? Math.floor(statSync(file).mtimeMs),
  };
}
