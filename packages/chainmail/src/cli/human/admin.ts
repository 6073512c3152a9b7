/**
 * The text of the daemon's own state: the account test, the config error line, cache status and
 * sync, policy, admin status, audit rows, the outbox and watch groups.
 */
import type { CacheStatus } from "../../cache/index.js";
import type { AccountSyncReport } from "../../daemon/cache-runner.js";
import type { CheckResult } from "../../imap/test-account.js";
import type { AdminStatus } from "../../service/admin.js";
import type { ConfigError } from "../../service/context.js";
import type { WatchStatus } from "../../service/events.js";
import type { OutboxRow } from "../../store/outbox.js";
import type { AuditRow } from "../../store/state.js";
import { columns, errorLine, fields, when } from "./format.js";

/** A result's lines, then the config file's error while its last edit is not applied. */
export function withConfigError(lines: string[], err: ConfigError | undefined): string {
  if (!err) return lines.join("\n");
  return [
    ...lines,
    `config error since ${when(err.since)}: ${err.file}: ${err.message}`,
    "  the daemon keeps running on the last config that loaded; fix the file and it is read again on its own",
  ].join("\n");
}

export function humanTest(r: { account: string; imap: CheckResult; smtp: CheckResult }): string {
  const line = (what: string, c: CheckResult) =>
    c.skipped
      ? `${what}\tskipped (not configured)`
      : c.ok
        ? `${what}\tok`
        : `${what}\tfailed: ${c.error ? errorLine(c.error) : "unknown error"}`;
  return [`account ${r.account}`, line("imap", r.imap), line("smtp", r.smtp)].join("\n");
}

export function cacheStatus(status: CacheStatus): string {
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

export function humanPolicy(r: Record<string, unknown>): string {
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

export function adminStatus(s: AdminStatus): string {
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

export function humanAudit(rows: AuditRow[]): string {
  if (rows.length === 0) return "no audit rows match";
  return columns(
    ["TIME", "CLIENT", "ACTION", "ACCOUNT", "DECISION", "SUMMARY"],
    rows.map((x) => [when(x.time), x.client, x.action, x.account, x.decision, x.summary]),
  );
}

export function humanOutbox(r: Record<string, unknown>): string {
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

export function humanSync(reports: AccountSyncReport[]): string {
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

export function humanWatch(r: Record<string, unknown>): string {
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

export function humanWatchStatus(s: WatchStatus): string {
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
