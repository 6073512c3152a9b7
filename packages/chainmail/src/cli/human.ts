/** The CLI's text output (without --json): one line per row for the lists, readable text for the rest. */
import type { CacheStatus } from "../cache/index.js";
import type { CheckResult } from "../imap/test-account.js";
import type { ComposeResult } from "../compose/result.js";
import type { Message } from "../imap/messages.js";
import type { ThreadResult } from "../imap/thread-plan.js";
import type { ConfigError } from "../service/context.js";
import { noConfigText } from "./first-run.js";
import type { RebuildReport } from "../daemon/operations/cache.js";
import type { AdminStatus } from "../service/admin.js";
import type { AccountSyncReport } from "../daemon/cache-runner.js";
import type { Criterion, Item, ItemDetail, ItemSummary, ThreadLink } from "../items/model.js";
import type { BatchResult } from "../service/organize.js";
import type { SearchResult } from "../service/search.js";
import type { WatchStatus } from "../service/events.js";
import type { AuditRow } from "../store/state.js";
import type { OutboxRow } from "../store/outbox.js";

export interface HumanContext {
  /** The config file, named when there are no accounts yet. */
  configFile: string;
  /** Whether that file exists. */
  configExists: boolean;
  /** The sub-command, for results that do not say which one they answer (item delete|restore). */
  sub?: string;
}

/**
 * The text of a result for a terminal. Mail text (subjects, bodies, names, server replies) is
 * printed as it is, less what a terminal would act on (terminalText).
 */
export function human(command: string, result: unknown, context?: HumanContext): string {
  return terminalText(render(command, result, context));
}

/**
 * Outside text made safe for a terminal: control characters (escape sequences that move the
 * cursor, retitle the window or hide text) and invisible format characters (bidi overrides and
 * marks, zero-width characters) are removed; tabs and newlines stay. The one filter of the CLI's
 * output: results (human), the watch stream and an error's detail (the bin) all pass through it.
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_UNSAFE, "");
}

const TERMINAL_UNSAFE = /[^\P{Cc}\t\n]|\p{Cf}/gu;

function render(command: string, result: unknown, context?: HumanContext): string {
  const r = result as Record<string, unknown>;
  switch (command) {
    case "accounts": {
      const accounts = r["accounts"] as Array<Record<string, unknown>>;
      const lines = accounts.map(
        (a) =>
          `${a["name"]}\t${a["provider"]}\t${a["address"]}\tauth:${a["auth"]}\texpunge:${a["allow_expunge"]}\tdelete_folder:${a["allow_delete_folder"]}${a["confirmation_pending"] ? "\tconfirmation pending (chainmail policy status)" : ""}`,
      );
      if (accounts.length === 0 && context)
        lines.push(
          context.configExists
            ? `No accounts in ${context.configFile}. Add one as an [[accounts]] table (see chainmail's README), then store its password with \`chainmail secret set NAME\`.`
            : noConfigText(context.configFile),
        );
      return withConfigError(lines, r["config_error"] as ConfigError | undefined);
    }
    case "test":
      return humanTest(r as unknown as { account: string; imap: CheckResult; smtp: CheckResult });
    case "folders":
      if (Array.isArray(r["accounts"])) return humanFolders(r);
      return humanChange(r);
    case "get":
      return humanMessages(r as { messages: Message[]; errors: Array<{ ref: string; error: WireLike }> });
    case "thread":
      return humanThread(r as unknown as ThreadResult);
    case "send":
    case "reply":
    case "forward":
      return humanCompose(result as ComposeResult);
    case "draft":
      if (typeof r["status"] === "string") return humanCompose(result as ComposeResult);
      return humanChange(r);
    case "search":
      return humanSearch(result as SearchResult);
    case "audit":
      return humanAudit(r["rows"] as AuditRow[]);
    case "watch":
      if (typeof r["last_id"] === "number") return humanWatchStatus(result as WatchStatus);
      return humanWatch(r);
    case "outbox":
      return humanOutbox(r);
    case "move":
    case "copy":
    case "archive":
    case "trash":
    case "expunge":
    case "flags":
    case "labels":
      return humanBatch(command, result as BatchResult);
    case "attachment":
    case "raw":
      return humanSaved(r);
    case "cache":
      if (typeof r["size_bytes"] === "number") return cacheStatus(result as CacheStatus);
      if (Array.isArray(r["accounts"]) && r["accounts"].every((a: Record<string, unknown>) => a["dropped"]))
        return (r["accounts"] as RebuildReport[])
          .map(
            (a) =>
              `${a.account}\tdropped ${a.dropped.messages} message(s), ${a.dropped.bodies} bodies\t${a.sync.ok ? `synced ${a.sync.folders} folder(s), ${a.sync.added} message(s), ${a.sync.bodies} bodies` : `sync failed: ${a.sync.error?.reason}: ${a.sync.error?.message}`}`,
          )
          .join("\n");
      if (typeof r["bodies"] === "number" && typeof r["bytes"] === "number")
        return `evicted ${r["bodies"]} bodies, ${r["bytes"]} bytes${r["account"] ? ` of ${r["account"]}` : ""}`;
      return humanSync(r["accounts"] as AccountSyncReport[]);
    case "send-raw":
      return [
        `${r["status"]}\t${r["message_id"] ?? ""}\tkey ${r["idempotency_key"]}`,
        ...(r["draft_ref"] ? [`held in Drafts: ${r["draft_ref"]}`] : []),
        ...(Array.isArray(r["refused_recipients"]) ? [`refused: ${r["refused_recipients"].join(", ")}`] : []),
        ...(r["hint"] ? [String(r["hint"])] : []),
      ].join("\n");
    case "item":
      if (Array.isArray(r["ids"]) && context?.sub)
        return `${context.sub === "restore" ? "restored" : "deleted"}: ${(r["ids"] as string[]).join(", ")}\nrevision ${r["revision"]}`;
      return humanItems(r);
    case "admin":
      return adminStatus(result as AdminStatus);
    case "policy":
      return withConfigError([humanPolicy(r)], r["config_error"] as ConfigError | undefined);
    default:
      return fields(
        Object.entries(r).map(([k, v]) => [k, typeof v === "object" && v !== null ? JSON.stringify(v) : v]),
      );
  }
}

interface WireLike {
  reason: string;
  message: string;
  hint?: string;
  /** Outside text (a server's reply), printed as plain text like the mail itself. */
  detail?: string;
}

