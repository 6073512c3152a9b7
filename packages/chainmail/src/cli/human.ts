/** The CLI's text output (without --json): one line per row for the lists, readable text for the rest. */
import { humanItems } from "./item-command.js";
import type { CacheStatus } from "../cache/index.js";
import type { CheckResult } from "../imap/test-account.js";
import type { ComposeResult } from "../compose/result.js";
import type { Message } from "../imap/messages.js";
import type { ConfigError } from "../service/context.js";
import { noConfigText } from "./first-run.js";
import type { RebuildReport } from "../daemon/operations/cache.js";
import type { AdminStatus } from "../service/admin.js";

export interface HumanContext {
  /** The config file, named when there are no accounts yet. */
  configFile: string;
  /** Whether that file exists. */
  configExists: boolean;
}

/**
 * The text of a result for a terminal. Mail text (subjects, bodies, names, server replies) is
 * printed as it is, less the control characters a terminal would act on (escape sequences that
 * move the cursor, retitle the window or hide text) and bidi overrides; tabs and newlines stay.
 */
export function human(command: string, result: unknown, context?: HumanContext): string {
  return render(command, result, context).replace(TERMINAL_CONTROLS, "");
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

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
      return humanThread(
        r as { thread_id: string; messages: Message[]; truncated: boolean; omitted_refs: string[] },
      );
    case "send":
    case "reply":
    case "forward":
      return humanCompose(result as ComposeResult);
    case "draft":
      if (typeof r["status"] === "string") return humanCompose(result as ComposeResult);
      return humanChange(r);
    case "search":
      return [
        ...(r["rows"] as Array<Record<string, unknown>>).map(
          (x) =>
            `${x["date"] ?? ""}\t${x["account"]}\t${x["folder"]}\t${(x["from"] as { address?: string } | null)?.address ?? ""}\t${x["subject"]}\t${x["ref"]}`,
        ),
        `${r["count"]} match(es)${r["next_cursor"] ? `; next: --cursor ${r["next_cursor"]}` : ""}`,
      ].join("\n");
    case "audit":
      return (r["rows"] as Array<Record<string, unknown>>)
        .map(
          (x) =>
            `${x["time"]}\t${x["client"]}\t${x["action"]}\t${x["account"] ?? "-"}\t${x["decision"]}\t${x["summary"]}`,
        )
        .join("\n");
    case "watch":
      if (Array.isArray(r["groups"]))
        return (r["groups"] as Array<Record<string, unknown>>)
          .map((x) => `${x["name"]}	acked ${x["acked"]}	pending ${x["pending"]}	updated ${x["updated"]}`)
          .join("\n");
      return JSON.stringify(result, null, 2);
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
      return JSON.stringify(result, null, 2);
    case "send-raw":
      return [
        `${r["status"]}\t${r["message_id"] ?? ""}\tkey ${r["idempotency_key"]}`,
        ...(r["draft_ref"] ? [`held in Drafts: ${r["draft_ref"]}`] : []),
        ...(Array.isArray(r["refused_recipients"]) ? [`refused: ${r["refused_recipients"].join(", ")}`] : []),
        ...(r["hint"] ? [String(r["hint"])] : []),
      ].join("\n");
    case "item":
      return humanItems(r);
    case "admin":
      return adminStatus(result as AdminStatus);
    case "policy":
      return withConfigError([humanPolicy(r)], r["config_error"] as ConfigError | undefined);
    default:
      return JSON.stringify(result, null, 2);
  }
}

interface WireLike {
  reason: string;
  message: string;
  hint?: string;
}

const errorLine = (e: WireLike) => `${e.reason}: ${e.message}${e.hint ? ` (${e.hint})` : ""}`;

/** A result's lines, then the config file's error while its last edit is not applied. */
function withConfigError(lines: string[], err: ConfigError | undefined): string {
  if (!err) return lines.join("\n");
  return [
    ...lines,
    `config error since ${err.since}: ${err.file}: ${err.message}`,
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
    `date: ${m.date ?? "-"}`,
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

function humanThread(r: {
  thread_id: string;
  messages: Message[];
  truncated: boolean;
  omitted_refs: string[];
}): string {
  return [
    `thread ${r.thread_id}: ${r.messages.length} message(s)${r.truncated ? `, ${r.omitted_refs.length} more not shown (get them by ref: ${r.omitted_refs.join(" ")})` : ""}`,
    ...r.messages.map(humanMessage),
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
      `${a.account}\t${a.state}\tlast sync ${a.last_sync ?? "never"}\tdownloaded today ${a.download_today.bytes} of ${a.download_today.budget_bytes} bytes\tbodies since ${a.bodies_since ?? "none"}${a.body_budget_reached ? " (size bound reached; older bodies stay on the server)" : ""}`,
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
    `daemon ${d.version}\tpid ${d.pid}\tup ${d.uptime_seconds ?? "?"}s since ${d.started ?? "?"}`,
    ...(s.config_error
      ? [
          `config.toml: the last reload failed (first seen ${s.config_error.since}), running on the config before it: ${s.config_error.message}`,
        ]
      : ["config.toml: loaded"]),
  ];
  for (const a of s.accounts) {
    const err = a.connection.last_error;
    const cache = a.cache
      ? `cache ${a.cache.state}, ${a.cache.complete_folders}/${a.cache.folders} folders complete, last sync ${a.cache.last_sync ?? "never"}, watching ${a.cache.watching.join(", ") || "nothing"}${a.cache.watch === "none" ? "" : ` (${a.cache.watch})`}`
      : "cache off";
    lines.push(
      `${a.account}\tauth ${a.auth}\tconnection ${a.connection.state}${err ? ` (last error ${err.reason} at ${err.at})` : ""}\t${cache}`,
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
      ? `sends awaiting a decision: ${s.unconfirmed_sends.map((u) => `${u.key} (${u.account}, ${u.created})`).join(", ")} (chainmail outbox confirm|release KEY)`
      : "sends awaiting a decision: none",
  );
  lines.push(
    `state.db ${s.sizes.state_db_bytes} bytes\tcache.db ${s.sizes.cache_db_bytes ?? "off"}${s.sizes.cache_max_bytes !== null ? ` bytes of ${s.sizes.cache_max_bytes}` : ""}`,
  );
  return lines.join("\n");
}
