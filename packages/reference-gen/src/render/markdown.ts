/**
 * Markdown and MDX text helpers. Pages are MDX (Fumadocs): a bare `{` starts a JavaScript expression
 * and a bare `<` a JSX tag, so prose from a server (descriptions) is escaped to render word for word.
 */

/** Escapes prose so MDX shows it literally: no JSX, no expressions, no emphasis, links or HTML. */
export function mdText(text: string): string {
  return text
    .split("\n")
    .map((line) => escapeLine(line))
    .join("\n");
}

function escapeLine(line: string): string {
  let out = line.replace(/[\\`*{}[\]<>~&]/g, (c) => `\\${c}`);
  // Underscores inside a word (snake_case names) never make emphasis; only the others need escaping.
  out = out.replace(/_/g, (m, at: number, whole: string) =>
    /[\p{L}\p{N}]/u.test(whole[at - 1] ?? "") && /[\p{L}\p{N}]/u.test(whole[at + 1] ?? "") ? m : "\\_",
  );
  // A line that would start a heading, list, setext underline or thematic break stays text.
  return out.replace(/^(\s*)([#=+-])/, "$1\\$2").replace(/^(\s*\d+)([.)])/, "$1\\$2");
}

/** An inline code span that holds any text, backticks included. MDX reads code spans literally. */
export function code(text: string): string {
  const runs = text.match(/`+/g) ?? [];
  const fence = "`".repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = text.startsWith("`") || text.endsWith("`") || text === "" ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * One table cell. GFM splits rows on `|` before it reads code spans, so every pipe is escaped, even
 * inside backticks (it renders as `|`). A cell is one line.
 */
export function cell(text: string): string {
  return text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/**
 * A blockquote of the text, every line quoted. Line breaks stay line breaks (a trailing backslash is a
 * hard break), since a description's lines often carry meaning (rules, lists); blank lines stay
 * paragraph breaks.
 */
export function blockquote(text: string): string {
  const lines = mdText(text.replace(/\r\n?/g, "\n").trimEnd()).split("\n");
  return lines
    .map((line, i) => {
      if (line.trim() === "") return ">";
      const next = lines[i + 1];
      const hardBreak = next !== undefined && next.trim() !== "" ? "\\" : "";
      return `> ${line.trimEnd().replace(/\|/g, "\\|")}${hardBreak}`;
    })
    .join("\n");
}

const PLAIN_YAML = /^[A-Za-z0-9][A-Za-z0-9 _.,()/'-]*$/;
const YAML_KEYWORDS = /^(true|false|yes|no|on|off|null|~|[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?)$/i;

/** A YAML scalar: plain when that is unambiguous, else a JSON string (which YAML reads the same). */
export function yamlString(value: string): string {
  return PLAIN_YAML.test(value) && !YAML_KEYWORDS.test(value) && !value.endsWith(" ")
    ? value
    : JSON.stringify(value);
}

export function frontMatter(fields: Readonly<Record<string, string>>): string {
  const lines = Object.entries(fields).map(([k, v]) => `${k}: ${yamlString(v)}`);
  return ["---", ...lines, "---"].join("\n");
}

/** A heading id from free text, such as a group name: lowercase ASCII words joined by dashes. */
export function slug(text: string): string {
  const s = text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, ""); // redos-ok: the line above made each run of "-" one "-"
  return s === "" ? "group" : s;
}

/** Renders a JSON value for a code span, as compact JSON. */
export function jsonValue(value: unknown): string {
  return JSON.stringify(value) ?? "undefined";
}