const errorLine = (e: WireLike) =>
  `${e.reason}: ${e.message}${e.hint ? ` (${e.hint})` : ""}${e.detail ? ` [${e.detail.replace(/\n/g, "; ")}]` : ""}`;

/** A result's lines, then the config file's error while its last edit is not applied. */
function withConfigError(lines: string[], err: ConfigError | undefined): string {
  if (!err) return lines.join("\n");
  return [
    ...lines,
    `config error since ${when(err.since)}: ${err.file}: ${err.message}`,
    "  the daemon keeps running on the last config that loaded; fix the file and it is read again on its own",
  ].join("\n");
}

function humanTest(r: { account: string; imap: CheckResult; smtp: CheckResult }): string {
  const line = (what: string, c: CheckResult) =>
    c.skipped
      ? `${what}\tskipped (not configured)`
      : c.ok
        ? `${what}\tok`
        : `${what}\tfailed: ${c.error ? errorLine(c.error) : "unknown error"}`;
  return [`account ${r.account}`, line("imap", r.imap), line("smtp", r.smtp)].join("\n");
}

function humanFolders(r: Record<string, unknown>): string {
  const accounts = r["accounts"] as Array<{
    account: string;
    folders: Array<{ name: string; role: string | null; messages: number | null; unseen: number | null }>;
  }>;
  const partial = (r["partial"] ?? []) as Array<{ account: string; folder?: string; error: WireLike }>;
  return [
    ...accounts.flatMap((a) =>
      a.folders.map(
        (f) =>
          `${a.account}\t${f.name}\t${f.role ?? "-"}\t${f.messages ?? "?"} message(s)\t${f.unseen ?? "?"} unseen`,
      ),
    ),
    ...partial.map((p) => `${p.account}${p.folder ? `\t${p.folder}` : ""}\terror: ${errorLine(p.error)}`),
  ].join("\n");
}

/** A folder or draft change: its fields as `key: value`. */
function humanChange(r: Record<string, unknown>): string {
  return Object.entries(r)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("\n");
}

const addresses = (list: Array<{ name?: string; address?: string }>) =>
  list.map((a) => (a.name ? `${a.name} <${a.address}>` : (a.address ?? ""))).join(", ");

