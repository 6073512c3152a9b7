/** The CLI's text output (without --json): one line per row for the lists, JSON for the rest. */
import { humanItems } from "./item-command.js";
import type { CacheStatus } from "../cache/index.js";
import type { RebuildReport } from "../daemon/operations/cache.js";
import type { AdminStatus } from "../service/admin.js";

export function human(command: string, result: unknown): string {
  const r = result as Record<string, unknown>;
  switch (command) {
    case "accounts":
      return (r["accounts"] as Array<Record<string, unknown>>)
        .map(
          (a) =>
            `${a["name"]}\t${a["provider"]}\t${a["address"]}\tauth:${a["auth"]}\texpunge:${a["allow_expunge"]}\tdelete_folder:${a["allow_delete_folder"]}${a["confirmation_pending"] ? "\tconfirmation pending (chainmail policy status)" : ""}`,
        )
        .join("\n");
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
      return humanPolicy(r);
    default:
      return JSON.stringify(result, null, 2);
  }
}

function cacheStatus(status: CacheStatus): string {
  return [
    ...status.accounts.flatMap((a) => [
      `${a.account}\t${a.state}\tlast sync ${a.last_sync ?? "never"}\tdownloaded today ${a.download_today.bytes} of ${a.download_today.budget_bytes} bytes`,
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
          `config.toml: the last reload failed at ${s.config_error.at}, running on the config before it: ${s.config_error.message}`,
        ]
      : ["config.toml: loaded"]),
  ];
  for (const a of s.accounts) {
    const err = a.connection.last_error;
    const cache = a.cache
      ? `cache ${a.cache.state}, ${a.cache.complete_folders}/${a.cache.folders} folders complete, last sync ${a.cache.last_sync ?? "never"}, watching ${a.cache.watching.join(", ") || "nothing"}`
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