function humanMessage(m: Message): string {
  return [
    `ref: ${m.ref}`,
    `account: ${m.account}\tfolder: ${m.folder}`,
    `date: ${when(m.date)}`,
    `from: ${addresses(m.from)}`,
    `to: ${addresses(m.to)}`,
    ...(m.cc.length ? [`cc: ${addresses(m.cc)}`] : []),
    `subject: ${m.subject}`,
    ...(m.flags.length || m.keywords.length ? [`flags: ${[...m.flags, ...m.keywords].join(" ")}`] : []),
    ...m.attachments.map((a) => `attachment ${a.part}: ${a.filename} (${a.content_type}, ${a.size} bytes)`),
    "",
    m.body,
    ...(m.body_truncated ? ["[body cut; --full gives all of it]"] : []),
  ].join("\n");
}

const RULE = "\n----------------------------------------\n";

function humanMessages(r: { messages: Message[]; errors: Array<{ ref: string; error: WireLike }> }): string {
  return [
    ...r.messages.map(humanMessage),
    ...r.errors.map((e) => `ref ${e.ref}: error: ${errorLine(e.error)}`),
  ].join(RULE);
}

function humanThread(r: ThreadResult): string {
  return [
    `thread ${r.thread_id}: ${r.messages.length} message(s)${r.truncated ? `, ${r.omitted_refs.length} more not shown (get them by ref: ${r.omitted_refs.join(" ")})` : ""}${r.errors.length ? `, ${r.errors.length} could not be read` : ""}`,
    ...r.messages.map(humanMessage),
    ...r.errors.map((e) => `ref ${e.ref}: error: ${errorLine(e.error)}`),
  ].join(RULE);
}

function humanCompose(r: ComposeResult): string {
  const lines = [`status: ${r.status}`];
  const add = (k: string, v: unknown) => {
    if (v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0))
      lines.push(`${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`);
  };
  add("message_id", r.message_id);
  add("sent_ref", r.sent_ref);
  add("draft_ref", r.draft_ref);
  add("idempotency_key", r.idempotency_key);
  add("original_status", r.original_status);
  add("refused_recipients", r.refused_recipients);
  add("sent_copy_error", r.sent_copy_error);
  add("blocked", r.blocked);
  if (r.too_many_recipients) add("too_many_recipients", "true");
  add("hint", r.hint);
  return lines.join("\n");
}

function cacheStatus(status: CacheStatus): string {
  return [
    ...status.accounts.flatMap((a) => [
      `${a.account}\t${a.state}\tlast sync ${a.last_sync ? when(a.last_sync) : "never"}\tdownloaded today ${a.download_today.bytes} of ${a.download_today.budget_bytes} bytes\tbodies since ${a.bodies_since ? when(a.bodies_since) : "none"}${a.body_budget_reached ? " (size bound reached; older bodies stay on the server)" : ""}`,
      ...a.folders.map(
        (f) =>
          `  ${f.name}\theaders ${f.headers_cached}/${f.messages}\tbodies ${Math.round(f.body_coverage * 100)}%\t${f.complete ? "complete" : "incomplete"}\t${f.watching ? "watching, " : ""}${f.fresh ? "fresh" : "stale"}${f.error ? `\terror: ${f.error}` : ""}${f.watch_error ? `\twatch error: ${f.watch_error}` : ""}`,
      ),
    ]),
    `cache ${status.size_bytes} of ${status.max_size_bytes} bytes`,
  ].join("\n");
}

function humanPolicy(r: Record<string, unknown>): string {
  if (Array.isArray(r["confirmed"]))
    return (
      (r["confirmed"] as Array<{ account: string; changes: string[] }>)
        .map((c) => `${c.account}\tconfirmed: ${c.changes.join("; ")}`)
        .join("\n") || "no widening was pending"
    );
  return (r["accounts"] as Array<{ account: string; pending: boolean; changes: string[]; digest: string }>)
    .map((a) =>
      a.pending
        ? `${a.account}\tpending (digest ${a.digest}): ${a.changes.join("; ")}`
        : `${a.account}\tconfirmed, nothing pending`,
    )
    .join("\n");
}

function adminStatus(s: AdminStatus): string {
  const d = s.daemon;
  const lines = [
    `daemon ${d.version}\tpid ${d.pid}\tup ${d.uptime_seconds ?? "?"}s since ${d.started ? when(d.started) : "?"}`,
    ...(s.config_error
      ? [
          `config.toml: the last reload failed (first seen ${when(s.config_error.since)}), running on the config before it: ${s.config_error.message}`,
        ]
      : ["config.toml: loaded"]),
  ];
  for (const a of s.accounts) {
    const err = a.connection.last_error;
    const cache = a.cache
      ? `cache ${a.cache.state}, ${a.cache.complete_folders}/${a.cache.folders} folders complete, last sync ${a.cache.last_sync ? when(a.cache.last_sync) : "never"}, watching ${a.cache.watching.join(", ") || "nothing"}${a.cache.watch === "none" ? "" : ` (${a.cache.watch})`}`
      : "cache off";
    lines.push(
      `${a.account}\tauth ${a.auth}\tconnection ${a.connection.state}${err ? ` (last error ${err.reason} at ${when(err.at)})` : ""}\t${cache}`,
    );
    for (const w of a.cache?.watch_errors ?? []) lines.push(`  watch error in ${w.folder}: ${w.error}`);
  }
  lines.push(
    s.pending_confirmations.length
      ? `policy confirmations pending: ${s.pending_confirmations.map((p) => `${p.account} (digest ${p.digest})`).join(", ")} (chainmail policy confirm)`
      : "policy confirmations pending: none",
  );
  lines.push(
    s.unconfirmed_sends.length
      ? `sends awaiting a decision: ${s.unconfirmed_sends.map((u) => `${u.key} (${u.account}, ${when(u.created)})`).join(", ")} (chainmail outbox confirm|release KEY)`
      : "sends awaiting a decision: none",
  );
  lines.push(
    `state.db ${s.sizes.state_db_bytes} bytes\tcache.db ${s.sizes.cache_db_bytes ?? "off"}${s.sizes.cache_max_bytes !== null ? ` bytes of ${s.sizes.cache_max_bytes}` : ""}`,
  );
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Shared pieces: aligned columns, key: value blocks, readable times.

/** Columns a string takes in a terminal: wide (CJK, fullwidth) characters take two. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0x300 && c <= 0x36f) || c === 0x200b) continue;
    w += WIDE.some(([lo, hi]) => c >= lo && c <= hi) ? 2 : 1;
  }
  return w;
}

// East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth W/F, the large blocks).
const WIDE: Array<[number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

/** One line of a cell: a newline or tab in outside text would break the columns. */
const cell = (v: unknown): string =>
  v === null || v === undefined || v === "" ? "-" : String(v).replace(/[\t\r\n]+/g, " ");

/**
 * Rows as aligned columns under a header, each column as wide as its widest cell; the last
 * column is not padded (it holds free text such as a subject or a summary).
 */
export function columns(header: string[], rows: unknown[][]): string {
  const all = [header, ...rows.map((r) => r.map(cell))];
  const widths = header.map((_, i) => Math.max(...all.map((r) => displayWidth(r[i] ?? ""))));
  return all
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + " ".repeat(widths[i]! - displayWidth(c))))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `key: value` lines with the values aligned; undefined values are left out. */
export function fields(pairs: Array<[string, unknown]>): string {
  const kept = pairs.filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...kept.map(([k]) => k.length));
  return kept.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cell(v)}`).join("\n");
}

/**
 * An RFC 3339 time as `2026-12-06 07:30:47 UTC`, in the local time zone when it is not UTC
 * (`2026-12-06 08:30:47 +01:00`); anything that is not a time is shown as it is.
 */
export function when(iso: string | null | undefined): string {
  if (!iso) return "-";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = new Date(t);
  const off = -d.getTimezoneOffset();
  const p = (n: number) => String(n).padStart(2, "0");
  const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  if (off === 0) return `${local} UTC`;
  return `${local} ${off < 0 ? "-" : "+"}${p(Math.floor(Math.abs(off) / 60))}:${p(Math.abs(off) % 60)}`;
}

// ---------------------------------------------------------------------------------------------
// Commands that had no text form.

function humanSearch(r: SearchResult): string {
  const table = r.rows.length
    ? columns(
        ["DATE", "ACCOUNT", "FOLDER", "FROM", "REF", "SUBJECT"],
        r.rows.map((x) => [when(x.date), x.account, x.folder, x.from?.address, x.ref, x.subject]),
      ).split("\n")
    : [];
  // A snippet goes under its row (--snippets), indented, so the columns stay aligned.
  const lines = table.flatMap((line, i) => {
    const snippet = i > 0 ? r.rows[i - 1]!.snippet : undefined;
    return snippet ? [line, `    ${cell(snippet)}`] : [line];
  });
  return [
    ...lines,
    `${r.count} match(es)${r.next_cursor ? `; next page: --cursor ${r.next_cursor}` : ""}`,
    ...r.partial.map(
      (p) => `not searched: ${p.account}${p.folder ? ` ${p.folder}` : ""}: ${errorLine(p.error)}`,
    ),
  ].join("\n");
}

function humanAudit(rows: AuditRow[]): string {
  if (rows.length === 0) return "no audit rows match";
  return columns(
    ["TIME", "CLIENT", "ACTION", "ACCOUNT", "DECISION", "SUMMARY"],
    rows.map((x) => [when(x.time), x.client, x.action, x.account, x.decision, x.summary]),
  );
}

function humanOutbox(r: Record<string, unknown>): string {
  if (Array.isArray(r["rows"])) {
    const rows = r["rows"] as OutboxRow[];
    if (rows.length === 0) return "the outbox is empty";
    return columns(
      ["KEY", "ACCOUNT", "TOOL", "STATUS", "CREATED", "UPDATED", "MESSAGE-ID"],
      rows.map((x) => [
        x.key,
        x.account,
        x.tool,
        x.status === "pending" ? "unconfirmed" : x.status,
        when(x.created),
        when(x.updated),
        x.message_id,
      ]),
    );
  }
  if (typeof r["confirmed"] === "boolean")
    return r["confirmed"]
      ? `send ${r["key"]} confirmed as sent: a retry with its key answers duplicate`
      : `send ${r["key"]} is not awaiting a decision; nothing changed (chainmail outbox list shows its status)`;
  if (typeof r["released"] === "boolean") return `send ${r["key"]} released: a retry with its key sends it`;
  return fields(Object.entries(r));
}

function humanBatch(command: string, r: BatchResult): string {
  const rows = r.outcomes.map((o) => [
    o.ref,
    o.error ? "failed" : "ok",
    o.error ? errorLine(o.error) : o.new_ref ? `now ${o.new_ref}` : "",
  ]);
  return [
    columns(["REF", "OUTCOME", "DETAIL"], rows),
    `${command}: ${r.succeeded} done, ${r.failed} failed`,
  ].join("\n");
}

function humanSaved(r: Record<string, unknown>): string {
  return fields([
    ["saved", r["path"]],
    ["size", `${r["size"]} bytes`],
    ["type", r["content_type"]],
    ["filename", r["filename"]],
  ]);
}

function humanSync(reports: AccountSyncReport[]): string {
  return columns(
    ["ACCOUNT", "RESULT", "FOLDERS", "ADDED", "REMOVED", "BODIES", "EVICTED", "NOTE"],
    reports.map((a) => [
      a.account,
      a.ok ? "synced" : "failed",
      a.folders,
      a.added,
      a.removed,
      a.bodies,
      a.evicted,
      a.error
        ? errorLine(a.error)
        : a.budget_exhausted
          ? "today's download budget is spent; the rest follows tomorrow"
          : "",
    ]),
  );
}

function humanWatch(r: Record<string, unknown>): string {
  if (Array.isArray(r["groups"])) {
    return (r["groups"] as Array<Record<string, unknown>>)
      .map(
        (x) =>
          `${x["name"]}\tacked ${x["acked"]}\tpending ${x["pending"]}\tupdated ${when(x["updated"] as string)}`,
      )
      .join("\n");
  }
  if (typeof r["deleted"] === "boolean")
    return r["deleted"] ? `group ${r["group"]} deleted` : `no group named ${r["group"]}`;
  return fields(
    Object.entries(r).map(([k, v]) => [k, typeof v === "object" && v !== null ? JSON.stringify(v) : v]),
  );
}

function humanWatchStatus(s: WatchStatus): string {
  return fields([
    ["events kept", s.count],
    ["newest event", s.last_id],
    ["oldest event", s.oldest_id === null ? "none" : `${s.oldest_id} (${when(s.oldest_time)})`],
    [
      "kept for",
      s.retention_seconds % 86_400 === 0
        ? `${s.retention_seconds / 86_400} day(s)`
        : `${Math.round(s.retention_seconds / 3600)} hour(s)`,
    ],
    ["mail events", s.cache_enabled ? "on (from the cache's sync)" : "off (the cache is off)"],
    ["groups", s.groups],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Work items.

const itemFlags = (i: Item) =>
  [i.deleted ? "deleted" : "", i.ongoing ? "ongoing" : ""].filter(Boolean).join(",");

function itemList(r: { items: Item[]; revision: number; next_page_token: string | null }): string {
  return [
    r.items.length
      ? columns(
          ["ID", "TYPE", "STATE", "PRIO", "AREA", "DUE", "FLAGS", "TITLE"],
          r.items.map((i) => [i.id, i.type, i.state, i.priority, i.area, i.due_date, itemFlags(i), i.title]),
        )
      : "no items match",
    `revision ${r.revision}${r.next_page_token ? `; next page: --page ${r.next_page_token}` : ""}`,
  ].join("\n");
}

function itemBlock(i: Item): string {
  const inherited = (v: string, yes: boolean) => (yes ? `${v} (inherited)` : v);
  return fields([
    ["id", i.id],
    ["title", i.title],
    ["type", i.type],
    ["state", i.state],
    ["priority", inherited(i.priority, i.priority_inherited)],
    ["area", inherited(i.area, i.area_inherited)],
    ["parent", i.parent_id ?? "none"],
    ["start", i.start_date ?? undefined],
    ["due", i.due_date ?? undefined],
    ["estimate", i.estimate ?? undefined],
    ["ongoing", i.ongoing ? "yes" : undefined],
    ["deleted", i.deleted ? when(i.deleted_at) : undefined],
    ["created", when(i.created_at)],
    ["updated", `${when(i.updated_at)} (revision ${i.revision})`],
  ]);
}

const criterionLine = (c: Criterion) =>
  `[${c.ticked ? "x" : " "}] ${c.id}  ${cell(c.text)}${c.ticked && c.evidence ? ` (evidence: ${cell(c.evidence)})` : ""}`;

const summaryLine = (s: ItemSummary) =>
  `${s.id}  ${s.type}  ${s.state}${s.deleted ? "  deleted" : ""}  ${cell(s.title)}`;

function section(title: string, lines: string[], total?: number): string[] {
  if (lines.length === 0) return [];
  const more = total !== undefined && total > lines.length ? ` (${lines.length} of ${total} shown)` : "";
  return ["", `${title}${more}:`, ...lines.map((l) => `  ${l}`)];
}

function itemDetail(d: ItemDetail): string {
  return [
    itemBlock(d.item),
    ...(d.item.description ? ["", d.item.description] : []),
    ...section("criteria", d.criteria.map(criterionLine)),
    ...section("ancestors", d.ancestors.map(summaryLine)),
    ...section("children", d.children.map(summaryLine), d.children_total),
    ...section("blocked by", d.blocked_by.map(summaryLine)),
    ...section("blocks", d.blocks.map(summaryLine)),
    ...section(
      "threads",
      d.threads.map(
        (t) =>
          `${t.account}  ${t.thread_key}${t.note ? `  note: ${cell(t.note)}` : ""}${t.latest ? `\n    latest: ${when(t.latest.date)}  ${cell(t.latest.from)}  ${cell(t.latest.subject)}  ${t.latest.ref}` : ""}`,
      ),
      d.threads_total,
    ),
  ].join("\n");
}

/** The text of each `item` sub-command's result, told apart by its fields. */
export function humanItems(r: Record<string, unknown>): string {
  if (Array.isArray(r["items"])) return itemList(r as unknown as Parameters<typeof itemList>[0]);
  if (Array.isArray(r["ancestors"])) return itemDetail(r as unknown as ItemDetail);
  const revision = `revision ${r["revision"]}`;
  if (r["item"] && Array.isArray(r["criteria"]))
    return [
      ...(r["duplicate"] ? ["already created with this key; nothing new was made", ""] : []),
      itemBlock(r["item"] as Item),
      ...section("criteria", (r["criteria"] as Criterion[]).map(criterionLine)),
    ].join("\n");
  if (r["item"]) return itemBlock(r["item"] as Item);
  if (Array.isArray(r["ids"])) return `${(r["ids"] as string[]).join(", ")}\n${revision}`;
  if (Array.isArray(r["criteria"]))
    return [...(r["criteria"] as Criterion[]).map(criterionLine), revision].join("\n");
  if (r["criterion"]) return [criterionLine(r["criterion"] as Criterion), revision].join("\n");
  if (typeof r["changed"] === "boolean")
    return `${r["changed"] ? "changed" : "already so; nothing changed"}\n${revision}`;
  if (r["link"]) {
    const l = r["link"] as ThreadLink;
    return [
      fields([
        ["linked", r["created"] ? "yes" : "already linked (note updated)"],
        ["account", l.account],
        ["thread", l.thread_key],
        ["anchor", l.anchor_message_id],
        ["note", l.note ?? undefined],
        ["at", when(l.linked_at)],
      ]),
      revision,
    ].join("\n");
  }
  return revision;
}
